"""Where a Slack click becomes a workflow response.

Approve, Reject and a submitted change all arrive here, in a lazy invocation with nothing in
memory: check who may answer, then :func:`workflow.respond.locked_session` takes the session lock
and loads the latest checkpoint, :func:`workflow.respond.answer_pending` checks the click against
the pending request and resumes, and Slack is told before the lock is released. Every refusal
changes nothing and leaves no lock; the person sees a short reason.
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
from workflow.events import RequestInfoEvent, WorkflowEvent
from workflow.respond import Answered, answer_pending, locked_session
from workflow.runner import Run, RunStatus
from workflow.session import SessionCheckpoints
from workflow.shop.basket import Basket, BasketDecision, ShopRequest
from workflow.shop.graph import REQUEST_KEY, SCOPE

from .blocks import Ref
from .logs import log_context
from .post import Where, announce, describe_failure, mark_answered, outputs, post_baskets, say, tell
from .runtime import Runtime

log = logging.getLogger(__name__)

Kind = Literal["approve", "reject", "change"]
VERDICTS: dict[Kind, str] = {"approve": "Approved", "reject": "Rejected", "change": "Change asked"}

BUSY = "Someone else is answering this basket right now."
GONE = "This basket is no longer waiting for an answer."
BROKEN = (
    "This basket can't be resumed: its saved state did not pass its checks. Start again with /shop."
)
WENT_WRONG = "Something went wrong answering that; nothing was ordered twice. Try again."
UNPOSTED = "I couldn't post everything to Slack just now. Press a button above to try again."
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
                    rt.receipts.mark_shown(
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
        except Exception:  # noqa: BLE001 - Bolt would swallow it; the person must hear something
            log.exception("answering the click failed")
            announce(rt, click.channel, WENT_WRONG, thread_ts=click.message_ts)


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
    the process that answered died before telling Slack (or between two of its checkpoints, in
    which case its saved work is run on first): show the latest checkpoint's pending basket or
    the outcome, then the answer on the clicked basket, and record the receipt.
    """
    by = f" by <@{answered.answered_by}>" if answered.answered_by else ""
    receipts = rt.receipts
    shown = await asyncio.to_thread(receipts.shown, click.tenant, click.ref.session_id)
    if checkpoints.last is None or shown == checkpoints.last.checkpoint_id:
        tell(rt, click.channel, click.user, f"This basket was already answered{by}.")
        return
    log.warning("the channel is behind checkpoint %s; catching up", checkpoints.last.checkpoint_id)
    events: list[WorkflowEvent] = [e async for e in run.watch()]  # saved work left unfinished
    if run.status is RunStatus.FAILED:
        say_failed(rt, click, run)
        return
    done = run.answered[click.ref.request_id]
    verdict, note = verdict_of(done.response)
    outcome = Outcome(
        outputs=[] if run.pending_requests else [str(o) for o in run.outputs[-1:]],
        events=events or run.pending_events(),
        verdict=verdict,
        by=done.by,
        note=note,
    )
    where = Where(click.tenant, click.ref.session_id, click.channel, requester(run))
    if isinstance(done.data, Basket) and show(rt, click, where, done.data, outcome):
        receipts.mark_shown(click.tenant, click.ref.session_id, checkpoints.last.checkpoint_id)


@dataclass(frozen=True)
class Outcome:
    """What an answer did, for Slack: outputs for the thread, events with any new baskets, and
    how the answered basket is to be marked."""

    outputs: list[str]
    events: list[WorkflowEvent]
    verdict: str
    by: str
    note: str = ""


def say_failed(rt: Runtime, click: Click, run: Run) -> None:
    log.error("resumed run failed: %r", run.error)
    reason = describe_failure(run.error)
    announce(
        rt,
        click.channel,
        f"<@{click.user}> Nothing changed: {reason}. The buttons above still work.",
        thread_ts=click.message_ts,
    )


def show(rt: Runtime, click: Click, where: Where, basket: Basket, outcome: Outcome) -> bool:
    """Tell Slack what an answer did: new things first, the answered basket's update last, so
    a process that dies between the two errs toward a repeat, never toward a loss. If anything
    new could not be posted, the answered basket keeps its buttons (the way to retry).

    Returns whether the channel now shows the run's latest checkpoint.
    """
    posted = [say(rt, click.channel, text, click.message_ts) for text in outcome.outputs]
    asked = [e for e in outcome.events if isinstance(e, RequestInfoEvent)]
    if not all(posted) or len(post_baskets(rt, where, outcome.events)) != len(asked):
        announce(rt, click.channel, UNPOSTED, thread_ts=click.message_ts)
        return False
    return mark_answered(
        rt, click.channel, click.message_ts, basket, outcome.verdict, outcome.by, outcome.note
    )


def report(rt: Runtime, click: Click, where: Where, answered: Answered, basket: Basket) -> bool:
    """Tell Slack what this click's answer did; whether the channel is now up to date."""
    if answered.run.status is RunStatus.FAILED:
        say_failed(rt, click, answered.run)
        return False
    outcome = Outcome(
        outputs=outputs(answered.events),
        events=answered.events,
        verdict=VERDICTS[click.kind],
        by=click.user,
        note=click.change,
    )
    return show(rt, click, where, basket, outcome)
