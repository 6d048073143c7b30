"""A basket shown while it is written: one message, updated in place as the model finishes each
item, which becomes the basket itself once it is whole and checked (issue 36).

Why one message updated in place, and not a stream in a thread: a ``/shop`` has no message to
thread under (a slash command posts none), ``chat.startStream`` in a channel must name one
recipient ("the user to receive the streaming text", ``recipient_user_id``) while the basket is
the whole household's, and an updated message reads the same on every client. ``chat.update``
is a Tier 3 method (about 50 a minute per workspace, docs.slack.dev, "Rate limits"): a draft is
updated at most once every :data:`EVERY` seconds (the first items at once), 40 a minute at most,
about 4 times for a 17-item basket written in 5 seconds (``make bench``: 6 ``chat.*`` calls).

What it says is true at every moment, whoever sees it and whenever:

- posted, before the model is asked: only who asked and what (:func:`asked_view`), the same
  words the basket shows; a message whose delivery died before it was recorded
  (``bot.records.drafts``) is never updated and still says only that;
- while written: "Basket 1 — being written", the items so far, each that breaks one of the
  week's rules flagged as the basket will flag it ("contains beef: you said no meat"), and that
  it is a draft: not checked, not priced, no buttons until it is whole (:func:`writing_view`);
- written: the basket with its buttons (``bot.slack.outbox`` updates this message);
- no basket came of it: the reason, in this message (``Failed.replaces``); or, where the turn
  itself broke, back to who asked and what, and that no basket came of it (:func:`stopped_view`:
  the turn may say more, or nothing, below).

Items are the model's words: plain_text through ``basket_items.item_sections``, so nothing in
them formats or pings. A Slack refusal is logged and the next update tries again; the basket
itself never depends on a draft (posted as a new message when there is none).
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING

from slack_sdk import WebClient

from .basket_items import item_sections
from .basket_message import asked_for
from .blocks import Block, context, count, plain

if TYPE_CHECKING:
    from workflow.shop.basket import Item
    from workflow.shop.diet import Diet

log = logging.getLogger(__name__)

EVERY = 1.5  # seconds between two updates of one draft (chat.update: Tier 3)
DRAFT_NOTE = (
    "A draft, still being written: it is checked against what the household doesn't eat, "
    "and priced, before anyone can approve it."
)
STOPPED = "No basket came of it this time. Try /shop again."
WRITING = "Basket 1 — being written"  # the draft's header
READING_STATUS = "is reading your week…"  # under the draft's thread, before the first item
WRITING_STATUS = "is writing the basket…"
AGAIN = "Writing it again: the first try was interrupted."
# The model asked once more, without the items that broke the household's rules (check.py).
RULES_AGAIN = "Writing it again without what the household doesn't eat."


def asked_view(requested_by: str, request: str, household: str) -> tuple[str, list[Block]]:
    """Who asked for the week's basket, and what: all a draft says before its first item."""
    who = f"<@{requested_by}> asked" if requested_by else "Asked"
    return f"{who} for this week's basket", [asked_for(requested_by, request, "", household)]


def writing_view(
    items: Sequence[Item],
    requested_by: str,
    request: str,
    household: str,
    note: str = DRAFT_NOTE,
) -> tuple[str, list[Block]]:
    """The basket so far: its finished items (flagged as the basket will be), marked a draft."""
    return f"Basket 1, being written: {count(len(items))} so far", [
        {"type": "header", "text": plain(WRITING, 150)},
        *item_sections(items),
        context(f"{count(len(items))} so far · {note}"),
        asked_for(requested_by, request, "", household),
    ]


def stopped_view(requested_by: str, request: str, household: str) -> tuple[str, list[Block]]:
    text, blocks = asked_view(requested_by, request, household)
    return text, [*blocks, context(STOPPED)]


class Draft:
    """One session's draft message (``ts`` in ``channel``): each call with the finished items
    so far updates it, at most once every :data:`EVERY` seconds; :meth:`flush` shows the last."""

    def __init__(
        self,
        web: WebClient,
        channel: str,
        ts: str,
        asked: tuple[str, str, str],  # who asked, what, for which household
        diet: Diet | None = None,
        clock: Callable[[], float] = time.monotonic,
        note: str = DRAFT_NOTE,
    ) -> None:
        self.web, self.channel, self.ts = web, channel, ts
        self.asked, self.diet, self.clock, self.note = asked, diet, clock, note
        self.updates = 0
        self._seen = 0  # finished items the current answer has given
        self._last: float | None = None
        self._pending: list[Item] | None = None

    def __call__(self, items: list[Item]) -> None:
        if len(items) < self._seen:  # a second answer: asked again without what broke a rule
            self.note, self._last = RULES_AGAIN, None  # said at once, not in 1.5 s
        self._seen = len(items)
        self._pending = items
        now = self.clock()
        if self._last is None or now - self._last >= EVERY:
            self.flush()

    def flush(self) -> None:
        """Show the items not shown yet, if any."""
        items, self._pending = self._pending, None
        if items is None:
            return
        if self.diet is not None:
            from workflow.shop.check import flagged

            items = flagged(items, self.diet)
        if self._last is None:  # the first items: the status says what is going on now
            self.status(WRITING_STATUS)
        self._last = self.clock()
        self.update(*writing_view(items, *self.asked, note=self.note))

    def stop(self) -> None:
        """No basket came of it: the draft goes back to who asked, and says so."""
        self._pending = None
        self.update(*stopped_view(*self.asked))
        self.status("")

    def status(self, text: str) -> bool:
        """The status line under the draft's thread, as Slack shows an AI app at work
        (``assistant.threads.setStatus``: ``chat:write`` is enough since 2026-03-05, and a
        status clears itself after 2 minutes); "" clears it. Best effort, like the draft."""
        from .outbox import slack_error

        try:
            self.web.assistant_threads_setStatus(
                channel_id=self.channel, thread_ts=self.ts, status=text
            )
        except Exception as exc:  # noqa: BLE001 - a status never fails the run either
            log.info("the draft's status could not be set: %s", slack_error(exc))
            return False
        return True

    def update(self, text: str, blocks: list[Block]) -> bool:
        """Best effort: whatever Slack or the network does, the basket is written on."""
        from .outbox import slack_error

        try:
            self.web.chat_update(channel=self.channel, ts=self.ts, text=text, blocks=blocks)
        except Exception as exc:  # noqa: BLE001 - a draft never fails the run that writes it
            log.warning("the draft could not be updated: %s", slack_error(exc))
            return False
        self.updates += 1
        return True
