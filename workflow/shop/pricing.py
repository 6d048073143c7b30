"""A basket's prices at the household's store, as the price-basket step keeps them.

:class:`PricedBasket` is what the checkpoint holds after the step (scope ``shop``, key
``prices``): the store it was priced at, the week's budget then, and one :class:`~.products.Priced`
line per item matched so far, found by the item's :func:`item_key` (its name, quantity and unit:
a note or an aisle changed is no new match). It is complete when every item of the basket has a
line; until then the step goes on in its next superstep (:class:`MorePrices`), so a crash resumes
from what was matched. It can instead say why the basket has no prices (:data:`NO_STORE`, or
what the store's API said: ``problem``), keeping the lines it had: nothing of it blocks an
approval.

:class:`Pricer` is what the step asks for offers: the bot's reads a store's API (``bot.orders``),
with its own limits, cache and concurrency; the workflow never imports the bot. No pricer at all
(a deploy without a store's API) prices nothing and shows nothing.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Protocol

from workflow.persistence.values import (
    check_int,
    check_optional_str,
    check_str,
    fields_of,
)

from .basket import MAX_ITEMS, Basket, Item
from .products import MAX_ID_LENGTH, Priced, match
from .text import one_line

if TYPE_CHECKING:
    from .totals import Total

MAX_STORE_LENGTH = 200  # a store's name as the basket shows it
MAX_PROBLEM_LENGTH = 200
MAX_BUDGET_CENTS = 10_000_000  # $100,000 a week: more is not a household's groceries
# Shown where a basket has no store to be priced at: what to do about it.
NO_STORE = "No store chosen: an admin can choose one in Settings, on the app's Home tab."
# How many items one superstep matches (a checkpoint after each): 17 items are one step, 200
# are 8, so a crash or a Lambda timeout in the middle loses at most this many matches.
CHUNK = 25
_STORE_ID = re.compile(r"[A-Za-z0-9]{1,20}")  # a Kroger locationId is 8 digits


class PricesUnavailable(Exception):
    """The store's API could not price the items: down, past its limit, or refusing the store.
    ``reason`` is short and safe to show ("Kroger is busy: prices will be tried again")."""

    def __init__(self, reason: str) -> None:
        super().__init__(reason)
        self.reason = reason[:MAX_PROBLEM_LENGTH]


@dataclass(frozen=True)
class Where:
    """The store to price at (its ID and the name the basket shows) and the week's budget in
    cents (None: none set)."""

    store_id: str
    store: str
    budget_cents: int | None = None


class Pricer(Protocol):
    def where(self) -> Where | None:
        """The household's store now; None when none is chosen."""
        ...

    async def offers(self, items: Sequence[Item]) -> list[Sequence[Any]]:
        """Each item's candidate offers (``products.Offer``), in the items' order; raises
        :class:`PricesUnavailable` when the store's API cannot answer."""
        ...


def store_note(where: Where) -> str:
    """What the shopper is told of the store its basket is priced at: its names are searched
    there as written, and the week's budget, when one is set."""
    from .totals import money

    budget = (
        f" Keep the basket within our weekly budget of {money(where.budget_cents)} where the "
        "meals allow; never leave out what the week needs to stay under it."
        if where.budget_cents is not None
        else ""
    )
    return (
        "Each item is searched for by its name at our store, a US Kroger: name it as a US grocery "
        "store does (ground beef, not beef mince; cilantro, not coriander; zucchini, not "
        f"courgette), in a few plain words, without brands.{budget}"
    )


def item_key(item: Item) -> str:
    """What a match depends on: the name (case and spacing aside), the quantity and unit."""
    name = " ".join(item.name.casefold().split())
    return f"{name}|{item.quantity_text}|{item.unit.casefold().strip()}"


@dataclass(frozen=True, slots=True, kw_only=True)
class PricedBasket:
    """Basket ``round``'s prices at ``store`` (``store_id``; "" with none chosen), against
    ``budget_cents``: a line per item matched, and ``problem`` when it could not be priced
    (whole or in part)."""

    round: int
    store_id: str = ""
    store: str = ""
    budget_cents: int | None = None
    lines: tuple[Priced, ...] = ()
    problem: str | None = None

    def __post_init__(self) -> None:
        for name in ("store", "problem"):  # the store's text and ours: one line, as shown
            value = getattr(self, name)
            if isinstance(value, str):
                object.__setattr__(self, name, one_line(value).strip())
        check_int(self.round, "PricedBasket.round", ge=1)
        check_str(self.store_id, "PricedBasket.store_id", max_length=MAX_ID_LENGTH)
        if self.store_id and not _STORE_ID.fullmatch(self.store_id):
            raise ValueError("PricedBasket.store_id must be letters or digits")
        check_str(self.store, "PricedBasket.store", max_length=MAX_STORE_LENGTH)
        if self.budget_cents is not None:
            check_int(self.budget_cents, "PricedBasket.budget_cents", ge=0)
            if self.budget_cents > MAX_BUDGET_CENTS:
                raise ValueError(f"PricedBasket.budget_cents is at most {MAX_BUDGET_CENTS}")
        object.__setattr__(self, "lines", tuple(self.lines))
        if len(self.lines) > MAX_ITEMS:
            raise ValueError(f"PricedBasket.lines must be at most {MAX_ITEMS}")
        for line in self.lines:
            if not isinstance(line, Priced):
                raise ValueError("PricedBasket.lines must be Priced values")
        check_optional_str(self.problem, "PricedBasket.problem", max_length=MAX_PROBLEM_LENGTH)
        if not self.store_id and self.lines:
            raise ValueError("PricedBasket lines need the store they were priced at")

    def by_key(self) -> dict[str, Priced]:
        return {item_key(line.item): line for line in self.lines}

    def line_for(self, item: Item) -> Priced | None:
        return self.by_key().get(item_key(item))

    def left(self, basket: Basket) -> list[Item]:
        """The items of ``basket`` with no line yet, each once, in order."""
        known, seen, out = self.by_key(), set(), []
        for item in basket.items:
            key = item_key(item)
            if key not in known and key not in seen:
                seen.add(key)
                out.append(item)
        return out

    def complete(self, basket: Basket) -> bool:
        return not self.left(basket)

    def total(self, items: Sequence[Item]) -> Total:
        from .totals import basket_total

        """The total of ``items`` at these prices: an item without a line counts as unpriced."""
        known = self.by_key()
        lines = [known.get(item_key(item)) for item in items]
        priced = [
            line if line is not None else Priced.unmatched(item, _UNSEEN)
            for line, item in zip(lines, items, strict=True)
        ]
        return basket_total(priced, self.budget_cents)

    def to_json(self) -> dict[str, Any]:
        return {
            "round": self.round,
            "store_id": self.store_id,
            "store": self.store,
            "budget_cents": self.budget_cents,
            "lines": [line.to_json() for line in self.lines],
            "problem": self.problem,
        }

    @classmethod
    def from_json(cls, data: Any) -> PricedBasket:
        data = fields_of(data, "PricedBasket", PRICED_FIELDS, PRICED_FIELDS)
        lines = data["lines"]
        if not isinstance(lines, list) or len(lines) > MAX_ITEMS:
            raise ValueError(f"PricedBasket.lines must be a list of at most {MAX_ITEMS}")
        return cls(
            **{
                **data,
                "lines": tuple(
                    Priced.from_json(line, f"PricedBasket.lines[{i}]")
                    for i, line in enumerate(lines)
                ),
            }
        )


PRICED_FIELDS = ("round", "store_id", "store", "budget_cents", "lines", "problem")
_UNSEEN = "no product found"  # an item not matched yet counts as one without a price


def kept_lines(before: PricedBasket | None, where: Where, basket: Basket) -> tuple[Priced, ...]:
    """The lines of ``before`` that still hold for ``basket`` at ``where``: those of items it
    still has, matched at the same store (another store's prices are not this one's), each with
    the item as it is now (its note and aisle)."""
    if before is None or before.store_id != where.store_id:
        return ()
    known = before.by_key()
    kept: dict[str, Priced] = {}
    for item in basket.items:
        line = known.get(item_key(item))
        if line is not None and item_key(item) not in kept:
            kept[item_key(item)] = Priced(
                item=item, offer=line.offer, count=line.count, reason=line.reason
            )
    return tuple(kept.values())


def matched(items: Iterable[Item], offers: Sequence[Sequence[Any]]) -> list[Priced]:
    """Each item's match among its offers (``products.match``)."""
    return [match(item, list(found)) for item, found in zip(items, offers, strict=True)]


@dataclass(frozen=True, slots=True, kw_only=True)
class MorePrices:
    """The price-basket step's note to itself: basket ``round`` has items left to match."""

    round: int

    def __post_init__(self) -> None:
        check_int(self.round, "MorePrices.round", ge=1)

    def to_json(self) -> dict[str, Any]:
        return {"round": self.round}

    @classmethod
    def from_json(cls, data: Any) -> MorePrices:
        return cls(**fields_of(data, "MorePrices", ("round",), ("round",)))
