"""What a priced basket costs, against the week's budget, in the words the basket shows.

:func:`basket_total` adds the lines that have a price (``workflow.shop.products.Priced``) and
counts those that have none; :func:`total_line` and :func:`budget_line` say it:
"≈ $61.40 at Kroger, 2nd Ave; 2 items without a price", "$6.40 over this week's $55". The total
is an estimate (≈): the store's price at matching, which may change before the order. Money is
US dollars, written by ``money.money`` alone: Kroger's stores are all in the US, and its API
answers in dollars. A store's name is the store's text: escape it where it is shown.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from .basket import count
from .money import money

__all__ = ["Total", "basket_total", "budget_line", "money", "total_line"]
from .products import Priced


@dataclass(frozen=True, slots=True)
class Total:
    """The priced lines' sum in cents, how many lines have no price, and the week's budget
    in cents (None when the household set none)."""

    cents: int
    unpriced: int
    budget_cents: int | None = None

    @property
    def over_cents(self) -> int | None:
        """How far the total is over the budget (negative: under); None without a budget."""
        return None if self.budget_cents is None else self.cents - self.budget_cents


def basket_total(priced: Sequence[Priced], budget_cents: int | None = None) -> Total:
    """The total of ``priced`` lines, against ``budget_cents`` if the household set one."""
    if budget_cents is not None and budget_cents < 0:
        raise ValueError("a budget is never negative")
    costs = [line.cost_cents for line in priced]
    return Total(
        cents=sum(cost for cost in costs if cost is not None),
        unpriced=sum(1 for cost in costs if cost is None),
        budget_cents=budget_cents,
    )


def total_line(total: Total, store: str) -> str:
    """``≈ $61.40 at Kroger, 2nd Ave; 2 items without a price``; the unpriced part only when
    some are, and no sum at all when no line has a price (an "≈ $0" would be untrue)."""
    missing = f"{count(total.unpriced)} without a price"
    if total.cents == 0 and total.unpriced:
        return f"No prices at {store}: {missing}"
    line = f"≈ {money(total.cents)} at {store}"
    return f"{line}; {missing}" if total.unpriced else line


def budget_line(total: Total) -> str | None:
    """``$6.40 over this week's $55``, ``$3.20 under this week's $55``, ``Exactly this week's
    $55``; None without a budget. Over is said whatever is unpriced (the missing prices only add
    to it); under says that it is before the items without a price; with no price at all,
    nothing is compared (all of a budget "under" would be untrue)."""
    over = total.over_cents
    if over is None or total.budget_cents is None:
        return None
    budget = f"this week's {money(total.budget_cents)}"
    if total.cents == 0 and total.unpriced:
        return f"No prices to compare with {budget}"
    if over > 0:
        return f"{money(over)} over {budget}"
    before = f", before {count(total.unpriced)} without a price" if total.unpriced else ""
    if over == 0:
        return f"Exactly {budget}{before}"
    return f"{money(-over)} under {budget}{before}"
