"""Where a Slack click becomes a workflow response.

Approve, Reject and a submitted change all arrive here, in a lazy invocation with nothing in
memory: check who may answer, then :func:`workflow.respond.respond_in_session` takes the session
lock, loads the latest checkpoint, checks the click against the pending request and resumes. Every
refusal changes nothing and leaves no lock; the person sees a short reason.
"""

from __future__ import annotations

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
from workflow.respond import Answered, respond_in_session
from workflow.runner import Run, RunStatus
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
    """Resume the clicked basket's session with the person's answer, and report in Slack."""
    ref = click.ref
    with log_context(tenant=click.tenant, session=ref.session_id, request=ref.request_id):
        refusal = may_answer(rt, click.user)
        if refusal:
            tell(rt, click.channel, click.user, refusal)
            return
        answered_basket: list[Basket] = []
        asked_by: list[str] = []

        def check(run: Run, request: PendingRequest) -> None:
            asked_by.append(requester(run))
            if (
                rt.settings.no_self_approval
                and click.kind == "approve"
                and click.user == asked_by[0]
            ):
                raise Refused("You asked for this basket, so someone else has to approve it.")
            if isinstance(request.data, Basket):
                answered_basket.append(request.data)

        def decide(request: PendingRequest) -> BasketDecision:
            return BasketDecision(
                approved=click.kind == "approve",
                change=click.change if click.kind == "change" else None,
                round=request.data.round,
            )

        try:
            answered = await respond_in_session(
                rt.workflow(),
                rt.checkpoints(click.tenant, ref.session_id),
                rt.lock,
                ref.request_id,
                decide,
                answered_by=click.user,
                check=check,
                ttl_seconds=rt.settings.lock_ttl_seconds,
            )
        except Refused as exc:
            tell(rt, click.channel, click.user, str(exc))
        except SessionBusy:
            tell(rt, click.channel, click.user, BUSY)
        except RequestAlreadyAnswered as exc:
            by = f" by <@{exc.answered_by}>" if exc.answered_by else ""
            tell(rt, click.channel, click.user, f"This basket was already answered{by}.")
        except (UnknownRequest, CheckpointNotFound, InvalidIdentifier):
            tell(rt, click.channel, click.user, GONE)
        except CheckpointError as exc:
            log.error("checkpoint refused: %s", exc)
            announce(rt, click.channel, BROKEN, thread_ts=click.message_ts)
        except StoreError as exc:
            log.error("store failed: %s", exc)
            announce(rt, click.channel, STORE_DOWN, thread_ts=click.message_ts)
        else:
            where = Where(click.tenant, ref.session_id, click.channel, asked_by[0])
            report(rt, click, where, answered, answered_basket[0])


def report(rt: Runtime, click: Click, where: Where, answered: Answered, basket: Basket) -> None:
    if answered.run.status is RunStatus.FAILED:
        log.error("resumed run failed: %r", answered.run.error)
        reason = describe_failure(answered.run.error)
        announce(
            rt,
            click.channel,
            f"<@{click.user}> Nothing changed: {reason}. The buttons above still work.",
            thread_ts=click.message_ts,
        )
        return
    verdict = VERDICTS[click.kind]
    mark_answered(rt, click.channel, click.message_ts, basket, verdict, click.user, click.change)
    for text in outputs(answered.events):
        say(rt, click.channel, text, thread_ts=click.message_ts)
    post_baskets(rt, where, answered.events)
