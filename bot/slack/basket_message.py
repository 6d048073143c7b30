"""Block Kit for the basket message, in each state it goes through: pure functions of data.

    waiting     header, items by aisle, what was asked, by whom and for how many, what "Basket
                1 of 3" means, who edited it, approvals so far; Approve / Reject / Change… /
                Edit items (the last round: no Change…)
    held        approved, held for its undo window: when it will be ordered; Undo only
    answered    the buttons replaced by who answered, when, and why
    expired     …by "Expired — nothing ordered"
    retired     …by why they went (a deploy removed the basket's graph version)

The items by aisle (:func:`item_sections`) are also what the thread lists as ordered
(``bot.slack.order_said``) and the Home tab shows (``bot.slack.home_view``). Slack refuses a
message whose blocks hold too much text in all (``msg_blocks_too_long``, undocumented, seen from
about 11,000 characters), so the items shown are capped by a total budget and the rest are
counted, not dropped silently.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

from .basket_prices import prices_block, product_said
from .blocks import (
    APPROVE,
    CHANGE,
    EDIT,
    MAX_CHANGE_LENGTH,
    REJECT,
    UNDO,
    Block,
    Ref,
    button,
    context,
    escape,
    people,
    plain,
    section,
    slack_date,
)

if TYPE_CHECKING:  # the workflow: imported by the lazy runs that post baskets, not by an ack
    from workflow.shop.basket import Item
    from workflow.shop.pricing import PricedBasket

MAX_SHOWN_REQUEST = 300  # of the request's text on a basket; the whole of it is in the prompt

SECTION_LIMIT = 3000
# Blocks for the items, headings and overflow line included: a message holds at most 50, and a
# basket's header, context, rounds, who edited it, approvals so far, prices and actions take 7.
MAX_ITEM_BLOCKS = 43
# Item text shown in one message, all sections together: well under the ~11,000 characters at
# which Slack has been seen to answer msg_blocks_too_long (bolt-js issues #2509 and #2867).
ITEMS_TEXT_BUDGET = 8000
MAX_ITEM_CHARS = 300
MAX_PRODUCT_CHARS = 200  # the product and its cost beside an item (``basket_prices``)


def _clip(text: str, most: int) -> str:
    return text if len(text) <= most else text[: most - 1] + "…"


def _item_line(item: Item, prices: PricedBasket | None = None) -> str:
    """``• 600 g chicken thighs``, and its product and cost when the basket is priced."""
    line = " ".join(item.line().splitlines())  # one item, one line: a newline would fake two
    said = "" if prices is None else product_said(prices.line_for(item))
    return f"• {_clip(line, MAX_ITEM_CHARS)}{_clip(said, MAX_PRODUCT_CHARS)}"


def _left_out(hidden: int, total: int) -> str:
    more = f"{hidden} more item" if hidden == 1 else f"{hidden} more items"
    return f"_…and {more} not shown here (approving orders all {total})_"


def aisle_groups(items: Sequence[Item]) -> list[tuple[str, list[Item]]]:
    """The items by aisle, in shop order (``workflow.shop.basket.aisle_groups``)."""
    from workflow.shop.basket import aisle_groups as by_aisle

    return by_aisle(items)


def item_sections(items: Sequence[Item], prices: PricedBasket | None = None) -> list[Block]:
    """The items, one line each and quantity first, grouped by aisle under a bold heading, in
    plain_text sections of at most 3000 characters, within the message's text budget and
    :data:`MAX_ITEM_BLOCKS`; items that do not fit are counted in a last line, never dropped.
    With ``prices``, each item's product and cost beside it (``basket_prices``), the store's
    text in plain_text as the items are.

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
            line = _item_line(item, prices)
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


def rounds_said(round: int, max_rounds: int) -> Block:
    """What "Basket 1 of 3" means: the rounds of changes a week's basket has (a change that
    changes nothing uses none, and says so in the thread; Edit items uses none either)."""
    if max_rounds <= 1:
        text = "One basket a week: approve or reject it. Edit items still changes it."
    elif round >= max_rounds:
        text = f"Basket {max_rounds} is the last: no more changes. Edit items still changes it."
    else:
        text = (
            f"Change… writes basket {round + 1}; after basket {max_rounds} you can only approve"
            " or reject. Edit items changes this one without using a basket."
        )
    return context(text)


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
    prices: PricedBasket | None = None,
) -> list[Block]:
    """A basket waiting for an answer: header, items, what was asked and by whom, who edited it
    and how (``edited``: a user ID and the summary), who has approved it so far (when it needs
    more than one), Approve / Reject / Change… / Edit items; the last basket says so and offers
    no change (Edit items still: it uses no round); each says what its rounds are
    (:func:`rounds_said`). One approved and held for its undo window
    (``held_until``) says who approved it and when it will be ordered, not how the shopper is
    getting on ("waiting for an answer" would contradict it), and offers Undo only. A priced
    basket (``prices``) shows each item's product and cost, and its total under them."""
    value = ref.to_value()
    last = round >= max_rounds
    title = f"Basket {round} of {max_rounds}" + (" — last one: approve or reject" if last else "")
    if held_until is not None:
        return [
            {"type": "header", "text": plain(f"Basket {round} of {max_rounds}", 150)},
            *item_sections(items, prices),
            *prices_block(prices, items),
            asked_for(requested_by, request, household=household),
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
        *item_sections(items, prices),
        *prices_block(prices, items),
        asked_for(requested_by, request, progress, household),
        rounds_said(round, max_rounds),
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
    prices: PricedBasket | None = None,
) -> list[Block]:
    """The same basket once answered: the buttons replaced by who answered (everyone who
    approved it, for a quorum's order), when, and why; ``asked`` (:func:`asked_for`) keeps what
    was asked above it, and ``prices`` what it cost as it was answered."""
    when = slack_date(at)
    if not note:
        said = context(f"{verdict} by {people(approvals or [user])} · {when}")
    else:  # the person's words in plain_text: shown as typed, formatting and mentions inert
        said = context(f"{verdict} by <@{user}>:")
        said["elements"] += [
            {"type": "plain_text", "text": note[:MAX_CHANGE_LENGTH], "emoji": False},
            {"type": "mrkdwn", "text": f"· {when}"},
        ]
    return _closed(round, max_rounds, items, said, asked, prices)


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
    round: int,
    max_rounds: int,
    items: Sequence[Item],
    said: Block,
    asked: Block | None = None,
    prices: PricedBasket | None = None,
) -> list[Block]:
    """A basket that no longer waits: its header and items (with their prices, when known),
    what was asked (when known), and ``said`` where its buttons were."""
    return [
        {"type": "header", "text": plain(f"Basket {round} of {max_rounds}", 150)},
        *item_sections(items, prices),
        *prices_block(prices, items),
        *([asked] if asked is not None else []),
        said,
    ]
