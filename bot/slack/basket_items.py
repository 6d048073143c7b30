"""A basket's items as Slack shows them: by aisle, one line each, and, when it is priced
(``workflow.shop.pricing.PricedBasket``), the product and cost beside each item and under the
items the estimated total at the store, the week's budget against it, and why prices are missing
where they are. The basket message, the order's thread and the Home tab show items this way.
Slack refuses a message whose blocks hold too much text in all (``msg_blocks_too_long``,
undocumented, seen from about 11,000 characters), so the items shown are capped by a total
budget and the rest are counted, not dropped silently.

    • 600 g chicken thighs → 2 × Kroger Boneless Skinless Chicken Thighs, 16 oz · $13.98
    • 1 jar tahini → no product found
    ≈ $61.40 at Kroger Vine St; 1 item without a price · $6.40 over this week's $55

The store's text (a product's description, a store's name) is the store's, not ours: it goes in
plain_text like the items, so nothing in it formats or pings. A basket with no prices says so
and why (no store chosen, or the store's API could not answer): never a total that leaves them
out without a word.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

from .blocks import Block, section

if TYPE_CHECKING:  # the workflow: imported by the lazy runs that post baskets, not by an ack
    from workflow.shop.basket import Item
    from workflow.shop.pricing import PricedBasket
    from workflow.shop.products import Priced

MAX_SAID = 600  # the prices' line under the items
# A product's description beside an item: with the count, the size (at most 50), the cost and
# its notes, within MAX_PRODUCT_CHARS.
MAX_DESCRIPTION = 100


def product_said(line: Priced | None) -> str:
    """`` → 2 × Kroger Chicken Thighs, 16 oz · $13.98 (on offer)``; `` → out of stock``; ""
    for an item not matched (its prices could not be asked for: said under the items)."""
    from workflow.shop.totals import money

    if line is None:
        return ""
    offer, cost = line.offer, line.cost_cents
    if offer is None or cost is None:
        return f" → {line.reason}"
    size = f", {offer.size}" if offer.size else ""
    times = f"{line.count} × " if line.count > 1 else ""
    promo = " (on offer)" if offer.on_offer else ""
    low = " (low stock)" if offer.stock_level == "LOW" else ""
    described = offer.description
    if len(described) > MAX_DESCRIPTION:  # the store's words clipped, never the cost
        described = described[: MAX_DESCRIPTION - 1] + "…"
    return f" → {times}{described}{size} · {money(cost)}{promo}{low}"


def prices_said(prices: PricedBasket, items: Sequence[Item]) -> str:
    """The line under the items: the total and the budget, or why there are no prices."""
    from workflow.shop.totals import budget_line, total_line

    parts: list[str] = []
    if prices.store_id:
        total = prices.total(items)
        parts.append(total_line(total, prices.store))
        if (budget := budget_line(total)) is not None:
            parts.append(budget)
    if prices.problem:
        parts.append(prices.problem)
    return " · ".join(parts)[:MAX_SAID]


def prices_block(prices: PricedBasket | None, items: Sequence[Item]) -> list[Block]:
    """The prices' context block under the items (none for a basket never priced)."""
    said = "" if prices is None else prices_said(prices, items)
    if not said:
        return []
    return [{"type": "context", "elements": [{"type": "plain_text", "text": said, "emoji": False}]}]


SECTION_LIMIT = 3000
# Blocks for the items, headings and overflow line included: a message holds at most 50, and a
# basket's header, context, rounds, who edited it, approvals so far, prices and actions take 7.
MAX_ITEM_BLOCKS = 43
# Item text shown in one message, all sections together: well under the ~11,000 characters at
# which Slack has been seen to answer msg_blocks_too_long (bolt-js issues #2509 and #2867).
ITEMS_TEXT_BUDGET = 8000
MAX_ITEM_CHARS = 300
MAX_PRODUCT_CHARS = 200  # the product and its cost beside an item (:func:`product_said`)


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
    With ``prices``, each item's product and cost beside it (:func:`product_said`), the store's
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
