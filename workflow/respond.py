"""Answering a paused session from a fresh process: lock, load, check, resume, release.

This is the whole of "a click resumes the workflow", with nothing Slack-specific in it:

    1. take the session lock (SessionBusy: someone else is answering right now);
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
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from .builder import Workflow
from .checkpoint import PendingRequest
from .errors import CheckpointNotFound, LeaseLost, RequestAlreadyAnswered, UnknownRequest
from .events import WorkflowEvent
from .lock import SessionLock
from .runner import Run
from .session import SessionCheckpoints

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class Answered:
    run: Run
    events: list[WorkflowEvent]


async def respond_in_session(
    workflow: Workflow,
    checkpoints: SessionCheckpoints,
    lock: SessionLock,
    request_id: str,
    answer: Callable[[PendingRequest], Any],
    *,
    answered_by: str = "",
    check: Callable[[Run, PendingRequest], None] | None = None,
    ttl_seconds: float = 60.0,
) -> Answered:
    """Resume the session, answer ``request_id`` with ``answer(request)`` and run on, locked.

    ``check`` may raise to refuse (e.g. the person may not answer); it sees the resumed run and
    the pending request. Raises SessionBusy, CheckpointNotFound, CheckpointError subclasses,
    RequestAlreadyAnswered, UnknownRequest, ResponseTypeMismatch or whatever ``check`` raises,
    all before anything is written; the run's own failures are in its events and status.
    """
    tenant, session = checkpoints.tenant_id, checkpoints.session_id
    owner = f"{answered_by or 'anonymous'}:{checkpoints.run_id}:{uuid.uuid4().hex[:8]}"
    lease = await asyncio.to_thread(lock.acquire, tenant, session, owner, ttl_seconds)
    try:
        run = await Run.resume(workflow, checkpoints)
        if run is None:
            raise CheckpointNotFound(f"no session {session!r}")
        request = run.pending_requests.get(request_id)
        if request is None:
            done = run.answered.get(request_id)
            if done is not None:
                raise RequestAlreadyAnswered(request_id, done.by, done.response)
            raise UnknownRequest(request_id)
        if check is not None:
            check(run, request)
        run.respond(request_id, answer(request), answered_by=answered_by)
        events = [event async for event in run.watch()]
        return Answered(run, events)
    finally:
        try:
            await asyncio.to_thread(lock.release, lease)
        except LeaseLost:
            # Our lease ran out and someone took over; our writes were fenced by sequence, so
            # the chain is intact. Nothing to undo, but worth knowing about.
            log.warning("session lock was taken over before release", extra={"session": session})
