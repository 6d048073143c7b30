"""What a week's shop is made of: the items, the basket, the week's request, the progress event.

:class:`Item` (with its limits, :data:`AISLES`, and its quantity as a person writes it),
:class:`Basket` and :class:`ShopRequest`, each with its schema version and the upgrade from its
version 1; :func:`aisle_groups` and :func:`count` show them; :class:`ShopProgress` is what the
executors say as they go. The answer about a basket (``BasketDecision``) is ``decision.py``'s: it
can carry a basket's items (an edit), so it is built on this module and not the other way.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, field
from decimal import Decimal
from typing import Any

from workflow.engine.events import WorkflowEvent
from workflow.persistence.values import (
    check_int,
    check_optional_str,
    check_str,
    check_str_list,
    fields_of,
)

from .household import Household
from .text import one_line

MAX_ITEMS = 500
MAX_ITEM_LENGTH = 500  # an item's name
MAX_UNIT_LENGTH = 30
MAX_NOTE_LENGTH = 300
MAX_QUANTITY = 100_000
# The least quantity a new item may have, the model's and a person's (``check_new_quantity``):
# 0.1 g written as kg (a pinch of saffron is 0.0004 kg); less is a mistake or a probe. Smaller
# ones read back from older checkpoints still read.
MIN_QUANTITY = 0.0001
# Where an item is found in a shop: the basket is shown grouped in this order.
AISLES = (
    "produce",
    "meat and fish",
    "dairy and eggs",
    "bakery",
    "pantry",
    "frozen",
    "drinks",
    "household",
    "other",
)


def _quantity(value: Any, where: str) -> int | float:
    """A positive number as JSON holds it (an int or a finite float, never a bool or a string)."""
    if isinstance(value, bool) or not isinstance(value, int | float):
        raise ValueError(f"{where} must be a number, not {type(value).__name__}")
    if not math.isfinite(value) or not 0 < value <= MAX_QUANTITY:
        raise ValueError(f"{where} must be more than 0 and at most {MAX_QUANTITY}")
    return value


def check_new_quantity(item: Item, where: str) -> Item:
    """``item``, if its quantity (when it has one) is at least :data:`MIN_QUANTITY`."""
    if item.quantity is not None and item.quantity < MIN_QUANTITY:
        raise ValueError(f"{where}.quantity must be at least {MIN_QUANTITY}")
    return item


def _amount(quantity: int | float) -> str:
    """``500``, ``1.5``, ``0.0004``: as a person writes a quantity (no exponent, no ``.0``), and
    exactly the number that is ordered (never rounded for show)."""
    if float(quantity).is_integer():
        return str(int(quantity))
    return format(Decimal(repr(float(quantity))), "f")


# The values below cross checkpoints: plain frozen classes with to_json/from_json
# (``workflow.persistence.values``), checked as they are built, whether by code (``ValueError``) or
# from a checkpoint read back. ``to_json`` lists the fields in declaration order: the order is in
# the checkpoint's bytes.


@dataclass(frozen=True, slots=True, kw_only=True)
class Item:
    """One thing to buy: how much (``quantity`` of ``unit``; "" counts pieces), what, and
    optionally a note and the aisle it is found in (one of :data:`AISLES`).

    ``quantity`` is None only for an item carried over from a ``Basket@1``, whose one line of
    text (``"500 g chicken thighs"``) became the name: it shows exactly as it did.
    """

    name: str  # 1 to MAX_ITEM_LENGTH characters
    quantity: int | float | None
    unit: str = ""
    note: str | None = None
    aisle: str | None = None

    def __post_init__(self) -> None:
        # Control and bidirectional-control characters never stay in an item (text.py): from
        # the model, a person's edit, or a checkpoint written before this rule.
        for name in ("name", "unit", "note"):
            value = getattr(self, name)
            if isinstance(value, str):
                object.__setattr__(self, name, one_line(value))
        check_str(self.name, "Item.name", min_length=1, max_length=MAX_ITEM_LENGTH)
        if self.quantity is not None:
            _quantity(self.quantity, "Item.quantity")
        check_str(self.unit, "Item.unit", max_length=MAX_UNIT_LENGTH)
        check_optional_str(self.note, "Item.note", max_length=MAX_NOTE_LENGTH)
        if self.aisle is not None and self.aisle not in AISLES:
            raise ValueError(f"Item.aisle must be one of {', '.join(AISLES)}")

    @property
    def quantity_text(self) -> str:
        """``500``, ``1.5``: the quantity as a person writes it ("" for none of its own)."""
        return "" if self.quantity is None else _amount(self.quantity)

    @property
    def amount(self) -> str:
        """``500 g``: the quantity and its unit, as much of them as there is."""
        return " ".join(part for part in (self.quantity_text, self.unit) if part)

    def line(self) -> str:
        """``500 g chicken thighs — for Friday``: quantity first, as a shopping list reads."""
        text = " ".join(part for part in (self.amount, self.name) if part)
        return f"{text} — {self.note}" if self.note else text

    def to_json(self) -> dict[str, Any]:
        return {
            "name": self.name,
            "quantity": self.quantity,
            "unit": self.unit,
            "note": self.note,
            "aisle": self.aisle,
        }

    @classmethod
    def from_json(cls, data: Any, where: str = "Item") -> Item:
        return cls(**fields_of(data, where, ITEM_FIELDS, ("name", "quantity", "unit")))

    @classmethod
    def named(cls, line: str) -> Item:
        """A ``Basket@1`` line as an item: the whole line is the name."""
        return cls(name=line, quantity=None)


ITEM_FIELDS = ("name", "quantity", "unit", "note", "aisle")


@dataclass(frozen=True, slots=True, kw_only=True)
class Basket:
    """One basket: its items, and which basket of the session it is (from 1).

    Schema version 2 holds :class:`Item` values where version 1 held one line of text an item
    (``BASKET_VERSION``; :func:`basket_from_v1` carries a version 1 basket over).
    """

    items: list[Item]  # at most MAX_ITEMS
    round: int  # >= 1

    def __post_init__(self) -> None:
        if not isinstance(self.items, list):
            raise ValueError(f"Basket.items must be a list, not {type(self.items).__name__}")
        if len(self.items) > MAX_ITEMS:
            raise ValueError(
                f"Basket.items must have at most {MAX_ITEMS} items, not {len(self.items)}"
            )
        for i, item in enumerate(self.items):
            if not isinstance(item, Item):
                raise ValueError(f"Basket.items[{i}] must be an Item, not {type(item).__name__}")
        object.__setattr__(self, "items", list(self.items))  # a copy: the caller's is not shared
        check_int(self.round, "Basket.round", ge=1)

    @property
    def lines(self) -> list[str]:
        return [item.line() for item in self.items]

    def to_json(self) -> dict[str, Any]:
        return {"items": [item.to_json() for item in self.items], "round": self.round}

    @classmethod
    def from_json(cls, data: Any) -> Basket:
        data = fields_of(data, "Basket", ("items", "round"), ("items", "round"))
        items = data["items"]
        if not isinstance(items, list) or len(items) > MAX_ITEMS:
            raise ValueError(f"Basket.items must be a list of at most {MAX_ITEMS}")
        return cls(
            items=[Item.from_json(item, f"Basket.items[{i}]") for i, item in enumerate(items)],
            round=data["round"],
        )


def aisle_groups(items: Sequence[Item]) -> list[tuple[str, list[Item]]]:
    """The items by aisle, in shop order (``AISLES``), each aisle's items as the shopper listed
    them; one unnamed group when no item has an aisle (a basket from before aisles). Slack's
    basket message and the console both show a basket this way."""
    if all(item.aisle is None for item in items):
        return [("", list(items))] if items else []
    groups: dict[str, list[Item]] = {aisle: [] for aisle in AISLES}
    for item in items:
        groups[item.aisle or "other"].append(item)
    return [(aisle, group) for aisle, group in groups.items() if group]


BASKET_VERSION = 2  # Basket: 2 made each item an Item (name, quantity, unit, note, aisle)


def basket_from_v1(value: Any) -> Any:
    """A ``Basket@1`` value (``{"items": ["500 g chicken", ...], "round": n}``) as version 2:
    each line becomes an item named by it, with no quantity of its own. Version 1 took any
    strings: an empty one is left out, a longer one than a name may be is clipped."""
    lines = fields_of(value, "Basket@1", ("items", "round"), ("items", "round"))["items"]
    lines = check_str_list(lines, "Basket@1.items", max_length=MAX_ITEMS)
    named = [Item.named(line[:MAX_ITEM_LENGTH]) for line in lines if line]
    return {**value, "items": [item.to_json() for item in named]}


@dataclass(frozen=True, slots=True, kw_only=True)
class ShopRequest:
    """A week's request, who made it (a Slack user ID, or "" in the terminal), and the household
    it is for (``workflow.shop.household``; nothing said: empty).

    Schema version 2 added ``household`` (``REQUEST_VERSION``; a version 1 request reads as one
    that said nothing of the household).
    """

    text: str  # 1 to 3000 characters
    requested_by: str = ""  # at most 64 characters
    household: Household = field(default_factory=Household)

    def __post_init__(self) -> None:
        check_str(self.text, "ShopRequest.text", min_length=1, max_length=3000)
        check_str(self.requested_by, "ShopRequest.requested_by", max_length=64)
        if not isinstance(self.household, Household):
            raise ValueError("ShopRequest.household must be a Household")

    def to_json(self) -> dict[str, Any]:
        return {
            "text": self.text,
            "requested_by": self.requested_by,
            "household": self.household.to_json(),
        }

    @classmethod
    def from_json(cls, data: Any) -> ShopRequest:
        values = dict(
            fields_of(data, "ShopRequest", ("text", "requested_by", "household"), ("text",))
        )
        if "household" in values:
            values["household"] = Household.from_json(values["household"])
        return cls(**values)


REQUEST_VERSION = 2  # ShopRequest: 2 added household


def request_from_v1(value: dict[str, Any]) -> dict[str, Any]:
    """A version 1 request: it said nothing of the household. (Anything but an object is left
    as it is, for the model's own check to refuse.)"""
    if not isinstance(value, dict):
        return value
    return {**value, "household": Household().to_json()}


def count(n: int, thing: str = "item") -> str:
    """``n`` things in English: "1 item", "2 items", "0 items"."""
    return f"{n} {thing}" if n == 1 else f"{n} {thing}s"


@dataclass(frozen=True)
class ShopProgress(WorkflowEvent):
    """``basket written`` / ``basket revised`` / ``order placed`` / ``order skipped``, with a
    detail for the people ("11 items") and, for a written basket, the model's output tokens
    (for the logs and ``make bench``, never shown in Slack)."""

    step: str
    detail: str
    output_tokens: int | None = None
