"""Where a Slack click becomes a workflow response.

Approve, Reject and a submitted change all arrive here, in a lazy invocation with nothing in
memory: check who may answer, then :func:`workflow.respond.respond_in_session` takes the session
lock, loads the latest checkpoint, checks the click against the pending request and resumes. Every
refusal changes nothing and leaves no lock; the person sees a short reason.
"""

from __future__ import annotations

import asyncio
import logging
from dataclasses import dataclass
from typing import Literal

from workflow.checkpoint import PendingRequest
from workflow.errors import (
    CheckpointError,
    CheckpointNotFound,
    InvalidIdentifier,
    RequestAlreadyAnswered,
    SessionBusy,
    StoreError,
    UnknownRequest,
)
from workflow.events import RequestInfoEvent
from workflow.respond import Answered, answer_pending, locked_session
from workflow.runner import Run, RunStatus
from workflow.session import SessionCheckpoints
from workflow.shop.basket import Basket, BasketDecision, ShopRequest
from workflow.shop.graph import REQUEST_KEY, SCOPE

from .blocks import Ref
from .logs import log_context
from .post import Where, announce, describe_failure, mark_answered, outputs, post_baskets, say, tell
from .receipts import for_runtime
from .runtime import Runtime

log = logging.getLogger(__name__)

Kind = Literal["approve", "reject", "change"]
VERDICTS: dict[Kind, str] = {"approve": "Approved", "reject": "Rejected", "change": "Change asked"}

BUSY = "Someone else is answering this basket right now."
GONE = "This basket is no longer waiting for an answer."
BROKEN = (
    "This basket can't be resumed: its saved state did not pass its checks. Start again with /shop."
)
STORE_DOWN = "I couldn't reach the basket store, so nothing changed. Try again in a minute."


@dataclass(frozen=True)
class Click:
    tenant: str
    user: str
    channel: str
    message_ts: str
    ref: Ref
    kind: Kind
    change: str = ""


class Refused(Exception):
    """The person may not give this answer; the message says why."""


def may_answer(rt: Runtime, user: str) -> str | None:
    """A refusal for ``user`` under APPROVER_IDS, or None."""
    approvers = rt.settings.approver_ids
    if approvers and user not in approvers:
        names = ", ".join(f"<@{a}>" for a in sorted(approvers))
        return f"Only {names} can answer baskets here."
    return None


def requester(run: Run) -> str:
    request = run.read_state(REQUEST_KEY, SCOPE)
    return request.requested_by if isinstance(request, ShopRequest) else ""


async def answer_click(rt: Runtime, click: Click) -> None:
    """Resume the clicked basket's session with the person's answer, and report in Slack.

    Slack is told inside the session lock, and the receipt written last, so a process that dies
    anywhere leaves either nothing done or something the next click can repair.
    """
    ref = click.ref
    with log_context(tenant=click.tenant, session=ref.session_id, request=ref.request_id):
        refusal = may_answer(rt, click.user)
        if refusal:
            tell(rt, click.channel, click.user, refusal)
            return
        asked_by: list[str] = []

        def check(run: Run, request: PendingRequest) -> None:
            asked_by.append(requester(run))
            own = click.user == asked_by[0]
            if rt.settings.no_self_approval and click.kind == "approve" and own:
                raise Refused("You asked for this basket, so someone else has to approve it.")

        def decide(request: PendingRequest) -> BasketDecision:
            return BasketDecision(
                approved=click.kind == "approve",
                change=click.change if click.kind == "change" else None,
                round=request.data.round,
            )

        checkpoints = rt.checkpoints(click.tenant, ref.session_id)
        try:
            async with locked_session(
                rt.workflow(),
                checkpoints,
                rt.lock,
                owner=click.user,
                ttl_seconds=rt.settings.lock_ttl_seconds,
            ) as run:
                basket = run.pending_requests.get(ref.request_id)
                try:
                    answered = await answer_pending(
                        run, ref.request_id, decide, answered_by=click.user, check=check
                    )
                except RequestAlreadyAnswered as exc:
                    await repair_or_tell(rt, click, run, checkpoints, exc)
                    return
                where = Where(click.tenant, ref.session_id, click.channel, asked_by[0])
                assert basket is not None and isinstance(basket.data, Basket)
                delivered = report(rt, click, where, answered, basket.data)
                if delivered and checkpoints.last is not None:
                    for_runtime(rt).mark_shown(
                        click.tenant, ref.session_id, checkpoints.last.checkpoint_id
                    )
        except Refused as exc:
            tell(rt, click.channel, click.user, str(exc))
        except SessionBusy:
            tell(rt, click.channel, click.user, BUSY)
        except (UnknownRequest, CheckpointNotFound, InvalidIdentifier):
            tell(rt, click.channel, click.user, GONE)
        except CheckpointError as exc:
            log.error("checkpoint refused: %s", exc)
            announce(rt, click.channel, BROKEN, thread_ts=click.message_ts)
        except StoreError as exc:
            log.error("store failed: %s", exc)
            announce(rt, click.channel, STORE_DOWN, thread_ts=click.message_ts)


def verdict_of(decision: object) -> tuple[str, str]:
    """("Approved" / "Rejected" / "Change asked", the change) for a recorded decision."""
    if isinstance(decision, BasketDecision):
        if decision.approved:
            return "Approved", ""
        if decision.change is not None:
            return "Change asked", decision.change
    return "Rejected", ""


async def repair_or_tell(
    rt: Runtime,
    click: Click,
    run: Run,
    checkpoints: SessionCheckpoints,
    answered: RequestAlreadyAnswered,
) -> None:
    """A click on a request answered before: a stale button, or a lost report to repair.

    If the channel already shows the latest checkpoint, the person is told who answered. If not,
    the process that answered died before telling Slack: show the answer on the clicked basket,
    then the latest checkpoint's pending basket (or the outcome), and record the receipt.
    """
    by = f" by <@{answered.answered_by}>" if answered.answered_by else ""
    latest = checkpoints.last
    receipts = for_runtime(rt)
    shown = await asyncio.to_thread(receipts.shown, click.tenant, click.ref.session_id)
    if latest is None or shown == latest.checkpoint_id:
        tell(rt, click.channel, click.user, f"This basket was already answered{by}.")
        return
    log.warning("the channel is behind checkpoint %s; reposting", latest.checkpoint_id)
    done = run.answered[click.ref.request_id]
    verdict, note = verdict_of(done.response)
    where = Where(click.tenant, click.ref.session_id, click.channel, requester(run))
    pending = [
        RequestInfoEvent(r.request_id, r.port_id, r.data) for r in run.pending_requests.values()
    ]
    if pending:
        post_baskets(rt, where, [*pending])
    else:
        for text in run.outputs[-1:]:
            say(rt, click.channel, str(text), thread_ts=click.message_ts)
    if isinstance(done.data, Basket):
        mark_answered(rt, click.channel, click.message_ts, done.data, verdict, done.by, note)
    receipts.mark_shown(click.tenant, click.ref.session_id, latest.checkpoint_id)


def report(rt: Runtime, click: Click, where: Where, answered: Answered, basket: Basket) -> bool:
    """Tell Slack what the answer did: new things first, the answered basket's update last, so a
    process that dies between the two errs toward a repeat, never toward a loss.

    Returns whether the channel now shows the run's latest checkpoint.
    """
    if answered.run.status is RunStatus.FAILED:
        log.error("resumed run failed: %r", answered.run.error)
        reason = describe_failure(answered.run.error)
        announce(
            rt,
            click.channel,
            f"<@{click.user}> Nothing changed: {reason}. The buttons above still work.",
            thread_ts=click.message_ts,
        )
        return False
    delivered = all([say(rt, click.channel, t, click.message_ts) for t in outputs(answered.events)])
    asked = [e for e in answered.events if isinstance(e, RequestInfoEvent)]
    delivered = len(post_baskets(rt, where, answered.events)) == len(asked) and delivered
    verdict = VERDICTS[click.kind]
    return (
        mark_answered(
            rt, click.channel, click.message_ts, basket, verdict, click.user, click.change
        )
        and delivered
    )
