"""Where a ``/shop`` command or the weekly schedule becomes a new session.

The session ID is derived from what Slack (the command's trigger ID) or EventBridge (the event ID)
sent, and the start runs under the session lock, so a redelivered lazy invocation or a retried
event finds the session already started and does nothing.
"""

from __future__ import annotations

import asyncio
import logging

from workflow.errors import SessionBusy, WorkflowError
from workflow.runner import Run, RunStatus
from workflow.shop.basket import ShopRequest

from .logs import log_context
from .post import Where, announce, describe_failure, post_baskets, say
from .runtime import Runtime

log = logging.getLogger(__name__)


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
            say(rt, where.channel, "I couldn't start a basket just now. Try /shop again.")
            return
        try:
            checkpoints = rt.checkpoints(where.tenant, where.session_id)
            if await asyncio.to_thread(rt.store.latest, where.tenant, where.session_id):
                log.info("session already started; redelivery ignored")
                return
            request = ShopRequest(text=text, requested_by=where.requested_by)
            run = Run.start(rt.workflow(), request, checkpoints)
            events = [event async for event in run.watch()]
        except WorkflowError as exc:
            log.error("starting the session failed: %s", exc)
            say(rt, where.channel, "I couldn't start a basket just now. Try /shop again.")
            return
        finally:
            await asyncio.to_thread(rt.lock.release, lease)
        if run.status is RunStatus.FAILED:
            log.error("first basket failed: %r", run.error)
            who = f"<@{where.requested_by}> " if where.requested_by else ""
            reason = describe_failure(run.error)
            announce(rt, where.channel, f"{who}No basket this time: {reason}. Try /shop again.")
            return
        post_baskets(rt, where, events)
