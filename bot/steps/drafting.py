"""Where a ``/shop`` shows its first basket while the model writes it (issue 36).

Before the model is asked, the start claims the session's draft message (``bot.records.drafts``:
one per session, whatever Lambda redelivers), posts it (who asked, and what) and records its
``ts``; the shopper then streams its answer into it (``workflow.shop.shopper_stream.DRAFT``), and
the outbox turns it into the basket once the basket is whole and checked (``Report.draft_ts``).
A redelivery of a start that died after recording it writes into the same message again; one
that died between posting and recording shows no draft (the basket is then posted as a new
message, as it is where drafts cannot be kept). Every failure here only costs the draft: the
start goes on, and the basket is posted as before.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass
from typing import TYPE_CHECKING

from slack_sdk import WebClient

from bot.records.drafts import Fresh, Known, S3Drafts
from bot.slack.delivery import Where
from bot.slack.draft import AGAIN, READING_STATUS, Draft, asked_view
from bot.slack.outbox import SLACK_FAILURES, Outbox, slack_error
from workflow.errors import StoreError

if TYPE_CHECKING:
    from workflow.shop.basket import ShopRequest

log = logging.getLogger(__name__)

LOST = "No basket came of this: writing it failed every time. Try /shop again."


@dataclass(frozen=True)
class Drafting:
    """A start's draft message: where it is kept (``drafts``), where it is posted."""

    drafts: S3Drafts
    outbox: Outbox
    where: Where
    household: str = ""  # the household line the basket will show ("For 4 · no pork")

    def open(self, request: ShopRequest) -> Draft | None:
        """The session's draft message, posted now or found from an earlier delivery; None
        where there can be none (S3 or Slack refused, or an earlier delivery's fate unknown)."""
        from workflow.shop.check import week_diet

        where = self.where
        asked = (request.requested_by, request.text, self.household)
        diet = week_diet(request.household, [request.text])
        try:
            claim = self.drafts.claim(where.tenant, where.session_id)
        except StoreError as exc:
            log.warning("no draft: its claim could not be made: %s", exc)
            return None
        web = self.outbox.web
        light = light_client(web)
        if isinstance(claim, Known):
            draft = Draft(light, where.channel, claim.ts, asked, diet, note=AGAIN)
            draft.status(READING_STATUS)
            return draft
        if not isinstance(claim, Fresh):
            log.warning("no draft: an earlier delivery claimed one and recorded no message")
            return None
        text, blocks = asked_view(*asked)
        try:
            posted = web.chat_postMessage(channel=where.channel, text=text, blocks=blocks)
        except SLACK_FAILURES as exc:
            log.warning("no draft: Slack refused it: %s", slack_error(exc))
            return None
        ts = str(posted["ts"])
        try:
            self.drafts.record(where.tenant, where.session_id, ts)
        except StoreError as exc:  # never updated: it says only who asked, which stays true
            log.warning("no draft: its message could not be recorded: %s", exc)
            return None
        draft = Draft(light, where.channel, ts, asked, diet)
        draft.status(READING_STATUS)
        return draft

    def settle(self, ts: str) -> None:
        """The basket goes into the draft message ``ts`` now: recorded first, so that a lost
        run's report (:func:`said_lost`) never overwrites it. A failure costs only that."""
        try:
            self.drafts.record(self.where.tenant, self.where.session_id, ts, basket=True)
        except StoreError as exc:
            log.warning("the draft could not be marked as the basket: %s", exc)

    def shown(self) -> str | None:
        """The draft message an earlier delivery recorded (where its basket goes), if any."""
        try:
            return self.drafts.shown(self.where.tenant, self.where.session_id)
        except StoreError as exc:
            log.warning("the draft could not be read: %s", exc)
            return None


def light_client(web: WebClient) -> WebClient:
    """The draft's own client: the workspace's token, no retry handlers and a short timeout.
    Its updates run while the model's answer streams in (a 429's Retry-After, slept twice by the
    outbox's client, would stall the stream for a draft nobody needs to see late)."""
    return WebClient(token=web.token, base_url=web.base_url, timeout=3, retry_handlers=[])


def said_lost(
    drafts: S3Drafts, outbox: Outbox, tenant: str, session: str, channel: str, user: str
) -> None:
    """A ``/shop`` whose lazy run Lambda gave up on: its draft message, if it had one, says so
    (it would say "being written" for ever); the person hears it as before, through the
    command's response_url."""
    try:
        ts = drafts.shown(tenant, session)
        basket = ts is not None and drafts.becomes_basket(tenant, session)
    except StoreError as exc:
        log.warning("a lost /shop's draft could not be read: %s", exc)
        return
    if ts is None or basket:  # no draft, or it is the basket now: someone may be approving it
        return
    text = f"<@{user}> {LOST}" if user else LOST
    try:
        outbox.web.chat_update(channel=channel, ts=ts, text=text, blocks=[])
    except SLACK_FAILURES as exc:
        log.warning("a lost /shop's draft could not be updated: %s", slack_error(exc))
