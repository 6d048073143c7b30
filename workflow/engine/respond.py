"""Answering a paused session from a fresh process: lock, load, check, resume, release.

This is the whole of "a click resumes the workflow", with nothing Slack-specific in it:

    1. take the session lock (SessionBusy: someone else is answering right now; open_session is
       the one place a lock is taken, for a start as for an answer);
    2. load and verify the latest checkpoint (CheckpointNotFound / Tampered / Incompatible);
    3. check the request is still pending (RequestAlreadyAnswered names who answered it;
       UnknownRequest: never asked) and let the caller check who may answer;
    4. respond and run until the workflow pauses again or ends (a failed run keeps the request
       pending in the latest checkpoint, so a later answer can retry);
    5. release the lock, however the steps above ended.
"""

from __future__ import annotations

import asyncio
import logging
import uuid
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from dataclasses import dataclass
from typing import Any

from workflow.errors import (
    CheckpointNotFound,
    LeaseLost,
    SessionBusy,
    StoreError,
)
from workflow.persistence.checkpoint import PendingRequest
from workflow.persistence.lock import SessionLock
from workflow.persistence.session import SessionCheckpoints

from .builder import Workflow
from .events import WorkflowEvent
from .runner import Run
from .versions import WorkflowVersions

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class Answered:
    run: Run
    events: list[WorkflowEvent]


def lock_taken_by(busy: SessionBusy) -> str:
    """Who holds the lock ``busy`` met: the ``owner`` its holder passed to :func:`open_session`
    ("" when not known: a lock changing hands, or one written without one)."""
    parts = busy.holder.rsplit(":", 2)
    return parts[0] if len(parts) == 3 and parts[0] != "anonymous" else ""


@asynccontextmanager
async def open_session(
    workflow: Workflow | WorkflowVersions,
    checkpoints: SessionCheckpoints,
    lock: SessionLock,
    *,
    owner: str = "",
    ttl_seconds: float = 60.0,
    work: str = "",
) -> AsyncIterator[Run | None]:
    """The session's lock held for the block, and its run resumed from the latest checkpoint
    (None when the session has none yet: a start). The only place a session lock is taken.
    ``work`` names what the caller does, the same for every retry of it: a retry of work whose
    earlier attempt died takes that attempt's lock over at once (``workflow.persistence.lock``).

    Raises SessionBusy or a CheckpointError before the block runs. The lock is released however
    the block ends; a lease taken over meanwhile, or a release S3 refused, is logged, not raised
    (our writes were fenced by sequence, and an unreleased lock expires with its lease).
    """
    tenant, session = checkpoints.tenant_id, checkpoints.session_id
    owner = f"{owner or 'anonymous'}:{checkpoints.run_id}:{uuid.uuid4().hex[:8]}"
    lease = await asyncio.to_thread(lock.acquire, tenant, session, owner, ttl_seconds, work)
    try:
        yield await Run.resume(workflow, checkpoints)
    finally:
        try:
            await asyncio.to_thread(lock.release, lease)
        except LeaseLost:
            log.warning("session lock was taken over before release", extra={"session": session})
        except StoreError as exc:
            # The work is done and written; a lock we could not delete expires with its lease.
            log.error("releasing the session lock failed: %s", exc, extra={"session": session})


@asynccontextmanager
async def locked_session(
    workflow: Workflow | WorkflowVersions,
    checkpoints: SessionCheckpoints,
    lock: SessionLock,
    *,
    owner: str = "",
    ttl_seconds: float = 60.0,
) -> AsyncIterator[Run]:
    """:func:`open_session` for a session that must exist: CheckpointNotFound otherwise."""
    async with open_session(
        workflow, checkpoints, lock, owner=owner, ttl_seconds=ttl_seconds
    ) as run:
        if run is None:
            raise CheckpointNotFound(f"no session {checkpoints.session_id!r}")
        yield run


async def answer_pending(
    run: Run,
    request_id: str,
    answer: Callable[[PendingRequest], Any],
    *,
    answered_by: str = "",
    check: Callable[[Run, PendingRequest], None] | None = None,
) -> Answered:
    """Answer ``request_id`` in a resumed run and run on until it pauses or ends.

    Raises RequestAlreadyAnswered (with who answered and how), UnknownRequest,
    ResponseTypeMismatch or whatever ``check`` raises, before anything is written.
    """
    request = run.pending_request(request_id)
    if check is not None:
        check(run, request)
    run.respond(request_id, answer(request), answered_by=answered_by)
    events = [event async for event in run.watch()]
    return Answered(run, events)


async def respond_in_session(
    workflow: Workflow | WorkflowVersions,
    checkpoints: SessionCheckpoints,
    lock: SessionLock,
    request_id: str,
    answer: Callable[[PendingRequest], Any],
    *,
    answered_by: str = "",
    check: Callable[[Run, PendingRequest], None] | None = None,
    ttl_seconds: float = 60.0,
) -> Answered:
    """Lock, resume, answer ``request_id`` with ``answer(request)``, run on, release.

    Everything :func:`locked_session` and :func:`answer_pending` raise, before anything is
    written; the run's own failures are in its events and status.
    """
    async with locked_session(
        workflow, checkpoints, lock, owner=answered_by, ttl_seconds=ttl_seconds
    ) as run:
        return await answer_pending(run, request_id, answer, answered_by=answered_by, check=check)
