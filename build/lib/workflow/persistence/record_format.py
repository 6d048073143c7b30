"""How a checkpoint record becomes bytes on disk or in S3, and back.

The bytes are a zlib stream of one JSON header line followed by the state JSON exactly as written:

    {"v":2,"id":…,"cp":…,"parent":…,"run":…,"at":<unix ms>,"seq":…,"sig":…}\\n
    {…state…}

The header's version is the signature's MAC version (``workflow.persistence.signing``): 2 covers
``id`` and ``at`` as well, 1 (records written before) did not. Both are read; 2 is written.

Tenant and session are not repeated in the bytes: the key or path they are stored under names them,
and the signature binds them, so bytes copied under another session do not verify.

Compression keeps checkpoints compact (the basket appears in a pending request and in shared state;
the second copy costs a few bytes). A workflow may give its stores a :class:`RecordCodec` with
preset dictionaries (RFC 1950 ``FDICT``): the text its checkpoint documents repeat apart from their
data (JSON keys, type tags, its graph signature), so that text costs a few bytes instead of ~240
(the weekly shop's is in ``workflow.shop.records``). A checkpoint document (a state that starts
``{"format":``) is written with the codec's newest dictionary; the zlib header names it by its
Adler-32 (``DICTID``), and a reader that does not know it refuses the record as
:class:`IncompatibleCheckpoint`. Any other state, and any codec without dictionaries, is plain
zlib. The state is never re-serialised, so its key order survives. Reading checks the header by
hand (every field, exactly these, of JSON's own types); anything else is
:class:`CheckpointCorrupt`.
"""

from __future__ import annotations

import json
import zlib
from datetime import UTC, datetime, timedelta
from typing import Any

from workflow.errors import CheckpointCorrupt, CheckpointFromNewerVersion, IncompatibleCheckpoint

from .store import CheckpointRecord
from .values import check_int, check_optional_str, check_str, fields_of

RECORD_VERSION = 2  # the header line and what follows it, inside the zlib stream
READS = (1, 2)  # every record version deployed code has written
MAX_RECORD_BYTES = 4 * 1024 * 1024
# How every checkpoint document starts, whatever its format version
# (workflow.persistence.checkpoint).
DOCUMENT_PREFIX = b'{"format":'

_FDICT = 0x20
# Milliseconds since the epoch in integers: float seconds (``timestamp() * 1000``) give some
# times back a millisecond early, e.g. 2004-03-15T07:55:47.472Z.
_EPOCH = datetime(1970, 1, 1, tzinfo=UTC)


_HEADER = ("v", "id", "cp", "parent", "run", "at", "seq", "sig")


def _checked_header(data: Any) -> dict[str, Any]:
    """The header line's fields: exactly :data:`_HEADER`, each of its type and within its
    limits; ``ValueError`` otherwise."""
    header: dict[str, Any] = fields_of(data, "the header", _HEADER, _HEADER)
    check_int(header["v"], "v")
    for key in ("id", "cp", "run"):
        check_str(header[key], key, max_length=64)
    check_optional_str(header["parent"], "parent", max_length=64)
    check_int(header["at"], "at", ge=0)
    check_int(header["seq"], "seq", ge=0)
    check_str(header["sig"], "sig", max_length=128)
    return header


class RecordCodec:
    """Records to bytes and back, with the preset dictionaries a workflow supplies (newest last).

    A dictionary's bytes must never change once records were written with it: records name it by
    its Adler-32. A better one is added after it; readers know them all, writers use the newest.
    Adding one takes two deploys: readers that know it first, then writers that use it, so code
    running beside the previous release never meets a dictionary it does not know.
    """

    def __init__(self, *dictionaries: bytes) -> None:
        self._by_id = {zlib.adler32(d): d for d in dictionaries}
        self._write = dictionaries[-1] if dictionaries else None

    def to_bytes(self, record: CheckpointRecord) -> bytes:
        header = {
            "v": record.mac,  # the header version is the MAC version the record was signed with
            "id": record.id,
            "cp": record.checkpoint_id,
            "parent": record.parent_checkpoint_id,
            "run": record.run_id,
            "at": (record.created_at - _EPOCH) // timedelta(milliseconds=1),
            "seq": record.sequence,
            "sig": record.signature,
        }
        line = json.dumps(header, separators=(",", ":")).encode()
        state = record.state.encode()
        if self._write is None or not state.startswith(DOCUMENT_PREFIX):
            return zlib.compress(line + b"\n" + state, 9)
        deflater = zlib.compressobj(9, zdict=self._write)
        return deflater.compress(line + b"\n" + state) + deflater.flush()

    def _dictionary(self, data: bytes, name: str) -> bytes | None:
        """The preset dictionary the zlib stream in ``data`` names, or None if it names none."""
        if len(data) < 6 or data[0] & 0x0F != zlib.DEFLATED or (data[0] << 8 | data[1]) % 31:
            return None  # not a zlib header: inflating says what is wrong
        if not data[1] & _FDICT:
            return None
        dictionary_id = int.from_bytes(data[2:6], "big")
        dictionary = self._by_id.get(dictionary_id)
        if dictionary is None:
            # Not "from a newer version": a new dictionary ships to readers a deploy before any
            # writer uses it, so no version this code runs beside writes one it does not know.
            raise IncompatibleCheckpoint(
                f"checkpoint {name} is compressed with dictionary {dictionary_id:08x}, "
                "which this code does not know"
            )
        return dictionary

    def from_bytes(
        self, data: bytes, name: str, tenant_id: str, session_id: str
    ) -> CheckpointRecord:
        """The record stored for ``tenant_id``/``session_id`` in ``data`` (``name``: errors)."""
        try:
            dictionary = self._dictionary(data, name)
            inflater = zlib.decompressobj(zdict=dictionary) if dictionary else zlib.decompressobj()
            raw = inflater.decompress(data, MAX_RECORD_BYTES)
            if inflater.unconsumed_tail or not inflater.eof:
                raise CheckpointCorrupt(f"checkpoint {name} is truncated or too large")
            if inflater.unused_data:
                raise CheckpointCorrupt(f"checkpoint {name} has bytes after its end")
            line, _, state = raw.partition(b"\n")
            header_data = json.loads(line)
            version = header_data.get("v") if isinstance(header_data, dict) else None
            if isinstance(version, int) and version > RECORD_VERSION:
                raise CheckpointFromNewerVersion(
                    f"checkpoint {name} has record version {version}, newer than the "
                    f"{RECORD_VERSION} this code reads"
                )
            if isinstance(header_data, dict) and version not in READS:
                raise IncompatibleCheckpoint(
                    f"checkpoint {name} has record version {header_data.get('v')!r}, "
                    f"this code reads {RECORD_VERSION}"
                )
            header = _checked_header(header_data)
            created_at = _EPOCH + timedelta(milliseconds=header["at"])
            text = state.decode("utf-8")
        except (zlib.error, ValueError, OverflowError) as exc:  # OverflowError: "at" past 9999
            raise CheckpointCorrupt(f"checkpoint {name} cannot be read: {exc}") from exc
        return CheckpointRecord(
            id=header["id"],
            checkpoint_id=header["cp"],
            parent_checkpoint_id=header["parent"],
            run_id=header["run"],
            session_id=session_id,
            tenant_id=tenant_id,
            created_at=created_at,
            sequence=header["seq"],
            state=text,
            signature=header["sig"],
            mac=header["v"],
        )


PLAIN = RecordCodec()
