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
from dataclasses import replace
from typing import TYPE_CHECKING

from slack_sdk import WebClient

from workflow.shop.text import strip_controls

from .basket_items import item_sections
from .basket_message import asked_for
from .blocks import Block, context, count, plain, section

if TYPE_CHECKING:
    from workflow.shop.basket import Item
    from workflow.shop.diet import Diet
    from workflow.shop.revision import Change

log = logging.getLogger(__name__)

EVERY = 1.5  # seconds between two updates of one draft (chat.update: Tier 3)
DRAFT_NOTE = (
    "A draft, still being written: it is checked against what the household doesn't eat, "
    "and priced, before anyone can approve it."
)
STOPPED = "No basket came of it this time. Try /shop again."
# A change's draft when no basket came of the change: the basket it was asked of is as it was.
CHANGE_STOPPED = "No new basket came of this change: the basket it was asked of still waits."
WRITING = "Basket 1 — being written"  # the draft's header


def writing(round: int) -> str:
    return f"Basket {round} — being written"


READING_STATUS = "is reading your week…"  # under the draft's thread, before the first item
READING_CHANGE_STATUS = "is reading the change…"  # a change's draft, before its first change
WRITING_STATUS = "is writing the basket…"
AGAIN = "Writing it again: the first try was interrupted."
# The model asked once more, without the items that broke the household's rules (check.py).
RULES_AGAIN = "Writing it again without what the household doesn't eat."
SECTION_TEXT = 3000  # a section's text: Slack's limit (Block Kit reference, "Section block")
MAX_LINE = 300  # one change's line: a name and a note are far shorter (basket.py's limits)
MAX_CHANGE_SHOWN = 300  # the change asked, as typed, under the draft


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
    round: int = 1,
) -> tuple[str, list[Block]]:
    """The basket so far: its finished items (flagged as the basket will be), marked a draft."""
    return f"Basket {round}, being written: {count(len(items))} so far", [
        {"type": "header", "text": plain(writing(round), 150)},
        *item_sections(items),
        context(f"{count(len(items))} so far · {note}"),
        asked_for(requested_by, request, "", household),
    ]


def stopped_view(requested_by: str, request: str, household: str) -> tuple[str, list[Block]]:
    text, blocks = asked_view(requested_by, request, household)
    return text, [*blocks, context(STOPPED)]


def change_asked(user: str, change: str) -> Block:
    """ "Change asked by @bob: no pizza, add oat milk": the person's words, plain_text."""
    block = context(f"Change asked by <@{user}>:")
    block["elements"].append(plain(change[:MAX_CHANGE_SHOWN], MAX_CHANGE_SHOWN))
    return block


def change_sections(changes: Sequence[Change]) -> list[Block]:
    """One line a change, in plain_text sections of at most 3000 characters (Slack's limit for
    a section's text): the model's words, so nothing in them formats or pings."""
    sections: list[Block] = []
    lines: list[str] = []
    for change in changes:
        line = strip_controls(f"• {change.said()}")[:MAX_LINE]
        if lines and len("\n".join([*lines, line])) > SECTION_TEXT:
            sections.append(section("\n".join(lines), "plain_text"))
            lines = []
        lines.append(line)
    if lines:
        sections.append(section("\n".join(lines), "plain_text"))
    return sections


def change_view(
    round: int, change: tuple[str, str], asked: tuple[str, str, str], said: str = ""
) -> tuple[str, list[Block]]:
    """A change's draft before its first operation (``said`` empty), and once no basket came of
    it (``said``: why): who asked for which change of which week; nothing that can go stale."""
    blocks = [change_asked(*change), asked_for(asked[0], asked[1], "", asked[2])]
    if said:
        return said, [*blocks, context(said)]
    return f"<@{change[0]}> asked for a change of basket {round - 1}", blocks


def changing_view(
    changes: Sequence[Change],
    round: int,
    change: tuple[str, str],
    asked: tuple[str, str, str],
    note: str = DRAFT_NOTE,
) -> tuple[str, list[Block]]:
    """A change as it is written: each operation finished so far, an added item flagged as the
    basket will flag it ("Adding 300 g beef mince — contains beef: you said no meat")."""
    return f"Basket {round}, being written: {count(len(changes), 'change')} so far", [
        {"type": "header", "text": plain(writing(round), 150)},
        *change_sections(changes),
        context(f"{count(len(changes), 'change')} so far · {note}"),
        change_asked(*change),
        asked_for(asked[0], asked[1], "", asked[2]),
    ]


class Draft:
    """One session's draft message (``ts`` in ``channel``): each call with the finished items
    so far updates it, at most once every :data:`EVERY` seconds; :meth:`flush` shows the last.
    A change's draft (``change``: who asked, and what) shows basket ``round``'s operations as
    they come (:meth:`changed`); a whole basket written instead shows as items."""

    def __init__(
        self,
        web: WebClient,
        channel: str,
        ts: str,
        asked: tuple[str, str, str],  # who asked, what, for which household
        diet: Diet | None = None,
        clock: Callable[[], float] = time.monotonic,
        note: str = DRAFT_NOTE,
        round: int = 1,
        change: tuple[str, str] | None = None,  # a change's draft: who asked for it, and what
    ) -> None:
        self.web, self.channel, self.ts = web, channel, ts
        self.asked, self.diet, self.clock, self.note = asked, diet, clock, note
        self.round, self.change = round, change
        # The last word (:meth:`stop`) goes through a client that retries a 429: it is what the
        # message says for good. The updates in between do not wait (a later one follows).
        self.final: WebClient | None = None
        self.updates = 0
        self._seen = 0  # finished items (or a change's operations) the current answer has given
        self._last: float | None = None
        self._due = False  # given something not shown yet: ``_view`` shows it
        self._view: Callable[[], tuple[str, list[Block]]] = lambda: ("", [])

    def __call__(self, items: list[Item]) -> None:
        self._show(len(items), lambda: self._items_view(items))

    def changed(self, changes: list[Change]) -> None:
        """A change's operations so far (``revise_basket``), shown as the items are."""
        if self.change is None:
            return
        change, round, asked = self.change, self.round, self.asked
        self._show(
            len(changes),
            lambda: changing_view(self._flagged(changes), round, change, asked, self.note),
        )

    def _show(self, seen: int, view: Callable[[], tuple[str, list[Block]]]) -> None:
        if seen < self._seen:  # a second answer: asked again without what broke a rule
            self.note, self._last = RULES_AGAIN, None  # said at once, not in 1.5 s
        self._seen = seen
        self._view, self._due = view, True
        now = self.clock()
        if self._last is None or now - self._last >= EVERY:
            self.flush()

    def _items_view(self, items: list[Item]) -> tuple[str, list[Block]]:
        if self.diet is not None:
            from workflow.shop.check import flagged

            items = flagged(items, self.diet)
        text, blocks = writing_view(items, *self.asked, note=self.note, round=self.round)
        if self.change is not None:  # a change answered with a whole basket: which change
            blocks.insert(len(blocks) - 1, change_asked(*self.change))
        return text, blocks

    def _flagged(self, changes: list[Change]) -> list[Change]:
        """Each added item flagged as the basket will flag it."""
        if self.diet is None:
            return changes
        from workflow.shop.check import flagged

        return [
            replace(c, item=flagged([c.item], self.diet)[0]) if c.item is not None else c
            for c in changes
        ]

    def flush(self) -> None:
        """Show what was given since the last update, if anything."""
        if not self._due:
            return
        self._due = False
        if self._last is None:  # the first items: the status says what is going on now
            self.status(WRITING_STATUS)
        self._last = self.clock()
        self.update(*self._view())

    def stop(self, said: str = "") -> bool:
        """No basket came of it: the draft goes back to who asked (and for which change), and
        says so (``said``: a change's reason; a /shop's is :data:`STOPPED`). Whether Slack
        took it."""
        self._due = False
        if self.change is None:
            view = stopped_view(*self.asked)
        else:
            view = change_view(self.round, self.change, self.asked, said or CHANGE_STOPPED)
        shown = self.update(*view, web=self.final)
        self.status("")
        return shown

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

    def update(self, text: str, blocks: list[Block], web: WebClient | None = None) -> bool:
        """Best effort: whatever Slack or the network does, the basket is written on."""
        from .outbox import slack_error

        try:
            (web or self.web).chat_update(
                channel=self.channel, ts=self.ts, text=text, blocks=blocks
            )
        except Exception as exc:  # noqa: BLE001 - a draft never fails the run that writes it
            log.warning("the draft could not be updated: %s", slack_error(exc))
            return False
        self.updates += 1
        return True
