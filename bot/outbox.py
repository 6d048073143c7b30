"""What the bot posts where: every Slack message goes through one :class:`Outbox`.

Two verbs say who sees a message: ``post`` (everyone in the channel, or in a thread) and ``tell``
(one person, ephemeral). ``deliver`` turns a turn's outcome (``bot.outcome``) into those calls,
new messages first and the answered basket's update last, so a process that dies between the two
errs toward a repeat, never toward a loss. Every call returns whether Slack took it; a Slack
failure is logged, never raised (the checkpoint is already written, and the receipt, which is
written only when everything was shown, lets the next click repair the channel).
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable
from dataclasses import dataclass

from slack_sdk import WebClient
from slack_sdk.errors import SlackApiError

from workflow.events import RequestInfoEvent

from .blocks import Ref, answered_blocks, basket_blocks, escape
from .outcome import Mark, Outcome, Post, Report, Tell

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
    """A session and the channel its messages go to."""

    tenant: str
    session_id: str
    channel: str


class Outbox:
    def __init__(
        self, web: WebClient, max_rounds: int, clock: Callable[[], float] = time.time
    ) -> None:
        self.web = web
        self.max_rounds = max_rounds
        self.clock = clock

    def post(self, channel: str, mrkdwn: str, thread_ts: str | None = None) -> bool:
        """A message everyone sees; ``mrkdwn`` is ours (escape other people's words first)."""
        try:
            self.web.chat_postMessage(channel=channel, text=mrkdwn, thread_ts=thread_ts)
        except SLACK_FAILURES as exc:
            log.error("chat.postMessage failed: %s", slack_error(exc))
            return False
        return True

    def tell(self, channel: str, user: str, mrkdwn: str) -> bool:
        """An ephemeral message only ``user`` sees."""
        try:
            self.web.chat_postEphemeral(channel=channel, user=user, text=mrkdwn)
        except SLACK_FAILURES as exc:
            log.error("chat.postEphemeral failed: %s", slack_error(exc))
            return False
        return True

    def deliver(self, where: Where, outcome: Outcome) -> bool:
        """Say ``outcome``; whether the channel now shows all of a Report (receipt-worthy)."""
        if isinstance(outcome, Tell):
            self.tell(where.channel, outcome.user, outcome.text)
        elif isinstance(outcome, Post):
            self.post(where.channel, outcome.text, outcome.thread_ts)
        elif isinstance(outcome, Report):
            return self._show(where, outcome)
        return False

    def _show(self, where: Where, report: Report) -> bool:
        thread = report.thread_ts
        posted = all([self.post(where.channel, escape(text), thread) for text in report.outputs])
        if posted:
            posted = all([self._post_basket(where, report, event) for event in report.baskets])
        if not posted:
            self.post(where.channel, report.unposted.text, report.unposted.thread_ts)
            return False
        return report.mark is None or self._mark_answered(where.channel, report.mark)

    def _post_basket(self, where: Where, report: Report, event: RequestInfoEvent) -> bool:
        basket = event.data
        try:
            self.web.chat_postMessage(
                channel=where.channel,
                text=f"Basket {basket.round} of {self.max_rounds}: {len(basket.items)} items",
                blocks=basket_blocks(
                    round=basket.round,
                    max_rounds=self.max_rounds,
                    items=basket.items,
                    requested_by=report.requested_by,
                    progress=report.progress,
                    ref=Ref(where.session_id, event.request_id),
                ),
            )
        except SLACK_FAILURES as exc:
            log.error("posting basket failed: %s", slack_error(exc))
            return False
        return True

    def _mark_answered(self, channel: str, mark: Mark) -> bool:
        """Replace the basket's buttons with who answered, when, and the change they asked for."""
        said = f": {escape(mark.note)}" if mark.note else ""
        basket = mark.basket
        try:
            self.web.chat_update(
                channel=channel,
                ts=mark.ts,
                text=f"Basket {basket.round} of {self.max_rounds}: {mark.verdict} by <@{mark.by}>"
                + said,
                blocks=answered_blocks(
                    round=basket.round,
                    max_rounds=self.max_rounds,
                    items=basket.items,
                    verdict=mark.verdict,
                    user=mark.by,
                    at=int(self.clock()),
                    note=mark.note,
                ),
            )
        except SLACK_FAILURES as exc:
            log.error("chat.update failed: %s", slack_error(exc))
            return False
        return True
