"""The checkpoint store contract, one suite run against every backend (memory, folder, S3/moto).

Also SessionCheckpoints over each backend: lineage across runs, and signature checks.
"""

from __future__ import annotations

import dataclasses
import shutil
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest

from workflow.errors import CheckpointConflict, CheckpointTampered, InvalidIdentifier
from workflow.persistence.folder_store import FolderCheckpointStore
from workflow.persistence.memory_store import InMemoryCheckpointStore
from workflow.persistence.s3_store import S3CheckpointStore
from workflow.persistence.session import SessionCheckpoints
from workflow.persistence.signing import CheckpointSigner
from workflow.persistence.store import (
    CheckpointInfo,
    CheckpointRecord,
    CheckpointStore,
    new_checkpoint_id,
    uuid7,
)

TENANT = "acme"
OTHER_TENANT = "globex"
SESSION = "sess-1"
RUN_A = str(uuid7())
RUN_B = str(uuid7())
# Checkpoint times are kept to the millisecond (workflow.persistence.store.utcnow makes them so).
T0 = datetime(2025, 1, 6, 9, 30, 15, 123000, tzinfo=UTC)

# (source tenant, source session, sequence, target tenant, target session): copy the stored
# bytes of one checkpoint somewhere else, as somebody with access to the storage could.
RawCopy = Callable[[str, str, int, str, str], None]


@dataclass
class Backend:
    name: str
    store: CheckpointStore
    copy_raw: RawCopy


def _memory_backend() -> Backend:
    store = InMemoryCheckpointStore()

    def copy_raw(tenant: str, session: str, seq: int, to_tenant: str, to_session: str) -> None:
        # The memory store's "storage" is its dict; copy the record object as it is.
        record = next(r for r in store._sessions[(tenant, session)] if r.sequence == seq)
        store._sessions.setdefault((to_tenant, to_session), []).append(record)

    return Backend("memory", store, copy_raw)


def _folder_backend(root: Path) -> Backend:
    store = FolderCheckpointStore(root)

    def copy_raw(tenant: str, session: str, seq: int, to_tenant: str, to_session: str) -> None:
        target = root / to_tenant / to_session
        target.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(root / tenant / session / f"{seq:06d}.ckpt", target / f"{seq:06d}.ckpt")

    return Backend("folder", store, copy_raw)


def _s3_backend(s3: Any, bucket: str) -> Backend:
    store = S3CheckpointStore(bucket, prefix="ws/", s3_client=s3)

    def copy_raw(tenant: str, session: str, seq: int, to_tenant: str, to_session: str) -> None:
        s3.copy_object(
            Bucket=bucket,
            Key=store.keys.checkpoint(to_tenant, to_session, seq),
            CopySource={"Bucket": bucket, "Key": store.keys.checkpoint(tenant, session, seq)},
        )

    return Backend("s3", store, copy_raw)


@pytest.fixture(params=["memory", "folder", "s3"])
def backend(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[Backend]:
    if request.param == "memory":
        yield _memory_backend()
    elif request.param == "folder":
        made = _folder_backend(tmp_path / "store")
        yield made
        made.store.close()  # type: ignore[attr-defined]
    else:
        yield _s3_backend(request.getfixturevalue("s3"), request.getfixturevalue("bucket"))


@pytest.fixture
def store(backend: Backend) -> CheckpointStore:
    return backend.store


def record(
    sequence: int = 0,
    *,
    tenant: str = TENANT,
    session: str = SESSION,
    run: str = RUN_A,
    state: str = '{"step":0}',
    parent: str | None = None,
    created_at: datetime | None = None,
    signature: str = "not-checked-by-stores",
) -> CheckpointRecord:
    return CheckpointRecord(
        id=str(uuid7()),
        checkpoint_id=new_checkpoint_id(sequence),
        parent_checkpoint_id=parent,
        run_id=run,
        session_id=session,
        tenant_id=tenant,
        created_at=created_at or T0 + timedelta(seconds=sequence),
        sequence=sequence,
        state=state,
        signature=signature,
    )


def chain(store: CheckpointStore, count: int, **kwargs: Any) -> list[CheckpointRecord]:
    """``count`` records written one after the other, each naming the previous as parent."""
    written: list[CheckpointRecord] = []
    for seq in range(count):
        parent = written[-1].checkpoint_id if written else None
        written.append(
            store.create(record(seq, parent=parent, state=f'{{"step":{seq}}}', **kwargs))
        )
    return written


# -- create, latest, read, list, list_by_run, delete -------------------------------------------


def test_an_empty_session_has_nothing(store: CheckpointStore) -> None:
    assert store.latest(TENANT, SESSION) is None
    assert store.read(TENANT, SESSION, new_checkpoint_id(0)) is None
    assert store.list(TENANT, SESSION) == []
    assert store.list_by_run(TENANT, RUN_A) == []
    assert store.delete(TENANT, SESSION) == 0


def test_create_then_latest_read_and_list(store: CheckpointStore) -> None:
    first, second, third = record(0), record(1), record(2)
    # Written out of order: the order of the answers comes from the sequence, not the writes.
    for r in (first, third, second):
        assert store.create(r) == r

    assert store.latest(TENANT, SESSION) == third
    for r in (first, second, third):
        assert store.read(TENANT, SESSION, r.checkpoint_id) == r

    listed = store.list(TENANT, SESSION)
    assert listed == [first.info, second.info, third.info]
    # Metadata only: no payload, no signature.
    assert all(type(info) is CheckpointInfo for info in listed)
    assert not any(hasattr(info, "state") for info in listed)


def test_list_by_run_returns_one_runs_checkpoints_oldest_first(store: CheckpointStore) -> None:
    a0 = store.create(record(0, run=RUN_A))
    a1 = store.create(record(1, run=RUN_A, parent=a0.checkpoint_id))
    # The same run also wrote to a second session, between the other two.
    a_other = store.create(
        record(0, session="sess-2", run=RUN_A, created_at=T0 + timedelta(milliseconds=500))
    )
    b2 = store.create(record(2, run=RUN_B, parent=a1.checkpoint_id))

    assert store.list_by_run(TENANT, RUN_A) == [a0.info, a_other.info, a1.info]
    assert store.list_by_run(TENANT, RUN_B) == [b2.info]
    assert store.list_by_run(TENANT, str(uuid7())) == []
    assert all(type(info) is CheckpointInfo for info in store.list_by_run(TENANT, RUN_A))


def test_delete_removes_one_session_and_returns_the_count(store: CheckpointStore) -> None:
    chain(store, 3)
    kept = store.create(record(0, session="sess-2"))

    assert store.delete(TENANT, SESSION) == 3

    assert store.latest(TENANT, SESSION) is None
    assert store.list(TENANT, SESSION) == []
    assert store.list_by_run(TENANT, RUN_A) == [kept.info]
    assert store.latest(TENANT, "sess-2") == kept
    assert store.delete(TENANT, SESSION) == 0


def test_a_deleted_session_starts_again_from_sequence_zero(store: CheckpointStore) -> None:
    chain(store, 2)
    store.delete(TENANT, SESSION)
    again = store.create(record(0, run=RUN_B))
    assert store.latest(TENANT, SESSION) == again
    assert store.list(TENANT, SESSION) == [again.info]


@pytest.mark.parametrize(
    "state",
    [
        '{"z":1,"a":{"y":2,"b":3}}',
        '{"z": 1, "a": {"y": 2, "b": 3}}',
        '{"note":"Crème fraîche, 寿司, Ärger über 🥦"}',
        '{\n  "pretty": true,\n  "escaped": "\\u00e9\\n"\n}\n',
        "",
    ],
    ids=["compact-key-order", "spaced", "non-ascii", "newlines-and-escapes", "empty"],
)
def test_state_is_kept_byte_for_byte(store: CheckpointStore, state: str) -> None:
    written = store.create(record(0, state=state))
    for got in (store.latest(TENANT, SESSION), store.read(TENANT, SESSION, written.checkpoint_id)):
        assert got is not None
        assert got.state == state
        assert got.state.encode() == state.encode()


@pytest.mark.parametrize(
    "at",
    [
        datetime(2025, 3, 30, 1, 59, 59, 987000, tzinfo=UTC),
        # Float milliseconds (int(ts.timestamp() * 1000)) would give this one back as .471.
        datetime(2004, 3, 15, 7, 55, 47, 472000, tzinfo=UTC),
        datetime(2039, 3, 8, 19, 46, 13, 411000, tzinfo=UTC),
        datetime(1970, 1, 1, tzinfo=UTC),
    ],
    ids=str,
)
def test_created_at_round_trips_in_utc(store: CheckpointStore, at: datetime) -> None:
    store.create(record(0, created_at=at))

    latest = store.latest(TENANT, SESSION)
    assert latest is not None
    infos = store.list(TENANT, SESSION) + store.list_by_run(TENANT, RUN_A)
    for got in [latest.created_at] + [i.created_at for i in infos]:
        assert got == at
        assert got.utcoffset() == timedelta(0)


def test_a_second_record_at_the_same_sequence_conflicts(store: CheckpointStore) -> None:
    first = store.create(record(0))
    winner = store.create(record(1, parent=first.checkpoint_id, state='{"writer":"A"}'))
    loser = record(1, parent=first.checkpoint_id, run=RUN_B, state='{"writer":"B"}')

    with pytest.raises(CheckpointConflict):
        store.create(loser)

    assert store.latest(TENANT, SESSION) == winner
    assert store.read(TENANT, SESSION, winner.checkpoint_id) == winner
    assert store.read(TENANT, SESSION, loser.checkpoint_id) is None
    assert store.list(TENANT, SESSION) == [first.info, winner.info]
    assert store.list_by_run(TENANT, RUN_B) == []


def test_a_replayed_superstep_is_stored_again_at_least_once(store: CheckpointStore) -> None:
    parent = store.create(record(0))
    # The same superstep checkpointed twice (a retry after a crash): same parent, same state,
    # a new sequence. No dedupe: both are kept.
    once = store.create(record(1, parent=parent.checkpoint_id, state='{"step":1}'))
    twice = store.create(record(2, parent=parent.checkpoint_id, state='{"step":1}'))

    assert store.list(TENANT, SESSION) == [parent.info, once.info, twice.info]
    assert store.latest(TENANT, SESSION) == twice
    assert store.read(TENANT, SESSION, once.checkpoint_id) == once


def test_another_tenant_sees_nothing(store: CheckpointStore) -> None:
    mine = chain(store, 2)

    assert store.read(OTHER_TENANT, SESSION, mine[0].checkpoint_id) is None
    assert store.latest(OTHER_TENANT, SESSION) is None
    assert store.list(OTHER_TENANT, SESSION) == []
    assert store.list_by_run(OTHER_TENANT, RUN_A) == []
    assert store.delete(OTHER_TENANT, SESSION) == 0

    assert store.list(TENANT, SESSION) == [r.info for r in mine]
    assert store.latest(TENANT, SESSION) == mine[-1]


def test_tenants_with_the_same_session_id_do_not_collide(store: CheckpointStore) -> None:
    mine = store.create(record(0, state='{"who":"acme"}'))
    theirs = store.create(record(0, tenant=OTHER_TENANT, state='{"who":"globex"}'))

    assert store.latest(TENANT, SESSION) == mine
    assert store.latest(OTHER_TENANT, SESSION) == theirs
    assert store.read(OTHER_TENANT, SESSION, mine.checkpoint_id) is None
    assert store.list_by_run(OTHER_TENANT, RUN_A) == [theirs.info]
    assert store.delete(OTHER_TENANT, SESSION) == 1
    assert store.latest(TENANT, SESSION) == mine


@pytest.mark.parametrize(
    "session",
    ["index.jsonl", "lock", "cp", "r", "C0123ABC:1712345678.000100", "a" * 128],
)
def test_valid_ids_that_look_like_layout_names(store: CheckpointStore, session: str) -> None:
    written = chain(store, 2, session=session)
    neighbour = store.create(record(0, session="neighbour", created_at=T0 + timedelta(minutes=1)))

    assert store.latest(TENANT, session) == written[-1]
    assert store.list(TENANT, session) == [r.info for r in written]
    assert store.list_by_run(TENANT, RUN_A) == [written[0].info, written[1].info, neighbour.info]
    assert store.delete(TENANT, session) == 2
    assert store.latest(TENANT, "neighbour") == neighbour


BAD_IDS = [
    "a/b",
    "/abs",
    "..",
    "a..b",
    "nul\x00byte",
    "line\nbreak",
    "trailing-newline\n",
    "tab\t",
    "",
    "x" * 200,
    "-leading-dash",
    ".hidden",
    "space in",
    "é",
]


@pytest.mark.parametrize("bad", BAD_IDS, ids=repr)
def test_an_unsafe_id_is_refused_by_every_operation(store: CheckpointStore, bad: str) -> None:
    cp = new_checkpoint_id(0)
    operations: dict[str, Callable[[], object]] = {
        "create tenant": lambda: store.create(record(0, tenant=bad)),
        "create session": lambda: store.create(record(0, session=bad)),
        "create run": lambda: store.create(record(0, run=bad)),
        "latest tenant": lambda: store.latest(bad, SESSION),
        "latest session": lambda: store.latest(TENANT, bad),
        "read tenant": lambda: store.read(bad, SESSION, cp),
        "read session": lambda: store.read(TENANT, bad, cp),
        "read checkpoint": lambda: store.read(TENANT, SESSION, bad),
        "list tenant": lambda: store.list(bad, SESSION),
        "list session": lambda: store.list(TENANT, bad),
        "list_by_run tenant": lambda: store.list_by_run(bad, RUN_A),
        "list_by_run run": lambda: store.list_by_run(TENANT, bad),
        "delete tenant": lambda: store.delete(bad, SESSION),
        "delete session": lambda: store.delete(TENANT, bad),
    }
    for name, operation in operations.items():
        with pytest.raises(InvalidIdentifier):
            operation()
            pytest.fail(f"{name} accepted {bad!r}")

    # Nothing was written on the way, not even half of a record.
    assert store.latest(TENANT, SESSION) is None
    assert store.list(TENANT, SESSION) == []


@pytest.mark.parametrize(
    "checkpoint_id",
    ["1", "000001", "000001-abcdef1", "000001-ABCDEF12", "000001-abcdef12\n", "../000001-abcdef12"],
)
def test_a_malformed_checkpoint_id_is_refused(store: CheckpointStore, checkpoint_id: str) -> None:
    store.create(record(1))
    with pytest.raises(InvalidIdentifier):
        store.read(TENANT, SESSION, checkpoint_id)


def test_a_record_whose_id_does_not_carry_its_sequence_is_refused(store: CheckpointStore) -> None:
    mislabelled = dataclasses.replace(record(3), checkpoint_id=new_checkpoint_id(4))
    with pytest.raises(InvalidIdentifier):
        store.create(mislabelled)
    assert store.latest(TENANT, SESSION) is None


def test_reading_an_absent_checkpoint_gives_none(store: CheckpointStore) -> None:
    written = store.create(record(0))
    assert store.read(TENANT, SESSION, new_checkpoint_id(7)) is None
    # Same sequence, different random part: not this checkpoint either.
    other = next(c for c in ("000000-00000000", "000000-11111111") if c != written.checkpoint_id)
    assert store.read(TENANT, SESSION, other) is None
    assert store.read(TENANT, "no-such-session", written.checkpoint_id) is None


# -- SessionCheckpoints over each backend -------------------------------------------------------


def session(store: CheckpointStore, signer: CheckpointSigner, **kw: str) -> SessionCheckpoints:
    return SessionCheckpoints(store, signer, kw.get("tenant", TENANT), kw.get("session", SESSION))


async def test_a_new_run_continues_the_chain_it_loaded(
    store: CheckpointStore, signer: CheckpointSigner
) -> None:
    first_run = session(store, signer)
    assert await first_run.load() is None
    cp0 = await first_run.save('{"basket":[]}')
    cp1 = await first_run.save('{"basket":["milk"]}')

    second_run = session(store, signer)
    assert await second_run.load() == (cp1, '{"basket":["milk"]}')
    cp2 = await second_run.save('{"basket":["milk","eggs"]}')
    cp3 = await second_run.save('{"basket":["milk","eggs","tea"]}')

    assert second_run.run_id != first_run.run_id
    saved = {cp: store.read(TENANT, SESSION, cp) for cp in (cp0, cp1, cp2, cp3)}
    parents = {cp: r.parent_checkpoint_id for cp, r in saved.items() if r is not None}
    assert parents == {cp0: None, cp1: cp0, cp2: cp1, cp3: cp2}
    assert [r.sequence for r in saved.values() if r is not None] == [0, 1, 2, 3]

    assert [i.checkpoint_id for i in store.list_by_run(TENANT, first_run.run_id)] == [cp0, cp1]
    assert [i.checkpoint_id for i in store.list_by_run(TENANT, second_run.run_id)] == [cp2, cp3]
    assert [i.checkpoint_id for i in await second_run.history()] == [cp0, cp1, cp2, cp3]


async def test_loading_a_named_older_checkpoint_continues_after_the_latest(
    store: CheckpointStore, signer: CheckpointSigner
) -> None:
    first_run = session(store, signer)
    cp0 = await first_run.save('{"v":0}')
    await first_run.save('{"v":1}')

    rewind = session(store, signer)
    assert await rewind.load(cp0) == (cp0, '{"v":0}')
    cp2 = await rewind.save('{"v":"2 from 0"}')

    written = store.read(TENANT, SESSION, cp2)
    assert written is not None
    assert (written.parent_checkpoint_id, written.sequence) == (cp0, 2)


async def test_a_state_edited_after_signing_is_tampered(
    store: CheckpointStore, signer: CheckpointSigner
) -> None:
    good = session(store, signer)
    await good.save('{"total":12.5}')
    assert good.last is not None

    unsigned = record(1, run=good.run_id, parent=good.last.checkpoint_id, state='{"total":12.5}')
    signed = dataclasses.replace(unsigned, signature=signer.sign(unsigned))
    assert signer.verify(signed)
    edited = dataclasses.replace(signed, state='{"total":0.01}')
    store.create(edited)

    with pytest.raises(CheckpointTampered) as caught:
        await session(store, signer).load()
    assert caught.value.checkpoint_id == edited.checkpoint_id
    assert edited.checkpoint_id in str(caught.value)


async def test_a_checkpoint_signed_with_another_key_is_tampered(
    store: CheckpointStore, signer: CheckpointSigner
) -> None:
    await session(store, CheckpointSigner(b"another-key-" * 3)).save('{"total":1}')

    with pytest.raises(CheckpointTampered):
        await session(store, signer).load()


async def test_a_named_older_checkpoint_is_verified_too(
    store: CheckpointStore, signer: CheckpointSigner
) -> None:
    unsigned = record(0, state='{"x":1}')
    store.create(dataclasses.replace(unsigned, signature=signer.sign(unsigned), state='{"x":2}'))
    fine = record(1, parent=unsigned.checkpoint_id)
    store.create(dataclasses.replace(fine, signature=signer.sign(fine)))

    assert await session(store, signer).load() == (fine.checkpoint_id, fine.state)
    with pytest.raises(CheckpointTampered) as caught:
        await session(store, signer).load(unsigned.checkpoint_id)
    assert caught.value.checkpoint_id == unsigned.checkpoint_id


@pytest.mark.parametrize(
    ("to_tenant", "to_session"), [(TENANT, "sess-copy"), (OTHER_TENANT, SESSION)]
)
async def test_stored_bytes_copied_elsewhere_do_not_load(
    backend: Backend, signer: CheckpointSigner, to_tenant: str, to_session: str
) -> None:
    await session(backend.store, signer).save('{"basket":["caviar"]}')
    backend.copy_raw(TENANT, SESSION, 0, to_tenant, to_session)

    target = session(backend.store, signer, tenant=to_tenant, session=to_session)
    try:
        loaded = await target.load()
    except CheckpointTampered:
        return
    assert loaded is None  # the backend treats a record naming another session as missing


@pytest.mark.parametrize(
    ("to_tenant", "to_session"), [(TENANT, "sess-copy"), (OTHER_TENANT, SESSION)]
)
async def test_a_record_relabelled_for_another_session_is_tampered(
    store: CheckpointStore, signer: CheckpointSigner, to_tenant: str, to_session: str
) -> None:
    original = session(store, signer)
    await original.save('{"basket":["caviar"]}')
    assert original.last is not None
    store.create(dataclasses.replace(original.last, tenant_id=to_tenant, session_id=to_session))

    with pytest.raises(CheckpointTampered):
        await session(store, signer, tenant=to_tenant, session=to_session).load()
