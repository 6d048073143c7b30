"""Compact checkpoint bytes: the preset dictionary for checkpoint documents, the 128-bit MAC, and
records written before both still read and verify."""

from __future__ import annotations

import base64
import dataclasses
import hashlib
import hmac
import json
import uuid
import zlib
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest

from workflow.errors import CheckpointCorrupt, IncompatibleCheckpoint
from workflow.persistence.signing import CheckpointSigner
from workflow.persistence.store import CheckpointRecord, new_checkpoint_id, utcnow, uuid7
from workflow.shop.records import SHOP_DICTIONARY_1, SHOP_RECORDS

KEY = b"test-key-" * 4
DOCUMENT = (
    '{"format":1,"graph":["start write-basket"],"superstep":2,"queue":[],"requests":[{"id":"r1",'
    '"port":"approve-basket","data":{"t":"Basket","v":{"items":["3 carrots","1 bulb garlic"],'
    '"round":1}}}],"state":{},"executors":{},"answered":{},"outputs":[]}'
)


def a_record(state: str = DOCUMENT) -> CheckpointRecord:
    record = CheckpointRecord(
        id=str(uuid7()),
        checkpoint_id=new_checkpoint_id(1),
        parent_checkpoint_id=new_checkpoint_id(0),
        run_id=str(uuid7()),
        session_id="s1",
        tenant_id="T1",
        created_at=utcnow(),
        sequence=1,
        state=state,
        signature="",
    )
    return dataclasses.replace(record, signature=CheckpointSigner(KEY).sign(record))


def test_the_dictionary_bytes_never_change() -> None:
    # Records name the dictionary by its Adler-32 and need exactly these bytes to be read: an edit
    # would make every checkpoint written with it unreadable. Add a new dictionary instead.
    assert zlib.adler32(SHOP_DICTIONARY_1) == 0xB2E09393
    assert len(SHOP_DICTIONARY_1) == 1209


def test_a_checkpoint_document_is_compressed_with_the_dictionary_and_round_trips() -> None:
    record = a_record()
    data = SHOP_RECORDS.to_bytes(record)
    assert data[1] & 0x20  # FDICT
    assert int.from_bytes(data[2:6], "big") == zlib.adler32(SHOP_DICTIONARY_1)
    content = zlib.decompressobj(zdict=SHOP_DICTIONARY_1).decompress(data)
    assert content.endswith(b"\n" + DOCUMENT.encode())
    assert len(data) < len(zlib.compress(content, 9)) - 40  # the keys and tags cost next to nothing
    assert SHOP_RECORDS.from_bytes(data, "x", "T1", "s1") == record


def test_any_other_state_is_plain_zlib() -> None:
    record = a_record(state='{"z":1}')
    data = SHOP_RECORDS.to_bytes(record)
    assert not data[1] & 0x20
    assert zlib.decompress(data).endswith(b'\n{"z":1}')
    assert SHOP_RECORDS.from_bytes(data, "x", "T1", "s1") == record


def test_an_unknown_dictionary_is_incompatible_naming_it() -> None:
    other = b'{"format":1,"graph":["start elsewhere"]'
    deflater = zlib.compressobj(9, zdict=other)
    data = deflater.compress(b'{"v":1}\n' + DOCUMENT.encode()) + deflater.flush()
    with pytest.raises(IncompatibleCheckpoint, match=f"{zlib.adler32(other):08x}"):
        SHOP_RECORDS.from_bytes(data, "x", "T1", "s1")


def test_a_damaged_dictionary_header_is_corrupt() -> None:
    data = SHOP_RECORDS.to_bytes(a_record())
    for at in (0, 1):
        damaged = data[:at] + bytes([data[at] ^ 0x01]) + data[at + 1 :]
        with pytest.raises(CheckpointCorrupt):
            SHOP_RECORDS.from_bytes(damaged, "x", "T1", "s1")


def test_the_signature_is_a_128_bit_mac() -> None:
    record = a_record()
    assert len(record.signature) == 22
    signer = CheckpointSigner(KEY)
    assert signer.verify(record)
    assert not signer.verify(dataclasses.replace(record, state=record.state.replace("3", "9")))
    assert not signer.verify(dataclasses.replace(record, signature=record.signature[:21]))
    assert not CheckpointSigner(b"another-key-0123").verify(record)


def _v1_record_bytes(record: Any, signature: str) -> bytes:
    """``record`` as record version 1 wrote it (before the MAC covered ``id`` and ``at``)."""
    line = {
        "v": 1,
        "id": record.id,
        "cp": record.checkpoint_id,
        "parent": record.parent_checkpoint_id,
        "run": record.run_id,
        "at": (record.created_at - datetime(1970, 1, 1, tzinfo=UTC)) // timedelta(milliseconds=1),
        "seq": 1,
        "sig": signature,
    }
    return zlib.compress(
        json.dumps(line, separators=(",", ":")).encode() + b"\n" + record.state.encode()
    )


def _v1_mac(record: Any, size: int = 16) -> str:
    """MAC version 1, computed here from its definition: identity and state, not id or at."""
    head = "\n".join(
        [
            "T1",
            "s1",
            record.checkpoint_id,
            record.parent_checkpoint_id or "",
            record.run_id,
            "1",
            "",
        ]
    )
    digest = hmac.new(KEY, head.encode() + record.state.encode(), hashlib.sha256).digest()
    return base64.urlsafe_b64encode(digest[:size]).rstrip(b"=").decode()


def test_a_record_of_version_1_still_reads_and_verifies() -> None:
    """Records deployed code wrote before the MAC covered the header's id and at: read as MAC
    version 1, verified as such; editing their state still fails."""
    record = a_record()
    read = SHOP_RECORDS.from_bytes(_v1_record_bytes(record, _v1_mac(record)), "x", "T1", "s1")
    assert read.mac == 1 and read.state == record.state
    assert CheckpointSigner(KEY).verify(read)
    assert not CheckpointSigner(KEY).verify(dataclasses.replace(read, state="{}"))
    assert not CheckpointSigner(KEY).verify(dataclasses.replace(read, mac=2))


def test_a_full_length_mac_reads_but_does_not_verify() -> None:
    """Every record main ever wrote carries the 128-bit MAC (the full 256-bit one never left
    the branch that introduced the short one), so a 43-character signature is not ours."""
    record = a_record()
    read = SHOP_RECORDS.from_bytes(_v1_record_bytes(record, _v1_mac(record, 32)), "x", "T1", "s1")
    assert len(read.signature) == 43
    assert not CheckpointSigner(KEY).verify(read)


def test_records_are_written_as_version_2_whose_mac_covers_id_and_at() -> None:
    record = a_record()
    data = SHOP_RECORDS.to_bytes(record)
    read = SHOP_RECORDS.from_bytes(data, "x", "T1", "s1")
    assert read == record and read.mac == 2
    assert zlib.decompressobj(zdict=SHOP_DICTIONARY_1).decompress(data).startswith(b'{"v":2,')
    signer = CheckpointSigner(KEY)
    assert signer.verify(read)
    assert not signer.verify(dataclasses.replace(read, id=str(uuid.uuid4())))
    later = read.created_at + timedelta(milliseconds=1)
    assert not signer.verify(dataclasses.replace(read, created_at=later))


def test_a_store_without_the_shop_codec_refuses_shop_records_by_name() -> None:
    from workflow.persistence.record_format import PLAIN

    data = SHOP_RECORDS.to_bytes(a_record())
    with pytest.raises(IncompatibleCheckpoint, match="dictionary b2e09393"):
        PLAIN.from_bytes(data, "x", "T1", "s1")
    record = a_record()
    assert PLAIN.from_bytes(PLAIN.to_bytes(record), "x", "T1", "s1") == record
