"""What the bot posts where: every Slack message goes through one :class:`Outbox`.

Two verbs say who sees a message: ``post`` (everyone in the channel, or in a thread) and ``tell``
(one person, ephemeral). ``deliver`` turns a turn's outcome (``bot.slack.outcome``) into those
calls, new messages first and the answered basket's update last, so a process that dies between the
two errs toward a repeat, never toward a loss. Every call returns whether Slack took it; a Slack
failure is logged, never raised (the checkpoint is already written, and the receipt, which is
written only when everything was shown, lets the next click repair the channel). What the
basket's own message says (waiting, answered, retired) is built by ``bot.slack.basket_said``.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable

from slack_sdk import WebClient
from slack_sdk.errors import SlackApiError
from slack_sdk.webhook import WebhookClient

from bot import metrics
from workflow.engine.events import RequestInfoEvent

from .basket_said import answered_message, asked_message, mark_ts, retired_message
from .blocks import Block, escape, settled_blocks, start_again_blocks
from .delivery import Delivered, Posted, Where
from .order_said import order_text, ordered_blocks
from .outcome import (
    RETIRED,
    Damaged,
    Failed,
    Outcome,
    Post,
    Reordered,
    Report,
    Retired,
    Settle,
    Tell,
)

log = logging.getLogger(__name__)

# What a Slack call can end in once slack_sdk's own retries are spent: Slack said no, or the
# network did (URLError and timeouts are OSErrors).
SLACK_FAILURES = (SlackApiError, OSError)
# What Slack answers where the bot may not post: a public channel it was never added to
# (not_in_channel), a private channel or a DM it is not in (channel_not_found, Slack hides those),
# an archived one. A slash command's response_url still reaches the person (docs.slack.dev:
# it works wherever the command was typed, up to 5 times within 30 minutes).
NOT_A_MEMBER = ("not_in_channel", "channel_not_found", "is_archived")


def slack_error(exc: BaseException) -> str:
    if isinstance(exc, SlackApiError):
        return str(exc.response.get("error"))
    return type(exc).__name__


class Outbox:
    def __init__(
        self,
        web: WebClient,
        max_rounds: int,
        clock: Callable[[], float] = time.time,
    ) -> None:
        self.web = web
        self.max_rounds = max_rounds
        self.clock = clock

    def post(
        self,
        channel: str,
        mrkdwn: str,
        thread_ts: str | None = None,
        blocks: list[Block] | None = None,
    ) -> bool:
        """A message everyone sees; ``mrkdwn`` is ours (escape other people's words first), and
        is the notification text when ``blocks`` show more."""
        try:
            self.web.chat_postMessage(
                channel=channel, text=mrkdwn, thread_ts=thread_ts, blocks=blocks
            )
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

    def may_post(self, channel: str) -> bool | None:
        """Whether the bot may post in ``channel`` (one ``conversations.info``); None when Slack
        could not say. Slack hides a private channel or a DM from a bot that is not in it
        (channel_not_found); for a public one it answers ``is_member``; the bot's own DM with a
        person is an IM it is always in."""
        try:
            info = self.web.conversations_info(channel=channel)["channel"]
        except SlackApiError as exc:
            if slack_error(exc) in NOT_A_MEMBER:
                return False
            log.error("conversations.info failed: %s", slack_error(exc))
            return None
        except OSError as exc:
            log.error("conversations.info failed: %s", slack_error(exc))
            return None
        return bool(info.get("is_member") or info.get("is_im"))

    def members(self, channel: str) -> set[str] | None:
        """Who is in ``channel`` (``conversations.members``, every page); None when Slack
        would not say (the bot cannot see it, or Slack could not be reached)."""
        found: set[str] = set()
        cursor = ""
        try:
            while True:
                page = self.web.conversations_members(channel=channel, cursor=cursor, limit=1000)
                found.update(str(m) for m in page.get("members") or [])
                cursor = str((page.get("response_metadata") or {}).get("next_cursor") or "")
                if not cursor:
                    return found
        except SLACK_FAILURES as exc:
            log.info("conversations.members %s: %s", channel, slack_error(exc))
            return None

    def reply(self, url: str, mrkdwn: str) -> bool:
        """A new ephemeral answer through a slash command's response_url (slack_sdk's
        WebhookClient), for where the bot cannot post with its token.

        ``replace_original`` is said, false: posted to a response_url, a message may take the
        place of the one it answers (botkit#446, Netflix/dispatch#2865 had to say false to keep
        an ephemeral from replacing the original), and the person must see both the ack
        ("Writing your basket…") and this answer. chat.postEphemeral is no way round: Slack
        refuses it where the bot is not a member, which is when this is used."""
        try:
            answer = WebhookClient(url, timeout=5).send(
                text=mrkdwn, response_type="ephemeral", replace_original=False
            )
        except OSError as exc:
            log.error("response_url failed: %s", type(exc).__name__)
            return False
        if answer.status_code != 200:
            log.error("response_url answered %s", answer.status_code)
        return answer.status_code == 200

    def deliver(self, where: Where, outcome: Outcome) -> Delivered:
        """Say ``outcome``; whether the channel now shows all of a Report (receipt-worthy)."""
        if isinstance(outcome, Tell):
            self.tell(where.channel, outcome.user, outcome.text)
        elif isinstance(outcome, Failed) and outcome.replaces is not None:
            # in the draft that showed it being written (a new message if that cannot be done)
            said = self._update(where.channel, outcome.replaces, outcome.text, [])
            if not said:
                self._post_or_reply(where, outcome)
        elif isinstance(outcome, Post):
            self._post_or_reply(where, outcome)
        elif isinstance(outcome, Report):
            return self._show(where, outcome)
        elif isinstance(outcome, Retired):
            self._retire(where, outcome)
        elif isinstance(outcome, Reordered):
            text = order_text(escape(outcome.text), outcome.order)
            blocks = ordered_blocks(text, outcome.items, outcome.order)
            self._update(where.channel, outcome.ts, text, blocks)  # earns no receipt: the
            # session has ended, its outcome record is its receipt
        elif isinstance(outcome, Damaged):
            blocks = start_again_blocks(outcome.text, outcome.again)
            self.post(where.channel, outcome.text, outcome.thread_ts, blocks)
        return Delivered(False)

    def _show(self, where: Where, report: Report) -> Delivered:
        ours = [self.post(where.channel, text, report.thread_ts) for text in report.said]
        shown = all([*ours, *(self._post_output(where, report, text) for text in report.outputs)])
        posted: list[Posted | None] = []
        reasked = report.reasked
        if shown:
            posted = [
                self._post_basket(where, report, event, mark_ts(report, event))
                for event in report.baskets
            ]
        baskets = tuple(p for p in posted if p is not None)
        if not shown or None in posted:
            self._post_or_reply(where, report.unposted)
            return Delivered(False, baskets)
        answered = reasked is None and report.mark is not None
        if answered and not self._mark_answered(where.channel, report, where.session_id):
            return Delivered(False, baskets)
        settled = report.settle is None or self._settle(where.channel, report.settle)
        return Delivered(settled, baskets)

    def _post_output(self, where: Where, report: Report, output: str) -> bool:
        """An outcome in the basket's thread; an order lists what was ordered."""
        text = escape(output)
        ordered = report.ordered
        if ordered is None:
            return self.post(where.channel, text, report.thread_ts, None)
        text = order_text(text, report.order)
        blocks = ordered_blocks(text, ordered.items, report.order)
        return self.post(where.channel, text, report.thread_ts, blocks)

    def _retire(self, where: Where, retired: Retired) -> None:
        """Start again in the thread first, then the basket's buttons go (a death between the
        two leaves a live button that says the same again, never a dead end)."""
        try:
            self.web.chat_postMessage(
                channel=where.channel,
                thread_ts=retired.thread_ts,
                text=RETIRED,
                blocks=start_again_blocks(RETIRED, retired.again),
            )
        except SLACK_FAILURES as exc:
            log.error("posting Start again failed: %s", slack_error(exc))
            return
        basket = retired.basket
        if basket is not None:
            text, blocks = retired_message(basket, self.max_rounds)
            self._update(where.channel, retired.thread_ts, text, blocks)

    def _settle(self, channel: str, settle: Settle) -> bool:
        return self._update(channel, settle.ts, settle.text, settled_blocks(settle.text))

    def _update(self, channel: str, ts: str, text: str, blocks: list[Block]) -> bool:
        try:
            self.web.chat_update(channel=channel, ts=ts, text=text, blocks=blocks)
        except SLACK_FAILURES as exc:
            log.error("chat.update failed: %s", slack_error(exc))
            return False
        return True

    def _post_or_reply(self, where: Where, post: Post) -> None:
        """Post in the channel; if Slack refuses, say it to the person who typed the command."""
        if not self.post(where.channel, post.text, post.thread_ts) and where.reply_url:
            self.reply(where.reply_url, post.text)

    def _post_basket(
        self, where: Where, report: Report, event: RequestInfoEvent, ts: str | None = None
    ) -> Posted | None:
        """A new basket message; or, with ``ts``, the message of the basket asked again
        unchanged, given buttons for its new request (no new message: no round was used), or
        the draft that showed it being written (a new message if it cannot be updated:
        deleted meanwhile, say)."""
        basket = event.data
        log.info("posting basket %s (%s)", basket.round, report.written)
        text, blocks = asked_message(report, event, where.session_id, self.max_rounds)
        if ts is not None:
            drafted = ts == report.draft_ts
            if self._update(where.channel, ts, text, blocks):
                if drafted and basket.round == 1:  # in the message that showed it written
                    metrics.count("BasketsStarted")
                held = report.held_until
                return Posted(event.request_id, ts, basket.round, int(self.clock()), held)
            if not drafted:
                return None
        try:
            posted = self.web.chat_postMessage(channel=where.channel, text=text, blocks=blocks)
        except SLACK_FAILURES as exc:
            log.error("posting basket failed: %s", slack_error(exc))
            return None
        if basket.round == 1:  # a shop's first basket: one more shop started
            metrics.count("BasketsStarted")
        return Posted(event.request_id, str(posted["ts"]), basket.round, int(self.clock()))

    def _mark_answered(self, channel: str, report: Report, session_id: str = "") -> bool:
        """Replace the basket's buttons with who answered, when, and the change they asked for
        (or that it expired, and when), below what was asked, as the basket showed it."""
        mark = report.mark
        if mark is None:
            return True
        at = int(self.clock()) if mark.at is None else mark.at
        text, blocks = answered_message(report, mark, self.max_rounds, at, session_id)
        return self._update(channel, mark.ts, text, blocks)
