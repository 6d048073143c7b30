"""A basket item matched to a product at the household's store, and what it costs.

:class:`Offer` is a product as a store offers it (its UPC, description, size as the shelf label
says it, prices in cents, stock, aisle); :class:`Priced` is one item's match: the chosen offer
and how many to buy, or no offer and why (:data:`REASONS`). Both cross checkpoints (the
workflow step that matches a basket keeps its result there, so a crash resumes from what was
matched), so they are plain frozen classes checked as they are built, as ``basket.py``'s are.
:func:`match` chooses. Nothing here calls a store: the bot reads a store's answer into offers
(``bot.orders.kroger_values.Product`` has these fields), and the workflow never imports the bot.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from workflow.persistence.values import (
    check_int,
    check_optional_str,
    check_str,
    fields_of,
)

from .basket import Item
from .names import words
from .text import one_line

MAX_ID_LENGTH = 50  # a product ID (Kroger's are 13 digits)
MAX_DESCRIPTION_LENGTH = 300
MAX_BRAND_LENGTH = 100
MAX_SIZE_LENGTH = 50
MAX_AISLE_LENGTH = 100
MAX_CENTS = 1_000_000  # $10,000 a product: more is not a grocery price
# How many of one product a line may buy. A case of 24 is the most a grocery line sensibly
# holds; needing more means a size or a quantity was misread ("5 kg" of saffron in 1 oz jars),
# and putting 200 jars in a person's cart is worse than leaving the item without a price.
MAX_COUNT = 24
# Stock as Kroger says it (``inventory.stockLevel``); None when the store does not say.
STOCK_LEVELS = ("HIGH", "LOW", "TEMPORARILY_OUT_OF_STOCK")
OUT_OF_STOCK = "TEMPORARILY_OUT_OF_STOCK"
# Why an item has no product, shown beside it on the basket.
NOT_FOUND = "no product found"
NOT_IN_STOCK = "out of stock"
NO_PRICE = "no price at this store"
NO_SIZE = "no size we can compare"
TOO_MANY = f"needs more than {MAX_COUNT} packs"
# An aisle whose products are sold fresh (Kroger's aisle descriptions: "Produce", "Meat &
# Seafood" at the stand-in; the real API's exact words are unconfirmed).
FRESH_AISLE_WORDS = frozenset({"produce", "meat", "seafood"})
REASONS = (NOT_FOUND, NOT_IN_STOCK, NO_PRICE, NO_SIZE, TOO_MANY)
_UPC = re.compile(r"[0-9]{13}")
_ID = re.compile(r"[A-Za-z0-9-]+")


def _cents(value: Any, where: str) -> None:
    if value is not None and not 1 <= check_int(value, where) <= MAX_CENTS:
        raise ValueError(f"{where} must be 1 to {MAX_CENTS} cents, not {value}")


def _one_line(self: Any, *names: str) -> None:
    for name in names:
        value = getattr(self, name)
        if isinstance(value, str):
            object.__setattr__(self, name, one_line(value).strip())


@dataclass(frozen=True, slots=True, kw_only=True)
class Offer:
    """A product as one store offers it: prices in cents (None where the store gives none;
    the price paid is the promotion when there is one), its stock level (one of
    :data:`STOCK_LEVELS`, None when not said: taken as in stock) and aisle ("" when not said).
    Its text is the store's: stripped of control characters here, escaped where it is shown."""

    product_id: str  # 1 to MAX_ID_LENGTH letters, digits or "-"
    upc: str  # 13 digits
    description: str  # 1 to MAX_DESCRIPTION_LENGTH characters
    brand: str = ""
    size: str = ""  # as the shelf label says it: "16 oz", "2 x 400 g"
    regular_cents: int | None = None  # 1 to MAX_CENTS
    promo_cents: int | None = None  # 1 to MAX_CENTS
    stock_level: str | None = None
    aisle: str = ""

    def __post_init__(self) -> None:
        _one_line(self, "description", "brand", "size", "aisle")
        check_str(self.product_id, "Offer.product_id", min_length=1, max_length=MAX_ID_LENGTH)
        if not _ID.fullmatch(self.product_id):
            raise ValueError("Offer.product_id must be letters, digits or '-'")
        if not _UPC.fullmatch(check_str(self.upc, "Offer.upc")):
            raise ValueError("Offer.upc must be 13 digits")
        check_str(
            self.description, "Offer.description", min_length=1, max_length=MAX_DESCRIPTION_LENGTH
        )
        check_str(self.brand, "Offer.brand", max_length=MAX_BRAND_LENGTH)
        check_str(self.size, "Offer.size", max_length=MAX_SIZE_LENGTH)
        _cents(self.regular_cents, "Offer.regular_cents")
        _cents(self.promo_cents, "Offer.promo_cents")
        if self.stock_level is not None and self.stock_level not in STOCK_LEVELS:
            raise ValueError(f"Offer.stock_level must be one of {', '.join(STOCK_LEVELS)}")
        check_str(self.aisle, "Offer.aisle", max_length=MAX_AISLE_LENGTH)

    @property
    def on_offer(self) -> bool:
        """Whether the promotional price is what one costs now: there is one, and it is below
        the regular price (a "promotion" at or above it is no offer, and not charged)."""
        promo, regular = self.promo_cents, self.regular_cents
        return promo is not None and (regular is None or promo < regular)

    @property
    def price_cents(self) -> int | None:
        """What one costs now: the promotional price when it is an offer (:attr:`on_offer`)."""
        return self.promo_cents if self.on_offer else self.regular_cents

    @property
    def in_stock(self) -> bool:
        return self.stock_level != OUT_OF_STOCK

    @property
    def fresh(self) -> bool:
        """Sold fresh, by its aisle (produce, meat, seafood): its pieces may be counted by a
        typical weight (``sizes.PIECE_GRAMS``). No aisle said: not known, so not."""
        return bool(FRESH_AISLE_WORDS & set(words(self.aisle)))

    def to_json(self) -> dict[str, Any]:
        return {name: getattr(self, name) for name in OFFER_FIELDS}

    @classmethod
    def from_json(cls, data: Any, where: str = "Offer") -> Offer:
        return cls(**fields_of(data, where, OFFER_FIELDS, ("product_id", "upc", "description")))


OFFER_FIELDS = (
    *("product_id", "upc", "description", "brand", "size"),
    *("regular_cents", "promo_cents", "stock_level", "aisle"),
)


@dataclass(frozen=True, slots=True, kw_only=True)
class Priced:
    """One basket item's match: the item as it was matched (so an edit re-matches only what
    changed), the chosen offer and how many to buy to cover its quantity (``count``), or no
    offer and why (``reason``, one of :data:`REASONS`, ``count`` 0). An offer chosen always has
    a price, so a line's cost (:attr:`cost_cents`) is never claimed apart from it."""

    item: Item
    offer: Offer | None
    count: int  # 1 to MAX_COUNT with an offer, 0 without
    reason: str | None = None  # with no offer only

    def __post_init__(self) -> None:
        if not isinstance(self.item, Item):
            raise ValueError("Priced.item must be an Item")
        if self.offer is not None and not isinstance(self.offer, Offer):
            raise ValueError("Priced.offer must be an Offer")
        check_int(self.count, "Priced.count", ge=0)
        check_optional_str(self.reason, "Priced.reason")
        if self.offer is None:
            if self.reason not in REASONS or self.count != 0:
                raise ValueError("Priced without an offer has a reason of REASONS and count 0")
        elif self.reason is not None or not 1 <= self.count <= MAX_COUNT:
            raise ValueError(f"Priced with an offer has no reason and a count of 1 to {MAX_COUNT}")
        elif self.offer.price_cents is None:
            raise ValueError("Priced.offer must have a price")

    @property
    def cost_cents(self) -> int | None:
        """What the line costs: ``count`` at the offer's price; None without an offer."""
        if self.offer is None or self.offer.price_cents is None:
            return None
        return self.count * self.offer.price_cents

    def to_json(self) -> dict[str, Any]:
        return {
            "item": self.item.to_json(),
            "offer": None if self.offer is None else self.offer.to_json(),
            "count": self.count,
            "reason": self.reason,
        }

    @classmethod
    def from_json(cls, data: Any, where: str = "Priced") -> Priced:
        fields = ("item", "offer", "count", "reason")
        data = fields_of(data, where, fields, ("item", "offer", "count"))
        offer = data["offer"]
        return cls(
            item=Item.from_json(data["item"], f"{where}.item"),
            offer=None if offer is None else Offer.from_json(offer, f"{where}.offer"),
            count=data["count"],
            reason=data.get("reason"),
        )

    @classmethod
    def unmatched(cls, item: Item, reason: str) -> Priced:
        return cls(item=item, offer=None, count=0, reason=reason)


# Words that make a description another product made from the item ("Peanut Butter" is not
# peanuts, "Pasta Sauce" not pasta, "Egg Noodles" not eggs), as ``names.words`` writes them.
_MADE_FROM = "sauce butter seasoning paste stock broth mix juice oil chip dressing soup spread"
MADE_FROM = frozenset(
    f"{_MADE_FROM} extract powder syrup cracker bar candy drink soda jam jelly yogurt pie cake "
    "cereal salsa ketchup vinegar milk cream creamer flour noodle bread".split(" ")
)
# ...unless they come after these: "Tuna in Olive Oil" is tuna.
_PACKED = frozenset({"in", "with", "and"})
# A word before a noun that makes it another kind of thing than the noun alone names: "onions"
# are not green onions, "potatoes" not sweet potatoes, "milk" not coconut milk, "butter" not
# peanut butter ("peanut" is not made from butter, so MADE_FROM cannot say it). Only when the
# item's name lacks the word: "green onions" finds them.
OTHER_KINDS: dict[str, frozenset[str]] = {
    "onion": frozenset({"green", "spring"}),
    "potato": frozenset({"sweet"}),
    "milk": frozenset({"coconut", "almond", "oat", "soy", "chocolate", "condensed", "evaporated"}),
    "butter": frozenset({"peanut", "almond", "apple", "cashew", "cocoa"}),
    "cheese": frozenset({"cream", "cottage"}),
    "bean": frozenset({"green", "jelly", "coffee"}),
    "cream": frozenset({"sour", "ice"}),
}


def name_match(item: Item, offer: Offer) -> int:
    """How many of the item's name's words the offer's description holds (as ``names.words``
    reads them: "Tomatoes" is "tomato"), or 0 unless that is more than half of them. So a
    one- or two-word name needs all its words ("soured cream" is not "Vanilla Ice Cream",
    "beef mince" not "Ground Beef": nothing found is the truth), and "chopped plum tomatoes"
    finds "Chopped Tomatoes". A description that names something made from the item
    (:data:`MADE_FROM`, a word the item's name lacks, before any "in", "with" or "and") is no
    match, and so is one whose noun is another kind (:data:`OTHER_KINDS`: "Green Onions" for
    "onions"). A name's words are not its meaning still, beyond those tables; the household sees
    the product beside the item. The name as a US store says it (``store_names``: "beef mince"
    is "ground beef") counts too."""
    from .store_names import store_name  # (only where baskets are priced: not every lazy run)

    described = words(offer.description)
    head = next((described[:i] for i, w in enumerate(described) if w in _PACKED), described)
    best = 0
    for name in dict.fromkeys((item.name, store_name(item.name))):  # "beef mince": ground beef
        wanted = set(words(name))
        if (MADE_FROM & set(head)) - wanted or _other_kind(wanted, head):
            continue
        found = len(wanted & set(described))
        best = max(best, found if found * 2 > len(wanted) else 0)
    return best


def _other_kind(wanted: set[str], head: Sequence[str]) -> bool:
    """Whether ``head`` puts a word of :data:`OTHER_KINDS` right before a noun the item names,
    a word the item's name lacks ("Green Onions" for "onions")."""
    return any(
        before in OTHER_KINDS.get(noun, ()) and before not in wanted
        for before, noun in zip(head, head[1:], strict=False)
        if noun in wanted
    )


def match(item: Item, offers: Sequence[Offer]) -> Priced:
    """The offer that buys ``item`` for least, and how many of it; or none and why.

    The rule, in order. The candidates are the offers that match the item's name best
    (:func:`name_match`: all of its words beat some; none holds more than half of them:
    :data:`NOT_FOUND`): a weaker name is never bought because the better one is out, since a
    substitute is the household's to choose. Of those, the ones in stock (none:
    :data:`NOT_IN_STOCK`), with a price (none: :data:`NO_PRICE`), of a size that compares with
    the item's quantity (``workflow.shop.sizes.cover``; none: :data:`NO_SIZE`) and needing at
    most :data:`MAX_COUNT` of it (none: :data:`TOO_MANY`). The one with the lowest cost to cover
    the quantity wins (``count``, rounded up, at the price paid), then the lowest unit price, then
    the lowest product ID (so a match is the same every time). An item with no quantity of its
    own (from a ``Basket@1``) buys one of the cheapest.
    """
    from . import sizes  # (only where baskets are priced: not every lazy run)

    scored = [(name_match(item, offer), offer) for offer in offers]
    best = max((score for score, _ in scored), default=0)
    if not best:
        return Priced.unmatched(item, NOT_FOUND)
    stocked = [offer for score, offer in scored if score == best and offer.in_stock]
    if not stocked:
        return Priced.unmatched(item, NOT_IN_STOCK)
    priced = [(offer, offer.price_cents) for offer in stocked if offer.price_cents is not None]
    if not priced:
        return Priced.unmatched(item, NO_PRICE)
    if item.quantity is None:
        cheapest = min(priced, key=lambda entry: (entry[1], entry[0].product_id))
        return Priced(item=item, offer=cheapest[0], count=1)
    ranked: list[tuple[int, float, str, int, Offer]] = []
    for offer, price in priced:
        covered = sizes.cover(item, offer.size, by_piece=offer.fresh)
        if covered is not None:
            cost, unit_price = covered.count * price, price / covered.per
            ranked.append((cost, unit_price, offer.product_id, covered.count, offer))
    if not ranked:
        return Priced.unmatched(item, NO_SIZE)
    within = [entry for entry in ranked if entry[3] <= MAX_COUNT]
    if not within:
        return Priced.unmatched(item, TOO_MANY)
    chosen = min(within, key=lambda entry: entry[:3])
    return Priced(item=item, offer=chosen[4], count=chosen[3])
