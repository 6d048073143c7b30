"""The session lock: at most one process answers a session at a time.

A :class:`Lease` is what ``acquire`` hands back and ``release`` needs: it names the owner and the
version of the lock object it holds, so nobody releases a lock they don't hold. A lease past its
expiry may be taken over by another owner; the old holder then finds out on release (LeaseLost)
and, if it tries to write, through the checkpoint fence (CheckpointConflict).

A lease may also name the *work* it does (``work``: for instance the Slack interaction a Lambda
invocation answers). A caller doing the same work again takes a live lease over at once when
it was taken at least ``retry_after`` seconds ago: the platform retries an invocation only once
it has failed (crashed, timed out), and Lambda waits about a minute before retrying an
asynchronous one ("Lambda waits one minute before the first retry", AWS Lambda developer guide,
"Error handling and automatic retries"), so such a lease belongs to an attempt that is already
dead. Without this, Lambda's first retry would meet the dead attempt's lease and give up. A
younger lease of the same work is a duplicate delivery running at this moment (Lambda's queue
"may deliver the same event more than once", even without an error): :class:`DuplicateDelivery`,
and the caller does nothing, rather than say the other's outcome a second time.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Protocol

from workflow.errors import DuplicateDelivery, LeaseLost, SessionBusy

from .store import validate_id


def busy_with(current: Lease, now: float, work: str, retry_after: float) -> SessionBusy | None:
    """Why ``current`` (the lock as found, at ``now``) cannot be taken by ``work``; None when it
    can: expired, or the same work's taken at least ``retry_after`` seconds ago (module
    docstring)."""
    if current.expires_at <= now:
        return None
    if work and current.work == work:
        if now - current.acquired_at >= retry_after:
            return None
        return DuplicateDelivery(
            f"session {current.session_id!r}: the same work is being done now", current.owner
        )
    return SessionBusy(
        f"session {current.session_id!r} is locked by {current.owner!r}", current.owner
    )


@dataclass(frozen=True)
class Lease:
    tenant_id: str
    session_id: str
    owner: str
    acquired_at: float
    expires_at: float
    version: str  # the lock object's ETag (S3) or a counter (in memory)
    work: str = ""  # what the holder is doing, stable across retries of it ("" for unnamed)


class SessionLock(Protocol):
    def acquire(
        self, tenant_id: str, session_id: str, owner: str, ttl_seconds: float, work: str = ""
    ) -> Lease:
        """Take the lock, or take over an expired one or one held for the same ``work``;
        SessionBusy when someone else holds it."""
        ...

    def release(self, lease: Lease) -> None:
        """Give the lock back; LeaseLost when it was taken over meanwhile."""
        ...

    def holder(self, tenant_id: str, session_id: str) -> Lease | None:
        """Who holds the lock now (expired or not), for display and tests."""
        ...


@contextmanager
def held(
    lock: SessionLock, tenant_id: str, session_id: str, owner: str, ttl_seconds: float
) -> Iterator[Lease]:
    """Hold the session lock for a block; released however the block ends."""
    lease = lock.acquire(tenant_id, session_id, owner, ttl_seconds)
    try:
        yield lease
    finally:
        lock.release(lease)


class InMemorySessionLock:
    def __init__(self, clock: Callable[[], float] = time.time, retry_after: float = 0.0) -> None:
        self._clock = clock
        self.retry_after = retry_after
        self._mutex = threading.Lock()
        self._held: dict[tuple[str, str], Lease] = {}
        self._versions = 0

    def acquire(
        self, tenant_id: str, session_id: str, owner: str, ttl_seconds: float, work: str = ""
    ) -> Lease:
        key = (validate_id(tenant_id, "tenant ID"), validate_id(session_id, "session ID"))
        now = self._clock()
        with self._mutex:
            current = self._held.get(key)
            busy = None if current is None else busy_with(current, now, work, self.retry_after)
            if busy is not None:
                raise busy
            self._versions += 1
            version = str(self._versions)
            lease = Lease(tenant_id, session_id, owner, now, now + ttl_seconds, version, work)
            self._held[key] = lease
            return lease

    def release(self, lease: Lease) -> None:
        key = (lease.tenant_id, lease.session_id)
        with self._mutex:
            if self._held.get(key) != lease:
                raise LeaseLost(f"lease on session {lease.session_id!r} was taken over")
            del self._held[key]

    def holder(self, tenant_id: str, session_id: str) -> Lease | None:
        with self._mutex:
            return self._held.get((tenant_id, session_id))
