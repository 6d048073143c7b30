"""Where a ``/shop`` command or the weekly schedule becomes a new session.

The session ID is derived from what Slack (the command's trigger ID) or EventBridge (the event ID)
sent, and the start runs under the session lock, so a redelivered lazy invocation or a retried
event finds the session already started. If the first delivery died after its checkpoint but
before the basket reached Slack (the receipt says so), the redelivery posts it; otherwise it does
nothing.
"""

from __future__ import annotations

import asyncio
import logging

from workflow.errors import SessionBusy, WorkflowError
from workflow.events import RequestInfoEvent, WorkflowEvent
from workflow.lock import Lease
from workflow.runner import Run, RunStatus
from workflow.session import SessionCheckpoints
from workflow.shop.basket import ShopRequest

from .logs import log_context
from .post import Where, announce, describe_failure, post_baskets, say
from .runtime import Runtime

log = logging.getLogger(__name__)
AGAIN = "Try /shop again."
TRY_AGAIN = f"I couldn't start a basket just now. {AGAIN}"


async def start_session(rt: Runtime, where: Where, text: str) -> None:
    """Write basket 1 for ``text`` and post it in the channel (or say why not)."""
    with log_context(tenant=where.tenant, session=where.session_id):
        try:
            lease = await asyncio.to_thread(
                rt.lock.acquire,
                where.tenant,
                where.session_id,
                f"start:{where.session_id}",
                rt.settings.lock_ttl_seconds,
            )
        except SessionBusy:
            log.info("session is being started by another invocation")
            return
        except WorkflowError as exc:
            log.error("could not lock a new session: %s", exc)
            say(rt, where.channel, TRY_AGAIN)
            return
        try:
            await _start_locked(rt, where, text)
        except WorkflowError as exc:
            log.error("starting the session failed: %s", exc)
            say(rt, where.channel, TRY_AGAIN)
        except Exception:  # noqa: BLE001 - Bolt would swallow it; the person must hear something
            log.exception("starting the session failed")
            say(rt, where.channel, TRY_AGAIN)
        finally:
            await _release(rt, lease)


async def _release(rt: Runtime, lease: Lease) -> None:
    try:
        await asyncio.to_thread(rt.lock.release, lease)
    except WorkflowError as exc:
        log.warning("releasing the session lock failed: %s", exc)


async def _start_locked(rt: Runtime, where: Where, text: str) -> None:
    checkpoints = rt.checkpoints(where.tenant, where.session_id)
    workflow = rt.workflow()
    existing = await Run.resume(workflow, checkpoints)
    if existing is not None:
        await _repost_if_lost(rt, where, existing, checkpoints)
        return
    request = ShopRequest(text=text, requested_by=where.requested_by)
    run = Run.start(workflow, request, checkpoints)
    events = [event async for event in run.watch()]
    if run.status is RunStatus.FAILED:
        log.error("first basket failed: %r", run.error)
        who = f"<@{where.requested_by}> " if where.requested_by else ""
        reason = describe_failure(run.error)
        announce(rt, where.channel, f"{who}No basket this time: {reason}. Try /shop again.")
        return
    _post_and_record(rt, where, events, checkpoints)


def _post_and_record(
    rt: Runtime, where: Where, events: list[WorkflowEvent], checkpoints: SessionCheckpoints
) -> None:
    asked = [e for e in events if isinstance(e, RequestInfoEvent)]
    if len(post_baskets(rt, where, events)) != len(asked):
        who = f"<@{where.requested_by}> " if where.requested_by else ""
        announce(rt, where.channel, f"{who}Your basket is written but I couldn't post it. {AGAIN}")
    elif checkpoints.last is not None:
        rt.receipts.mark_shown(where.tenant, where.session_id, checkpoints.last.checkpoint_id)


async def _repost_if_lost(
    rt: Runtime, where: Where, run: Run, checkpoints: SessionCheckpoints
) -> None:
    shown = await asyncio.to_thread(rt.receipts.shown, where.tenant, where.session_id)
    if checkpoints.last is None or shown == checkpoints.last.checkpoint_id:
        log.info("session already started; redelivery ignored")
        return
    log.warning("basket 1 never reached Slack; posting it now")
    events = [e async for e in run.watch()]  # the first delivery may have died mid-way
    if run.status is RunStatus.FAILED:
        log.error("finishing basket 1 failed: %r", run.error)
        announce(rt, where.channel, f"No basket this time: {describe_failure(run.error)}. {AGAIN}")
        return
    _post_and_record(rt, where, events or run.pending_events(), checkpoints)
