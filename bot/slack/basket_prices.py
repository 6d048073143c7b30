"""What a priced basket shows (``workflow.shop.pricing.PricedBasket``): the product and cost beside
each item, and under the items the estimated total at the store, the week's budget against it,
and why prices are missing where they are.

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

from .blocks import Block

if TYPE_CHECKING:
    from workflow.shop.basket import Item
    from workflow.shop.pricing import PricedBasket
    from workflow.shop.products import Priced

MAX_SAID = 600  # the prices' line under the items
# A product's description beside an item: with the count, the size (at most 50), the cost and
# its notes, within basket_message's MAX_PRODUCT_CHARS.
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
