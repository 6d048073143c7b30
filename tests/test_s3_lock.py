"""The session lock (S3 and in memory): one holder, take-over of expired leases, fencing.

Time is a fake clock, never a sleep. The S3 races run on moto with ``atomic_moto`` (see
conftest): each S3 request atomic, as on real S3, while our code interleaves between requests.
"""

from __future__ import annotations

import dataclasses
import json
import threading
import time
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st
from pydantic import BaseModel, ConfigDict, ValidationError

from workflow.errors import CheckpointConflict, DuplicateDelivery, LeaseLost, SessionBusy
from workflow.persistence.lock import InMemorySessionLock, Lease, SessionLock, held
from workflow.persistence.memory_store import InMemoryCheckpointStore
from workflow.persistence.s3_lock import MAX_LEASE_SECONDS, S3SessionLock, _LockBody
from workflow.persistence.s3_store import S3CheckpointStore
from workflow.persistence.session import SessionCheckpoints
from workflow.persistence.signing import CheckpointSigner
from workflow.persistence.store import CheckpointStore

PREFIX = "ws/"
TENANT, SESSION = "acme", "sess-1"
TTL = 90.0
THREADS = 20


class Clock:
    def __init__(self, now: float = 1_700_000_000.0) -> None:
        self.now = now

    def __call__(self) -> float:
        return self.now


@dataclass
class Setup:
    name: str
    lock: SessionLock
    store: CheckpointStore
    clock: Clock


@pytest.fixture(params=["memory", "s3"])
def setup(request: pytest.FixtureRequest) -> Setup:
    clock = Clock()
    if request.param == "memory":
        return Setup("memory", InMemorySessionLock(clock=clock), InMemoryCheckpointStore(), clock)
    s3 = request.getfixturevalue("s3")
    bucket = request.getfixturevalue("bucket")
    return Setup(
        "s3",
        S3SessionLock(bucket, prefix=PREFIX, s3_client=s3, clock=clock),
        S3CheckpointStore(bucket, prefix=PREFIX, s3_client=s3),
        clock,
    )


@pytest.fixture
def lock(setup: Setup) -> SessionLock:
    return setup.lock


@pytest.fixture
def clock(setup: Setup) -> Clock:
    return setup.clock


def race(attempt: Callable[[int], Lease]) -> tuple[list[Lease], list[BaseException]]:
    """``attempt(i)`` in THREADS threads released together; the leases and the errors."""
    barrier = threading.Barrier(THREADS)

    def contender(i: int) -> Lease | BaseException:
        barrier.wait(timeout=30)
        try:
            return attempt(i)
        except Exception as exc:  # every outcome is collected, whatever it is
            return exc

    with ThreadPoolExecutor(max_workers=THREADS) as pool:
        outcomes = list(pool.map(contender, range(THREADS)))
    leases = [o for o in outcomes if isinstance(o, Lease)]
    errors = [o for o in outcomes if not isinstance(o, Lease)]
    return leases, errors


# -- acquire, busy, release, take over (both locks) ---------------------------------------------


def test_acquire_hands_out_a_lease(lock: SessionLock, clock: Clock) -> None:
    lease = lock.acquire(TENANT, SESSION, "alice", TTL)

    assert (lease.tenant_id, lease.session_id, lease.owner) == (TENANT, SESSION, "alice")
    assert (lease.acquired_at, lease.expires_at) == (clock.now, clock.now + TTL)
    assert lock.holder(TENANT, SESSION) == lease


def test_a_held_lock_is_busy_for_everybody(lock: SessionLock) -> None:
    lock.acquire(TENANT, SESSION, "alice", TTL)

    with pytest.raises(SessionBusy, match="'alice'"):
        lock.acquire(TENANT, SESSION, "bob", TTL)
    with pytest.raises(SessionBusy, match="'alice'"):
        lock.acquire(TENANT, SESSION, "alice", TTL)  # not re-entrant either


def test_other_sessions_and_tenants_are_not_locked(lock: SessionLock) -> None:
    lock.acquire(TENANT, SESSION, "alice", TTL)
    assert lock.acquire(TENANT, "sess-2", "bob", TTL).owner == "bob"
    assert lock.acquire("globex", SESSION, "carol", TTL).owner == "carol"


def test_release_frees_the_lock(lock: SessionLock) -> None:
    with held(lock, TENANT, SESSION, "alice", TTL) as lease:
        assert lock.holder(TENANT, SESSION) == lease

    assert lock.holder(TENANT, SESSION) is None
    assert lock.acquire(TENANT, SESSION, "bob", TTL).owner == "bob"


def test_releasing_twice_is_lease_lost(lock: SessionLock) -> None:
    lease = lock.acquire(TENANT, SESSION, "alice", TTL)
    lock.release(lease)
    with pytest.raises(LeaseLost):
        lock.release(lease)


def test_a_retry_of_the_same_work_takes_a_live_lease_over(lock: SessionLock, clock: Clock) -> None:
    """Lambda retries only a failed invocation: a live lease held for the same work belongs to
    an attempt that is dead, and its retry must not wait the lease out."""
    dead = lock.acquire(TENANT, SESSION, "attempt-1", TTL, work="click:abc")
    clock.now += 1
    retry = lock.acquire(TENANT, SESSION, "attempt-2", TTL, work="click:abc")
    assert (retry.owner, retry.work) == ("attempt-2", "click:abc")
    assert lock.holder(TENANT, SESSION) == retry
    with pytest.raises(LeaseLost):
        lock.release(dead)
    with pytest.raises(SessionBusy):  # other work, or unnamed work, still waits
        lock.acquire(TENANT, SESSION, "bob", TTL, work="click:other")
    with pytest.raises(SessionBusy):
        lock.acquire(TENANT, SESSION, "carol", TTL)
    lock.release(retry)


def test_the_same_work_at_the_same_moment_is_a_duplicate_delivery(
    lock: SessionLock, clock: Clock
) -> None:
    """With ``retry_after`` (the bot's LOCK_RETRY_AFTER_SECONDS, 30 s): a live lease of the same
    work taken less than that ago is the same event delivered twice at once (Lambda waits a
    minute before a retry: AWS Lambda developer guide, "How Lambda handles errors and retries
    with asynchronous invocation"); one taken longer ago is a dead attempt's, taken over."""
    assert isinstance(lock, InMemorySessionLock | S3SessionLock)
    lock.retry_after = 30.0
    first = lock.acquire(TENANT, SESSION, "delivery-1", TTL, work="click:abc")
    clock.now += 1
    with pytest.raises(DuplicateDelivery):
        lock.acquire(TENANT, SESSION, "delivery-2", TTL, work="click:abc")
    assert lock.holder(TENANT, SESSION) == first
    clock.now += 30  # 31 s after it was taken, still inside its lease: Lambda's retry
    retry = lock.acquire(TENANT, SESSION, "attempt-2", TTL, work="click:abc")
    assert lock.holder(TENANT, SESSION) == retry
    lock.release(retry)


def test_unnamed_work_never_takes_a_live_lease_over(lock: SessionLock) -> None:
    lock.acquire(TENANT, SESSION, "alice", TTL)
    with pytest.raises(SessionBusy):
        lock.acquire(TENANT, SESSION, "alice", TTL)


def test_a_lock_not_yet_expired_cannot_be_taken_over(lock: SessionLock, clock: Clock) -> None:
    lease = lock.acquire(TENANT, SESSION, "alice", TTL)
    clock.now = lease.expires_at - 0.001

    with pytest.raises(SessionBusy, match="'alice'"):
        lock.acquire(TENANT, SESSION, "bob", TTL)
    assert lock.holder(TENANT, SESSION) == lease


def test_an_expired_lease_is_taken_over_and_its_release_is_lease_lost(
    lock: SessionLock, clock: Clock
) -> None:
    stale = lock.acquire(TENANT, SESSION, "alice", TTL)
    clock.now = stale.expires_at  # expired from this instant on

    fresh = lock.acquire(TENANT, SESSION, "bob", TTL)
    assert (fresh.owner, fresh.acquired_at, fresh.expires_at) == ("bob", clock.now, clock.now + TTL)
    assert fresh.version != stale.version

    with pytest.raises(LeaseLost):
        lock.release(stale)
    assert lock.holder(TENANT, SESSION) == fresh  # alice's release did not remove bob's lock

    lock.release(fresh)
    assert lock.holder(TENANT, SESSION) is None


def test_twenty_contenders_one_holder(lock: SessionLock, atomic_moto: None) -> None:
    leases, errors = race(lambda i: lock.acquire(TENANT, SESSION, f"worker-{i}", TTL))

    assert len(leases) == 1
    assert len(errors) == THREADS - 1
    assert all(type(e) is SessionBusy for e in errors), errors
    assert lock.holder(TENANT, SESSION) == leases[0]


def test_twenty_contenders_for_an_expired_lease_one_takes_over(
    lock: SessionLock, clock: Clock, atomic_moto: None
) -> None:
    stale = lock.acquire(TENANT, SESSION, "crashed", TTL)
    clock.now += TTL + 1

    leases, errors = race(lambda i: lock.acquire(TENANT, SESSION, f"worker-{i}", TTL))

    assert len(leases) == 1
    assert all(type(e) is SessionBusy for e in errors), errors
    assert lock.holder(TENANT, SESSION) == leases[0]
    with pytest.raises(LeaseLost):
        lock.release(stale)


# -- the S3 lock object ---------------------------------------------------------------------------


@pytest.fixture
def s3_lock(s3: Any, bucket: str) -> tuple[S3SessionLock, Clock]:
    clock = Clock()
    return S3SessionLock(bucket, prefix=PREFIX, s3_client=s3, clock=clock), clock


LOCK_KEY = f"{PREFIX}{TENANT}/s/{SESSION}/lock"


def lock_object(s3: Any, bucket: str) -> dict[str, Any] | None:
    try:
        body = s3.get_object(Bucket=bucket, Key=f"{PREFIX}{TENANT}/s/{SESSION}/lock")["Body"]
    except s3.exceptions.NoSuchKey:
        return None
    return json.loads(body.read())  # type: ignore[no-any-return]


def test_the_lock_object_holds_owner_and_times(
    s3: Any, bucket: str, s3_lock: tuple[S3SessionLock, Clock]
) -> None:
    lock, clock = s3_lock
    lock.acquire(TENANT, SESSION, "alice@host-1", TTL)

    body = lock_object(s3, bucket)
    assert body is not None and len(body.pop("attempt")) == 16  # tells our own PUT from others'
    assert body == {
        "owner": "alice@host-1",
        "acquired_at": clock.now,
        "expires_at": clock.now + TTL,
    }


def test_no_lock_object_remains_after_release(
    s3: Any, bucket: str, s3_lock: tuple[S3SessionLock, Clock]
) -> None:
    lock, _ = s3_lock
    lock.release(lock.acquire(TENANT, SESSION, "alice", TTL))

    assert lock_object(s3, bucket) is None
    assert s3.list_objects_v2(Bucket=bucket).get("KeyCount") == 0


def test_a_stale_release_leaves_the_new_holders_object(
    s3: Any, bucket: str, s3_lock: tuple[S3SessionLock, Clock]
) -> None:
    lock, clock = s3_lock
    stale = lock.acquire(TENANT, SESSION, "alice", TTL)
    clock.now += TTL + 1
    lock.acquire(TENANT, SESSION, "bob", TTL)

    with pytest.raises(LeaseLost):
        lock.release(stale)  # DELETE If-Match: alice's ETag -> 412

    body = lock_object(s3, bucket)
    assert body is not None and body["owner"] == "bob"


def test_an_unreadable_lock_object_counts_as_expired(
    s3: Any, bucket: str, s3_lock: tuple[S3SessionLock, Clock]
) -> None:
    lock, _ = s3_lock
    s3.put_object(Bucket=bucket, Key=f"{PREFIX}{TENANT}/s/{SESSION}/lock", Body=b"\x00junk")

    assert lock.acquire(TENANT, SESSION, "bob", TTL).owner == "bob"
    body = lock_object(s3, bucket)
    assert body is not None and body["owner"] == "bob"


def test_a_lock_written_by_a_newer_version_is_honoured(
    s3: Any, bucket: str, s3_lock: tuple[S3SessionLock, Clock]
) -> None:
    """Version skew: a newer release may add fields to the lock object. It is still a live lock,
    not garbage to take over."""
    lock, clock = s3_lock
    newer = {"owner": "v2", "acquired_at": clock.now, "expires_at": clock.now + TTL}
    newer |= {"attempt": "0" * 16, "holder_version": "2.0", "fencing_token": 7}
    s3.put_object(Bucket=bucket, Key=LOCK_KEY, Body=json.dumps(newer).encode())
    with pytest.raises(SessionBusy, match="'v2'"):
        lock.acquire(TENANT, SESSION, "bob", TTL)
    assert lock_object(s3, bucket) == newer


def test_a_lock_claiming_the_far_future_expires_after_the_longest_lease(
    s3: Any, bucket: str
) -> None:
    """A lock claiming to expire in the year 2500 (a clock far ahead, a bug) counts as expiring
    MAX_LEASE_SECONDS after S3 wrote it, by S3's own clock (LastModified), not in 475 years."""
    offset = [0.0]
    lock = S3SessionLock(bucket, prefix=PREFIX, s3_client=s3, clock=lambda: time.time() + offset[0])
    year_2500 = 16_725_225_600.0
    body = {"owner": "runaway", "acquired_at": year_2500, "expires_at": year_2500 + TTL}
    s3.put_object(Bucket=bucket, Key=LOCK_KEY, Body=json.dumps(body).encode())
    with pytest.raises(SessionBusy):
        lock.acquire(TENANT, SESSION, "bob", TTL)  # still within the longest lease
    offset[0] = MAX_LEASE_SECONDS + 5
    assert lock.acquire(TENANT, SESSION, "bob", TTL).owner == "bob"


# -- fencing: an old holder whose lease was taken over cannot fork the chain --------------------


async def test_an_old_holder_cannot_save_after_the_new_holder(
    setup: Setup, signer: CheckpointSigner
) -> None:
    lock, store, clock = setup.lock, setup.store, setup.clock
    cp0 = await SessionCheckpoints(store, signer, TENANT, SESSION).save('{"v":0}')

    lease_a = lock.acquire(TENANT, SESSION, "A", TTL)
    a = SessionCheckpoints(store, signer, TENANT, SESSION)
    assert await a.load() == (cp0, '{"v":0}')

    clock.now += TTL + 1  # A stalls past its lease
    lease_b = lock.acquire(TENANT, SESSION, "B", TTL)
    b = SessionCheckpoints(store, signer, TENANT, SESSION)
    assert await b.load() == (cp0, '{"v":0}')
    cp_b = await b.save('{"by":"B"}')

    with pytest.raises(CheckpointConflict):
        await a.save('{"by":"A"}')
    with pytest.raises(LeaseLost):
        lock.release(lease_a)

    assert [i.sequence for i in store.list(TENANT, SESSION)] == [0, 1]
    latest = store.latest(TENANT, SESSION)
    assert latest is not None
    assert (latest.checkpoint_id, latest.run_id, latest.state) == (cp_b, b.run_id, '{"by":"B"}')
    assert latest.parent_checkpoint_id == cp0
    assert store.list_by_run(TENANT, a.run_id) == []
    lock.release(lease_b)


async def test_when_the_old_holder_saves_first_the_new_holder_conflicts(
    setup: Setup, signer: CheckpointSigner
) -> None:
    lock, store, clock = setup.lock, setup.store, setup.clock
    cp0 = await SessionCheckpoints(store, signer, TENANT, SESSION).save('{"v":0}')

    lease_a = lock.acquire(TENANT, SESSION, "A", TTL)
    a = SessionCheckpoints(store, signer, TENANT, SESSION)
    await a.load()
    clock.now += TTL + 1
    lease_b = lock.acquire(TENANT, SESSION, "B", TTL)
    b = SessionCheckpoints(store, signer, TENANT, SESSION)
    await b.load()

    cp_a = await a.save('{"by":"A"}')  # A's write lands before B's
    with pytest.raises(CheckpointConflict):
        await b.save('{"by":"B"}')

    assert [i.sequence for i in store.list(TENANT, SESSION)] == [0, 1]
    latest = store.latest(TENANT, SESSION)
    assert latest is not None
    assert (latest.checkpoint_id, latest.run_id, latest.state) == (cp_a, a.run_id, '{"by":"A"}')
    assert latest.parent_checkpoint_id == cp0
    assert store.list_by_run(TENANT, b.run_id) == []

    # B still holds the lock; reloading shows it A's checkpoint, after which it can go on.
    assert await b.load() == (cp_a, '{"by":"A"}')
    cp_b = await b.save('{"by":"B, after A"}')
    saved = store.read(TENANT, SESSION, cp_b)
    assert saved is not None and (saved.sequence, saved.parent_checkpoint_id) == (2, cp_a)
    lock.release(lease_b)
    with pytest.raises(LeaseLost):
        lock.release(lease_a)


class OldLockBody(BaseModel):  # workflow.persistence.s3_lock._LockBody as a pydantic model, before
    model_config = ConfigDict(extra="ignore")
    owner: str
    acquired_at: float
    expires_at: float
    attempt: str = ""


times = st.one_of(
    st.floats(),
    st.floats(min_value=-1e-3, max_value=1e-3),
    st.floats(min_value=1e9, max_value=2e10),
    st.integers(-(10**20), 10**20),
)


@given(owner=st.text(), acquired_at=times, expires_at=times, attempt=st.text(max_size=20))
def test_the_lock_object_is_written_byte_for_byte_as_before(
    owner: str, acquired_at: float, expires_at: float, attempt: str
) -> None:
    """Code deployed beside this one reads the lock object: it is what the model wrote."""
    old = OldLockBody(owner=owner, acquired_at=acquired_at, expires_at=expires_at, attempt=attempt)
    new = _LockBody(owner=owner, acquired_at=acquired_at, expires_at=expires_at, attempt=attempt)
    assert new.to_bytes() == old.model_dump_json().encode()


lock_values = st.one_of(
    st.none(), st.booleans(), times, st.text(max_size=5), st.sampled_from(["1.5", [1.0], 10**400])
)
lock_fields = st.sampled_from(["owner", "acquired_at", "expires_at", "attempt", "holder_version"])
GOOD_LOCK = {"owner": "a#b", "acquired_at": 1.0, "expires_at": 2, "attempt": "x"}


@given(
    body=st.one_of(
        st.tuples(lock_fields, lock_values).map(lambda c: {**GOOD_LOCK, c[0]: c[1]}),
        lock_fields.map(lambda k: {f: v for f, v in GOOD_LOCK.items() if f != k}),
        st.dictionaries(lock_fields, lock_values),
        lock_values,
    )
)
def test_a_lock_object_is_read_as_the_strict_model_read_it(body: Any) -> None:
    """Extra fields ignored; anything else the model refused in strict mode (or a number as a
    string, which it took in lax mode and no deployed code writes) is unreadable: expired."""
    raw = json.dumps(body).encode()
    try:
        expected: Any = OldLockBody.model_validate(json.loads(raw), strict=True).model_dump()
    except ValidationError:
        expected = None
    try:
        got: Any = dataclasses.asdict(_LockBody.from_bytes(raw))
    except ValueError:
        got = None
    assert json.dumps(got) == json.dumps(expected)  # NaN is not equal to itself; its JSON is
