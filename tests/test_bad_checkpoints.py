"""Checkpoint bytes are a trust boundary: any change to them is refused in the thread, nothing is
ordered.
"""

from __future__ import annotations

import dataclasses
import json
import zlib
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from bot.slack.outcome import BROKEN, NEWER
from tests.bad_input_kit import (
    FUZZ,
    paused_basket,
    runtime,
)
from tests.bot_kit import (
    World,
    change,
    objects,
    start_basket,
)
from tests.fault_kit import (
    TENANT,
    ephemeral_texts,
    listener_failures,
    lock_keys,
    session_of,
    thread_texts,
)
from workflow.errors import CheckpointError
from workflow.persistence.checkpoint import FORMAT_VERSION
from workflow.persistence.record_format import RECORD_VERSION
from workflow.persistence.signing import CheckpointSigner
from workflow.persistence.store import CheckpointRecord
from workflow.shop.records import SHOP_RECORDS


@pytest.fixture
def memo() -> dict[str, Any]:
    """Somewhere to keep a value across the examples of one hypothesis test."""
    return {}


def _latest(s3: Any, bucket: str) -> str:
    return min(k for k in objects(s3, bucket) if "/cp/" in k)


def _record(raw: bytes, session: str) -> CheckpointRecord:
    return SHOP_RECORDS.from_bytes(raw, "checkpoint", TENANT, session)


def _readable(raw: bytes, session: str) -> CheckpointRecord | None:
    try:
        return _record(raw, session)
    except CheckpointError:
        return None


def _plain(record: CheckpointRecord, state: str | None = None, **header: Any) -> bytes:
    """The record in plain zlib (which every reader accepts), header fields overridden."""
    line = {
        "v": record.mac,
        "id": record.id,
        "cp": record.checkpoint_id,
        "parent": record.parent_checkpoint_id,
        "run": record.run_id,
        "at": int(record.created_at.timestamp() * 1000),
        "seq": record.sequence,
        "sig": record.signature,
        **header,
    }
    text = record.state if state is None else state
    return zlib.compress(json.dumps(line).encode() + b"\n" + text.encode())


def _resigned(record: CheckpointRecord, state: str, signer: CheckpointSigner) -> bytes:
    edited = dataclasses.replace(record, state=state)
    return SHOP_RECORDS.to_bytes(dataclasses.replace(edited, signature=signer.sign(edited)))


def _tampered(kind: str, raw: bytes, session: str) -> bytes:
    if kind == "truncated":
        return raw[: len(raw) // 2]
    if kind == "last byte cut":
        return raw[:-1]
    if kind == "bytes after the end":
        return raw + b"\x00"
    if kind == "not zlib":
        return b"PK\x03\x04 definitely not a checkpoint"
    record = _record(raw, session)
    state = record.state
    real = runtime().records.signer
    doc = json.loads(state)
    caviar = state.replace("chicken breast", "beluga caviar")
    if kind == "header not JSON":
        return zlib.compress(b"{header\n" + state.encode())
    if kind == "edited item":
        return SHOP_RECORDS.to_bytes(dataclasses.replace(record, state=caviar))
    if kind == "signed with another key":
        return _resigned(record, caviar, CheckpointSigner(b"another-key-" * 3))
    if kind == "a newer record version":
        return _plain(record, v=RECORD_VERSION + 1)
    if kind == "a newer state format":
        return _resigned(record, json.dumps({**doc, "format": FORMAT_VERSION + 1}), real)
    if kind == "a dictionary this code does not know":
        deflater = zlib.compressobj(9, zdict=b"a preset dictionary of a later release")
        return deflater.compress(_plain(record)[2:]) + deflater.flush()  # any payload will do
    if kind == "unknown type tag":
        return _resigned(record, state.replace('"t":"Basket', '"t":"Pizza'), real)
    if kind == "value of the wrong type":
        doc["requests"][0]["data"]["v"]["items"] = "everything"
        return _resigned(record, json.dumps(doc), real)
    if kind == "state not JSON":
        return _resigned(record, state[:-1], real)
    if kind == "another session's checkpoint":
        return raw  # put under another session's key by the test
    raise AssertionError(kind)


TAMPERS = [
    "truncated",
    "last byte cut",
    "bytes after the end",
    "not zlib",
    "header not JSON",
    "edited item",
    "signed with another key",
    "unknown type tag",
    "value of the wrong type",
    "state not JSON",
    "another session's checkpoint",
    "a dictionary this code does not know",
]


def _refused(world: World, basket: dict[str, Any], s3: Any, bucket: str) -> None:
    """Approve: the thread says the basket is damaged (with Start again); nothing is ordered
    or written."""
    before = objects(s3, bucket)
    said = len(thread_texts(world, basket))
    with listener_failures() as failures:
        world.click(basket, "approve_basket")
        world.run_lazies()
    assert failures == []
    assert thread_texts(world, basket)[said:] == [BROKEN]
    assert not [t for t in thread_texts(world, basket) if t.startswith("Ordered")]
    assert objects(s3, bucket) == before
    assert lock_keys(s3, bucket) == []
    assert world.buttons(world.baskets()[0])


def test_a_bad_checkpoint_is_refused_and_nothing_is_ordered(
    world: World, s3: Any, bucket: str
) -> None:
    basket = start_basket(world)
    session = session_of(world, basket)
    key = _latest(s3, bucket)
    original = s3.get_object(Bucket=bucket, Key=key)["Body"].read()
    world.shop(text="another week")
    world.run_lazies()
    other = session_of(world, world.baskets()[1])
    other_key = min(k for k in objects(s3, bucket) if f"/{other}/cp/" in k)
    theirs = s3.get_object(Bucket=bucket, Key=other_key)["Body"].read()
    for kind in TAMPERS:
        raw = theirs if kind == "another session's checkpoint" else original
        s3.put_object(Bucket=bucket, Key=key, Body=_tampered(kind, raw, session))
        _refused(world, basket, s3, bucket)
    s3.put_object(Bucket=bucket, Key=key, Body=original)  # the untouched checkpoint still works
    world.click(basket, "approve_basket")
    world.run_lazies()
    assert thread_texts(world, basket) == [BROKEN] * len(TAMPERS) + ["Ordered 10 items."]


@FUZZ
@given(data=st.data())
def test_any_change_to_a_checkpoint_is_refused(
    world: World, s3: Any, bucket: str, memo: dict[str, Any], data: st.DataObject
) -> None:
    basket = paused_basket(world)
    key = _latest(s3, bucket)
    if "original" not in memo:
        memo["original"] = s3.get_object(Bucket=bucket, Key=key)["Body"].read()
    original: bytes = memo["original"]
    session = session_of(world, basket)
    record = _record(original, session)
    how = data.draw(st.sampled_from(["cut", "flip a byte", "edit the state"]))
    if how == "cut":
        tampered = original[: data.draw(st.integers(0, len(original) - 1))]
    elif how == "flip a byte":
        at = data.draw(st.integers(0, len(original) - 1))
        bit = 1 << data.draw(st.integers(0, 7))
        tampered = original[:at] + bytes([original[at] ^ bit]) + original[at + 1 :]
        if _readable(tampered, session) == record:
            return  # a flip in the deflate stream's padding bits changes nothing that is read
    else:
        at = data.draw(st.integers(0, len(record.state) - 1))
        new = data.draw(st.text(min_size=1, max_size=5))
        edited = record.state[:at] + new + record.state[at + 1 :]
        if edited == record.state:
            return
        tampered = SHOP_RECORDS.to_bytes(dataclasses.replace(record, state=edited))
    s3.put_object(Bucket=bucket, Key=key, Body=tampered)
    _refused(world, basket, s3, bucket)


def test_an_older_checkpoint_copied_to_a_newer_key_is_refused(
    world: World, s3: Any, bucket: str
) -> None:
    """A rollback: the checkpoint that had basket 1 pending, validly signed, copied over the
    session's newest key after the change was answered. Its signature covers its own sequence,
    not the key it is read from, so only the store's sequence-against-key check stops basket 1
    from coming back to life and being approved a second time."""
    basket = start_basket(world)
    pending_key = _latest(s3, bucket)  # basket 1 pending, sequence 1
    change(world, basket, "no pizza")
    second = world.baskets()[1]
    world.click(second, "approve_basket")
    world.run_lazies()
    assert thread_texts(world, second) == ["Ordered 7 items."]
    newest = _latest(s3, bucket)
    s3.put_object(
        Bucket=bucket,
        Key=newest,
        Body=s3.get_object(Bucket=bucket, Key=pending_key)["Body"].read(),
    )
    before = objects(s3, bucket)
    world.click(basket, "approve_basket", user="U0CAROL")  # basket 1's old button
    world.run_lazies()
    assert thread_texts(world, basket)[-1] == BROKEN
    orders = [t for m in world.baskets() for t in thread_texts(world, m) if t.startswith("Ordered")]
    assert orders == ["Ordered 7 items."]
    assert objects(s3, bucket) == before
    assert lock_keys(s3, bucket) == []


NEWER_KINDS = ["a newer record version", "a newer state format"]


@pytest.mark.parametrize("kind", NEWER_KINDS)
def test_a_checkpoint_from_a_newer_version_waits_for_it(
    world: World, s3: Any, bucket: str, kind: str
) -> None:
    """Version skew during a deploy or a rollback: a checkpoint the newer code wrote is not
    tampering. The clicker is told it resumes once that version is back; nothing changes, no
    lock is left, nobody is told to start again; with the checkpoint back, the click works."""
    basket = start_basket(world)
    session = session_of(world, basket)
    key = _latest(s3, bucket)
    original = s3.get_object(Bucket=bucket, Key=key)["Body"].read()
    s3.put_object(Bucket=bucket, Key=key, Body=_tampered(kind, original, session))
    before = objects(s3, bucket)
    world.click(basket, "approve_basket")
    world.run_lazies()
    assert ephemeral_texts(world, "U0BOB") == [NEWER]
    assert thread_texts(world, basket) == []
    assert objects(s3, bucket) == before and lock_keys(s3, bucket) == []
    s3.put_object(Bucket=bucket, Key=key, Body=original)
    world.click(basket, "approve_basket")
    world.run_lazies()
    assert thread_texts(world, basket) == ["Ordered 10 items."]


def test_a_stray_object_under_cp_is_skipped_not_fatal(
    world: World, s3: Any, bucket: str, caplog: pytest.LogCaptureFixture
) -> None:
    """An object under the session's cp/ that is not a sequence (it sorts first: '.' < '0')."""
    basket = start_basket(world)
    key = _latest(s3, bucket)
    stray = key.rsplit("/", 1)[0] + "/.upload-in-progress"
    s3.put_object(Bucket=bucket, Key=stray, Body=b"not a checkpoint")
    world.click(basket, "approve_basket")
    world.run_lazies()
    assert thread_texts(world, basket) == ["Ordered 10 items."]
    assert any("not a checkpoint key" in r.getMessage() for r in caplog.records)
