"""Block Kit for the basket messages: pure functions of data (the change modal:
``bot.slack.modal``).

Model- and user-written text is escaped for mrkdwn (``&``, ``<``, ``>`` only), which also defuses
``<!channel>``, ``<@U…>`` and ``<!subteam^…>``. Button values carry the session and request IDs,
never the basket. Limits (Slack's Block Kit reference on docs.slack.dev; the fake Web API in
``bot.sandbox.block_kit`` checks them all): ≤ 50 blocks a message, section text ≤ 3000, header ≤
150, button text ≤ 75 and value ≤ 2000, modal title ≤ 24, ``private_metadata`` ≤ 3000. Slack
also refuses a message whose blocks hold too much text in all (``msg_blocks_too_long``,
undocumented, seen from about 11,000 characters), so the items shown are capped by a total budget
and the rest are counted, not dropped silently.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from workflow.shop.text import strip_controls

if TYPE_CHECKING:  # the workflow: imported by the lazy runs that post baskets, not by an ack
    from workflow.shop.basket import Item

APPROVE = "approve_basket"
REJECT = "reject_basket"
CHANGE = "change_basket"
EDIT = "edit_basket"  # Edit items: a modal of the basket's items, answered with no model call
START_AGAIN = "start_again"
RETRY_ORDER = "retry_order"  # an order that did not go through: place it again
UNDO = "undo_order"  # a held basket's Undo: its approvals start again, nothing is ordered
OPEN_ORDER = "open_order"  # a link button to where the order went: Slack sends its click too
MAX_CHANGE_LENGTH = 500
MAX_SHOWN_REQUEST = 300  # of the request's text on a basket; the whole of it is in the prompt

SECTION_LIMIT = 3000
# Blocks for the items, headings and overflow line included: a message holds at most 50, and a
# basket's header, context, who edited it, approvals so far and actions take 5.
MAX_ITEM_BLOCKS = 45
# Item text shown in one message, all sections together: well under the ~11,000 characters at
# which Slack has been seen to answer msg_blocks_too_long (bolt-js issues #2509 and #2867).
ITEMS_TEXT_BUDGET = 8000
MAX_ITEM_CHARS = 300

Block = dict[str, Any]


def escape(text: str) -> str:
    """Text safe inside mrkdwn: nothing in it can format a link or ping anyone, and no
    control or bidirectional-control character changes how it reads (``workflow.shop.text``)."""
    text = strip_controls(text)
    return text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")


@dataclass(frozen=True)
class Ref:
    """What a button or a modal carries: which session, which pending request."""

    session_id: str
    request_id: str

    def to_value(self) -> str:
        return json.dumps({"s": self.session_id, "r": self.request_id}, separators=(",", ":"))

    @classmethod
    def from_value(cls, value: str | None) -> Ref | None:
        """The reference in a button value, or None if it is not one of ours."""
        try:
            data = json.loads(value or "")
        except ValueError:
            return None
        if not isinstance(data, dict):
            return None
        session, request = data.get("s"), data.get("r")
        if not isinstance(session, str) or not isinstance(request, str):
            return None
        return cls(session, request)


def slack_date(at: int) -> str:
    """``at`` (epoch seconds) as Slack shows a date in each reader's own time zone."""
    return f"<!date^{at}^{{date_short_pretty}} at {{time}}|{at}>"


def plain(text: str, limit: int) -> dict[str, Any]:
    """A ``plain_text`` object: nothing in it formats or pings; no control character stays."""
    return {"type": "plain_text", "text": strip_controls(text)[:limit], "emoji": True}


def _item_line(item: Item) -> str:
    line = " ".join(item.line().splitlines())  # one item, one line: a newline would fake two
    clipped = line if len(line) <= MAX_ITEM_CHARS else line[: MAX_ITEM_CHARS - 1] + "…"
    return f"• {clipped}"


def count(n: int, thing: str = "item") -> str:
    """``n`` things in English (``workflow.shop.basket.count``)."""
    from workflow.shop.basket import count as counted

    return counted(n, thing)


def _left_out(hidden: int, total: int) -> str:
    more = f"{hidden} more item" if hidden == 1 else f"{hidden} more items"
    return f"_…and {more} not shown here (approving orders all {total})_"


def section(text: str, kind: str = "mrkdwn") -> Block:
    body: dict[str, Any] = {"type": kind, "text": text}
    if kind == "plain_text":
        body["emoji"] = False  # ":pizza:" stays what the model wrote
    return {"type": "section", "text": body}


def aisle_groups(items: Sequence[Item]) -> list[tuple[str, list[Item]]]:
    """The items by aisle, in shop order (``workflow.shop.basket.aisle_groups``)."""
    from workflow.shop.basket import aisle_groups as by_aisle

    return by_aisle(items)


def item_sections(items: Sequence[Item]) -> list[Block]:
    """The items, one line each and quantity first, grouped by aisle under a bold heading, in
    plain_text sections of at most 3000 characters, within the message's text budget and
    :data:`MAX_ITEM_BLOCKS`; items that do not fit are counted in a last line, never dropped.

    plain_text, because what the approver sees must be what is ordered: in mrkdwn an item
    written ``~2 pizza bases~`` shows struck through (and mrkdwn has no escape for ``*``, ``_``,
    ``~`` or backticks), and Slack parses no mention or link in plain_text, so nothing in an
    item can ping anyone either. Slack escapes ``&``, ``<``, ``>`` in plain_text itself
    (bolt-python#513: a plain_text "Answer & 1" comes back as ``&amp;``), so they go as written.
    The headings are ours (the aisle names), in mrkdwn.
    """
    blocks: list[Block] = []
    shown, used = 0, 0
    for aisle, group in aisle_groups(items):
        heading = [section(f"*{aisle.capitalize()}*")] if aisle else []
        sections: list[str] = []
        taken = 0
        for item in group:
            line = _item_line(item)
            if used + len(line) + 1 > ITEMS_TEXT_BUDGET:
                break
            if sections and len(sections[-1]) + 1 + len(line) <= SECTION_LIMIT:
                sections[-1] += "\n" + line
            elif len(blocks) + len(heading) + len(sections) + 1 < MAX_ITEM_BLOCKS:  # + overflow
                sections.append(line)
            else:
                break
            used += len(line) + 1
            taken += 1
        shown += taken
        if sections:
            blocks += heading + [section(text, "plain_text") for text in sections]
        if taken < len(group):
            break  # this aisle did not fit whole: the rest are counted, not shown
    if shown < len(items):
        blocks.append(section(_left_out(len(items) - shown, len(items))))
    return blocks or [section("_(the shopper wrote no items)_")]


def context(*lines: str) -> Block:
    return {"type": "context", "elements": [{"type": "mrkdwn", "text": ln} for ln in lines]}


def asked_for(requested_by: str, request: str, progress: str = "", household: str = "") -> Block:
    """ "For @alice: tacos on Friday, … · basket written": what was asked, by whom, so that
    people who could not see the slash command's text know what they approve (and, once it is
    answered, what was answered). The request is the person's words: plain_text, so it shows as
    typed and cannot ping or format. ``progress`` is ours, for the household: no model detail.
    ``household`` is what the workspace said of it ("For 4 · no pork"): people's words, plain."""
    who = f"For <@{requested_by}>:" if requested_by else "For the weekly shop:"
    block = context(who)
    if request:
        shown = request if len(request) <= MAX_SHOWN_REQUEST else request[: MAX_SHOWN_REQUEST - 1]
        shown = shown + ("…" if shown != request else "")
        block["elements"].append({"type": "plain_text", "text": shown, "emoji": False})
    if household:
        block["elements"].append({"type": "plain_text", "text": f"· {household}", "emoji": False})
    if progress:
        block["elements"].append({"type": "mrkdwn", "text": f"· {escape(progress)}"})
    return block


def people(users: Sequence[str]) -> str:
    """``<@A>``, ``<@A> and <@B>``, ``<@A>, <@B> and <@C>``: user IDs as mentions (IDs Slack
    gave us, never model or user text)."""
    mentions = [f"<@{u}>" for u in users]
    if len(mentions) <= 1:
        return "".join(mentions)
    return f"{', '.join(mentions[:-1])} and {mentions[-1]}"


def approved_so_far(approvals: Sequence[str], needed: int, uncounted: Sequence[str] = ()) -> Block:
    """ "Approved by @alice · 1 of 2 needed": a basket a quorum still waits on; and whose
    approval no longer counts, and why ("1 of 2 needed: @bob's approval no longer counts, @bob
    is not an approver now")."""
    so_far = f"Approved by {people(approvals)} · " if approvals else ""
    text = f"{so_far}{len(approvals)} of {needed} needed"
    if uncounted:
        who = people(uncounted)
        one = len(uncounted) == 1
        counts = "'s approval no longer counts" if one else "'s approvals no longer count"
        now = "is not an approver now" if one else "are not approvers now"
        text += f": {who}{counts}, {who} {now}"
    return context(text)


def basket_blocks(
    *,
    round: int,
    max_rounds: int,
    items: Sequence[Item],
    requested_by: str,
    request: str = "",
    progress: str,
    ref: Ref,
    approvals: Sequence[str] = (),
    needed: int = 1,
    uncounted: Sequence[str] = (),
    household: str = "",
    held_until: int | None = None,
    edited: tuple[str, str] | None = None,
) -> list[Block]:
    """A basket waiting for an answer: header, items, what was asked and by whom, who edited it
    and how (``edited``: a user ID and the summary), who has approved it so far (when it needs
    more than one), Approve / Reject / Change… / Edit items; the last basket says so and offers
    no change (Edit items still: it uses no round). One approved and held for its undo window
    (``held_until``) says when it will be ordered, and offers Undo only."""
    value = ref.to_value()
    last = round >= max_rounds
    title = f"Basket {round} of {max_rounds}" + (" — last one: approve or reject" if last else "")
    if held_until is not None:
        return [
            {"type": "header", "text": plain(f"Basket {round} of {max_rounds}", 150)},
            *item_sections(items),
            asked_for(requested_by, request, progress, household),
            context(f"Approved by {people(approvals)} · ordering {slack_date(held_until)}"),
            {
                "type": "actions",
                "block_id": "held_actions",
                "elements": [button("Undo", UNDO, value, style="danger")],
            },
        ]
    change = [] if last else [button("Change…", CHANGE, value)]
    so_far = [approved_so_far(approvals, needed, uncounted)] if approvals or uncounted else []
    return [
        {"type": "header", "text": plain(title, 150)},
        *item_sections(items),
        asked_for(requested_by, request, progress, household),
        *([edited_by(round, *edited)] if edited is not None else []),
        *so_far,
        {
            "type": "actions",
            "block_id": "basket_actions",
            "elements": [
                button("Approve", APPROVE, value, style="primary"),
                {
                    **button("Reject", REJECT, value, style="danger"),
                    "confirm": {
                        "title": plain("Reject this basket?", 100),
                        "text": plain("No order will be placed this week.", 300),
                        "confirm": plain("Reject", 30),
                        "deny": plain("Keep it", 30),
                        "style": "danger",
                    },
                },
                *change,
                button("Edit items", EDIT, value),
            ],
        },
    ]


def edited_by(round: int, user: str, summary: str) -> Block:
    """ "Basket 1 · edited by @bob: −pizza dough, milk 1 → 2 l": the summary in plain_text, so
    item names (the model's and people's words) show as written, mentions and formatting inert."""
    said = context(f"Basket {round} · edited by <@{user}>:")
    said["elements"].append({"type": "plain_text", "text": summary[:300] or "…", "emoji": False})
    return said


def button(text: str, action_id: str, value: str, style: str | None = None) -> Block:
    button: Block = {"type": "button", "text": plain(text, 75), "action_id": action_id}
    button["value"] = value
    if style:
        button["style"] = style
    return button


def answered_blocks(
    *,
    round: int,
    max_rounds: int,
    items: Sequence[Item],
    verdict: str,
    user: str,
    at: int,
    note: str = "",
    asked: Block | None = None,
    approvals: Sequence[str] = (),
) -> list[Block]:
    """The same basket once answered: the buttons replaced by who answered (everyone who
    approved it, for a quorum's order), when, and why; ``asked`` (:func:`asked_for`) keeps what
    was asked above it."""
    when = slack_date(at)
    if not note:
        said = context(f"{verdict} by {people(approvals or [user])} · {when}")
    else:  # the person's words in plain_text: shown as typed, formatting and mentions inert
        said = context(f"{verdict} by <@{user}>:")
        said["elements"] += [
            {"type": "plain_text", "text": note[:MAX_CHANGE_LENGTH], "emoji": False},
            {"type": "mrkdwn", "text": f"· {when}"},
        ]
    return _closed(round, max_rounds, items, said, asked)


def expired_blocks(
    *, round: int, max_rounds: int, items: Sequence[Item], at: int, asked: Block | None = None
) -> list[Block]:
    """A basket nobody answered in time: its buttons replaced by "Expired — nothing ordered"."""
    said = context(f"Expired — nothing ordered · {slack_date(at)}")
    return _closed(round, max_rounds, items, said, asked)


def retired_blocks(*, round: int, max_rounds: int, items: Sequence[Item]) -> list[Block]:
    """A basket whose graph version a deploy removed: its buttons replaced by why they went."""
    said = context("No longer waiting: saved by a retired version of weekly-shop")
    return _closed(round, max_rounds, items, said)


def _closed(
    round: int, max_rounds: int, items: Sequence[Item], said: Block, asked: Block | None = None
) -> list[Block]:
    """A basket that no longer waits: its header and items, what was asked (when known), and
    ``said`` where its buttons were."""
    return [
        {"type": "header", "text": plain(f"Basket {round} of {max_rounds}", 150)},
        *item_sections(items),
        *([asked] if asked is not None else []),
        said,
    ]


def start_again_blocks(text: str, value: str) -> list[Block]:
    """``text`` (ours) and a Start again button whose value names the retired session."""
    return [
        section(text),
        {
            "type": "actions",
            "block_id": "start_again_actions",
            "elements": [button("Start again", START_AGAIN, value, style="primary")],
        },
    ]


def settled_blocks(text: str) -> list[Block]:
    """A message whose button was used: only ``text`` (ours) is left."""
    return [section(text)]
