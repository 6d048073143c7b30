"""Block Kit for the basket message, in each state it goes through: pure functions of data.

    waiting     header, items by aisle, what was asked, by whom and for how many, what "Basket
                1 of 3" means, who edited it, approvals so far; Approve / Reject / Change… /
                Edit items (the last round: no Change…)
    held        approved, held for its undo window: when it will be ordered; Undo only
    answered    the buttons replaced by who answered, when, and why
    expired     …by "Expired — nothing ordered"
    retired     …by why they went (a deploy removed the basket's graph version)

Every basket but a retired one ends with its feedback buttons ("Good basket" / "Not good",
``bot.slack.feedback_buttons``): waiting and held from the button's own session, answered and
expired when the caller names the session (``session_id``).

The items by aisle, with their prices (``bot.slack.basket_items``), are also what the thread
lists as ordered (``bot.slack.order_said``) and the Home tab shows (``bot.slack.home_view``).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

from .basket_items import (  # (item_sections and its limits: shown by three surfaces)
    item_sections,
    prices_block,
)
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
    slack_date,
)
from .feedback_buttons import feedback_block

if TYPE_CHECKING:  # the workflow: imported by the lazy runs that post baskets, not by an ack
    from workflow.shop.basket import Item
    from workflow.shop.pricing import PricedBasket

MAX_SHOWN_REQUEST = 300  # of the request's text on a basket; the whole of it is in the prompt


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
            feedback_block(ref.session_id, round),
        ]
    change = [] if last else [button("Change…", CHANGE, value)]
    so_far = [approved_so_far(approvals, needed, uncounted)] if approvals or uncounted else []
    return _fit(
        [
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
            feedback_block(ref.session_id, round),
        ]
    )


MAX_BLOCKS = 50  # a message's (Block Kit); the items take at most MAX_ITEM_BLOCKS of them


def _fit(blocks: list[Block]) -> list[Block]:
    """``blocks`` within a message's 50: a basket at its most (every item block, edited, a
    quorum's approvals so far, and its feedback buttons) is one over, so its first two
    neighbouring context lines (what was asked, what "Basket 1 of 3" means) share one context
    block (at most 10 elements), in the same order."""
    fitted = list(blocks)
    i = 0
    while len(fitted) > MAX_BLOCKS and i + 1 < len(fitted):
        one, two = fitted[i], fitted[i + 1]
        both = one["type"] == two["type"] == "context"
        if both and len(one["elements"]) + len(two["elements"]) <= 10:
            fitted[i : i + 2] = [{**one, "elements": [*one["elements"], *two["elements"]]}]
        else:
            i += 1
    return fitted


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
    session_id: str = "",
) -> list[Block]:
    """The same basket once answered: the buttons replaced by who answered (everyone who
    approved it, for a quorum's order), when, and why; ``asked`` (:func:`asked_for`) keeps what
    was asked above it, and ``prices`` what it cost as it was answered. With ``session_id``, its
    feedback buttons stay under it."""
    when = slack_date(at)
    if not note:
        said = context(f"{verdict} by {people(approvals or [user])} · {when}")
    else:  # the person's words in plain_text: shown as typed, formatting and mentions inert
        said = context(f"{verdict} by <@{user}>:")
        said["elements"] += [
            {"type": "plain_text", "text": note[:MAX_CHANGE_LENGTH], "emoji": False},
            {"type": "mrkdwn", "text": f"· {when}"},
        ]
    blocks = _closed(round, max_rounds, items, said, asked, prices)
    return blocks + ([feedback_block(session_id, round)] if session_id else [])


def expired_blocks(
    *,
    round: int,
    max_rounds: int,
    items: Sequence[Item],
    at: int,
    asked: Block | None = None,
    session_id: str = "",
) -> list[Block]:
    """A basket nobody answered in time: its buttons replaced by "Expired — nothing ordered"
    (with ``session_id``, its feedback buttons stay under it)."""
    said = context(f"Expired — nothing ordered · {slack_date(at)}")
    blocks = _closed(round, max_rounds, items, said, asked)
    return blocks + ([feedback_block(session_id, round)] if session_id else [])


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
