"""Answering a paused session from a fresh process: lock, load, check, resume, release.

This is the whole of "a click resumes the workflow", with nothing Slack-specific in it:

    1. take the session lock (SessionBusy: someone else is answering right now);
    2. load and verify the latest checkpoint (CheckpointNotFound / Tampered / Incompatible);
    3. check the request is still pending (UnknownRequest: stale or already answered);
    4. respond and run until the workflow pauses again or ends (a failed run keeps the request
       pending in the latest checkpoint, so a later answer can retry);
    5. release the lock, however the steps above ended.
"""

from __future__ import annotations

import asyncio
import logging
import uuid
from dataclasses import dataclass
from typing import Any

from .builder import Workflow
from .errors import CheckpointNotFound, LeaseLost, UnknownRequest
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
    response: Any,
    *,
    ttl_seconds: float = 60.0,
    owner: str | None = None,
) -> Answered:
    """Resume the session, answer ``request_id`` with ``response`` and run on, under the lock.

    Raises SessionBusy, CheckpointNotFound, CheckpointError subclasses, UnknownRequest or
    ResponseTypeMismatch before anything is written; the run's own failures are in its events.
    """
    tenant, session = checkpoints.tenant_id, checkpoints.session_id
    owner = owner or f"run:{checkpoints.run_id}:{uuid.uuid4().hex[:8]}"
    lease = await asyncio.to_thread(lock.acquire, tenant, session, owner, ttl_seconds)
    try:
        run = await Run.resume(workflow, checkpoints)
        if run is None:
            raise CheckpointNotFound(f"no session {session!r}")
        if request_id not in run.pending_requests:
            raise UnknownRequest(request_id)
        run.respond(request_id, response)
        events = [event async for event in run.watch()]
        return Answered(run, events)
    finally:
        try:
            await asyncio.to_thread(lock.release, lease)
        except LeaseLost:
            # Our lease ran out and someone took over; our writes were fenced by sequence, so
            # the chain is intact. Nothing to undo, but worth knowing about.
            log.warning("session lock was taken over before release", extra={"session": session})
