"""What the bot says in Slack once a run has paused or ended: events become messages.

Every message goes through the real WebClient; a Slack error while reporting is logged and never
undoes the workflow (the checkpoint is already written).
"""

from __future__ import annotations

import logging
from dataclasses import dataclass

from slack_sdk import WebClient
from slack_sdk.errors import SlackApiError

from workflow.errors import ExecutorFailed, WorkflowError
from workflow.events import OutputEvent, RequestInfoEvent, WorkflowEvent
from workflow.shop.basket import Basket, ShopProgress
from workflow.shop.shopper import ShopperStoppedEarly

from .blocks import Ref, answered_blocks, basket_blocks, escape
from .runtime import Runtime

log = logging.getLogger(__name__)

# What a Slack call can end in once slack_sdk's own retries are spent: Slack said no, or the
# network did (URLError and timeouts are OSErrors).
SLACK_FAILURES = (SlackApiError, OSError)


def slack_error(exc: BaseException) -> str:
    if isinstance(exc, SlackApiError):
        return str(exc.response.get("error"))
    return type(exc).__name__


@dataclass(frozen=True)
class Where:
    """Where a session's messages go: the channel and, for replies, the basket message."""

    tenant: str
    session_id: str
    channel: str
    requested_by: str = ""


def describe_failure(error: BaseException | None) -> str:
    """A short, safe reason for a person; details stay in the logs."""
    cause = error.cause if isinstance(error, ExecutorFailed) else error
    if isinstance(cause, ShopperStoppedEarly):
        return f"the shopper stopped early ({cause.stop_reason})"
    name = type(cause).__name__
    if name in ("OverloadedError", "RateLimitError", "InternalServerError", "APITimeoutError"):
        return "the shopper is unavailable right now"
    if name in ("APIConnectionError", "AuthenticationError", "PermissionDeniedError"):
        return "the shopper could not be reached"
    if isinstance(cause, WorkflowError):
        return "the basket could not be saved"
    return "something went wrong"


def progress_line(events: list[WorkflowEvent]) -> str:
    steps = [e for e in events if isinstance(e, ShopProgress)]
    return f"{steps[-1].step}: {steps[-1].detail}" if steps else "waiting for an answer"


def announce(rt: Runtime, channel: str, mrkdwn: str, thread_ts: str | None = None) -> bool:
    """Post trusted mrkdwn (our own words, mentions we built); see :func:`say` for other text.

    Returns whether Slack took it; a failure is logged, never raised.
    """
    try:
        rt.web.chat_postMessage(channel=channel, text=mrkdwn, thread_ts=thread_ts)
    except SLACK_FAILURES as exc:
        log.error("chat.postMessage failed: %s", slack_error(exc))
        return False
    return True


def say(rt: Runtime, channel: str, text: str, thread_ts: str | None = None) -> bool:
    """Post text that may carry model- or user-written words, escaped."""
    return announce(rt, channel, escape(text), thread_ts)


def tell(rt: Runtime, channel: str, user: str, text: str, web: WebClient | None = None) -> None:
    """An ephemeral message only ``user`` sees; ``text`` is trusted mrkdwn (mentions allowed).

    ``web`` is for the ack path, which must not wait on retries (``Runtime.ack_web``).
    """
    try:
        (web or rt.web).chat_postEphemeral(channel=channel, user=user, text=text)
    except SLACK_FAILURES as exc:
        log.error("chat.postEphemeral failed: %s", slack_error(exc))


def post_baskets(rt: Runtime, where: Where, events: list[WorkflowEvent]) -> list[str]:
    """Post each basket the run asked about, with fresh buttons; the new messages' ts."""
    posted = []
    for event in events:
        if not (isinstance(event, RequestInfoEvent) and isinstance(event.data, Basket)):
            continue
        basket = event.data
        max_rounds = rt.settings.max_rounds
        try:
            response = rt.web.chat_postMessage(
                channel=where.channel,
                text=f"Basket {basket.round} of {max_rounds}: {len(basket.items)} items",
                blocks=basket_blocks(
                    round=basket.round,
                    max_rounds=max_rounds,
                    items=basket.items,
                    requested_by=where.requested_by,
                    progress=progress_line(events),
                    ref=Ref(where.session_id, event.request_id),
                ),
            )
            posted.append(str(response["ts"]))
        except SLACK_FAILURES as exc:
            log.error("posting basket failed: %s", slack_error(exc))
    return posted


def outputs(events: list[WorkflowEvent]) -> list[str]:
    return [str(e.data) for e in events if isinstance(e, OutputEvent)]


def mark_answered(
    rt: Runtime, channel: str, ts: str, basket: Basket, verdict: str, user: str, note: str = ""
) -> bool:
    """Replace the basket's buttons with who answered, when, and the change they asked for."""
    max_rounds = rt.settings.max_rounds
    said = f": {escape(note)}" if note else ""
    try:
        rt.web.chat_update(
            channel=channel,
            ts=ts,
            text=f"Basket {basket.round} of {max_rounds}: {verdict} by <@{user}>{said}",
            blocks=answered_blocks(
                round=basket.round,
                max_rounds=max_rounds,
                items=basket.items,
                verdict=verdict,
                user=user,
                at=int(rt.clock()),
                note=note,
            ),
        )
    except SLACK_FAILURES as exc:
        log.error("chat.update failed: %s", slack_error(exc))
        return False
    return True
