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
from typing import TYPE_CHECKING, TypeVar

from slack_sdk import WebClient

from bot.records.drafts import NAME, Fresh, Known, S3Drafts, change_draft
from bot.slack.delivery import Where
from bot.slack.draft import (
    AGAIN,
    READING_CHANGE_STATUS,
    READING_STATUS,
    Draft,
    asked_view,
    change_view,
)
from bot.slack.outbox import SLACK_FAILURES, Outbox, slack_error
from workflow.errors import StoreError

if TYPE_CHECKING:
    from workflow.shop.basket import ShopRequest

T = TypeVar("T")

log = logging.getLogger(__name__)

LOST = "No basket came of this: writing it failed every time. Try /shop again."
CHANGE_LOST = "No new basket came of this change: it didn't go through. Press Change… again."


@dataclass(frozen=True)
class Drafting:
    """A start's draft message: where it is kept (``drafts``), where it is posted."""

    drafts: S3Drafts
    outbox: Outbox
    where: Where
    household: str = ""  # the household line the basket will show ("For 4 · no pork")
    said: tuple[str, ...] = ()  # the changes asked so far, this one last: rules they stated

    name: str = NAME  # the draft's object: a /shop's, or a change's (``change_draft``)

    def open(
        self, request: ShopRequest, change: tuple[str, str] | None = None, round: int = 1
    ) -> Draft | None:
        """The session's draft message, posted now or found from an earlier delivery; None
        where there can be none (S3 or Slack refused, or an earlier delivery's fate unknown).
        ``change``: who asked for which change, the draft of basket ``round``."""
        from workflow.shop.check import week_diet

        where = self.where
        asked = (request.requested_by, request.text, self.household)
        diet = week_diet(request.household, [request.text, *self.said])
        try:
            claim = self.drafts.claim(where.tenant, where.session_id, self.name)
        except StoreError as exc:
            log.warning("no draft: its claim could not be made: %s", exc)
            return None
        web = self.outbox.web
        light = light_client(web)
        if isinstance(claim, Known):
            draft = Draft(light, where.channel, claim.ts, asked, diet, note=AGAIN)
        elif not isinstance(claim, Fresh):
            log.warning("no draft: an earlier delivery claimed one and recorded no message")
            return None
        else:
            text, blocks = (
                asked_view(*asked) if change is None else change_view(round, change, asked)
            )
            try:
                posted = web.chat_postMessage(channel=where.channel, text=text, blocks=blocks)
            except SLACK_FAILURES as exc:
                log.warning("no draft: Slack refused it: %s", slack_error(exc))
                return None
            try:
                self.drafts.record(
                    where.tenant, where.session_id, str(posted["ts"]), name=self.name
                )
            except StoreError as exc:  # never updated: it says only who asked, which stays true
                log.warning("no draft: its message could not be recorded: %s", exc)
                return None
            draft = Draft(light, where.channel, str(posted["ts"]), asked, diet)
        draft.round, draft.change, draft.final = round, change, web
        draft.status(READING_STATUS if change is None else READING_CHANGE_STATUS)
        return draft

    def settle(self, ts: str) -> None:
        """The basket goes into the draft message ``ts`` now: recorded first, so that a lost
        run's report (:func:`said_lost`) never overwrites it. A failure costs only that."""
        try:
            self.drafts.record(
                self.where.tenant, self.where.session_id, ts, basket=True, name=self.name
            )
        except StoreError as exc:
            log.warning("the draft could not be marked as the basket: %s", exc)

    def forget(self) -> None:
        """No basket came of this draft (a change's): a later one gets a message of its own."""
        try:
            self.drafts.forget(self.where.tenant, self.where.session_id, self.name)
        except StoreError as exc:
            log.warning("the draft could not be forgotten: %s", exc)

    def becomes_basket(self) -> bool:
        """Whether the recorded draft is (becoming) the basket; True when that cannot be read
        (then nothing may say it failed: someone may be approving it)."""
        where = self.where
        try:
            return bool(self.drafts.becomes_basket(where.tenant, where.session_id, self.name))
        except StoreError as exc:
            log.warning("the draft could not be read: %s", exc)
            return True

    def shown(self) -> str | None:
        """The draft message an earlier delivery recorded (where its basket goes), if any."""
        try:
            return self.drafts.shown(self.where.tenant, self.where.session_id, self.name)
        except StoreError as exc:
            log.warning("the draft could not be read: %s", exc)
            return None


def light_client(web: WebClient) -> WebClient:
    """The draft's own client: the workspace's token, no retry handlers and a short timeout.
    Its updates run while the model's answer streams in (a 429's Retry-After, slept twice by the
    outbox's client, would stall the stream for a draft nobody needs to see late)."""
    return WebClient(token=web.token, base_url=web.base_url, timeout=3, retry_handlers=[])


def said_lost(
    drafts: S3Drafts,
    outbox: Outbox,
    tenant: str,
    session: str,
    channel: str,
    user: str,
    change_of: str = "",
) -> None:
    """A ``/shop`` (or, with ``change_of``, a change of that request) whose lazy run Lambda
    gave up on: its draft message, if it had one, says so (it would say "being written" for
    ever); the person hears it as before (the command's response_url, the basket's thread)."""
    try:
        name = change_draft(change_of) if change_of else NAME
        ts = drafts.shown(tenant, session, name)
        basket = ts is not None and drafts.becomes_basket(tenant, session, name)
    except (StoreError, ValueError) as exc:
        log.warning("a lost run's draft could not be read: %s", exc)
        return
    if ts is None or basket:  # no draft, or it is the basket now: someone may be approving it
        return
    said = CHANGE_LOST if change_of else LOST
    text = f"<@{user}> {said}" if user else said
    try:
        outbox.web.chat_update(channel=channel, ts=ts, text=text, blocks=[])
    except SLACK_FAILURES as exc:
        log.warning("a lost run's draft could not be updated: %s", slack_error(exc))
