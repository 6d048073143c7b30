"""What travels through the weekly-shop workflow: the basket, the answer, the progress event."""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Sequence
from dataclasses import dataclass, field
from decimal import Decimal
from typing import Any

from workflow.engine.events import WorkflowEvent
from workflow.persistence.values import (
    check_bool,
    check_int,
    check_optional_int,
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


# The typed answers that are decisions, compared in lower case; any other text is a change.
APPROVE_WORDS = ("y", "yes", "approve", "ok")
REJECT_WORDS = ("n", "no", "reject")


MAX_APPROVALS = 50  # people named in one decision's approvals
MAX_USER_ID_LENGTH = 64  # a Slack user ID, as ShopRequest.requested_by


@dataclass(frozen=True, slots=True, kw_only=True)
class BasketDecision:
    """The answer about basket ``round``: approve, reject, or a change (text), from a person;
    or, from the bot once nobody answered in time, expired at ``expired_at`` (epoch seconds).

    An approval says who has approved the basket so far, this answer's person last
    (``approvals``, each a Slack user ID, "" in the terminal), and how many different people
    the basket needed when it was given (``needed``, the household's rule at that click): a
    basket is ordered once ``needed`` different people approved it (:attr:`quorum_reached`),
    and asked again until then (``workflow.shop.graph``, version 2). Any other answer names
    nobody and ends or revises the basket whatever the count.

    The approval that completes the quorum may be held (``hold_until``, epoch seconds: the
    household's undo window, ``ORDER_DELAY``): the basket is ordered when its timer fires, unless
    an approver's Undo (``undo``) comes first and the approvals start again (graph version 3).

    An edit (``edit``: the basket's items as the person left them, Edit items) is an answer of
    its own: the edited basket is asked about again, the same round, with no model call and the
    approvals starting again (graph version 4).

    Schema version 2 added ``expired_at``, version 3 ``approvals`` and ``needed``, version 4
    ``hold_until`` and ``undo``, version 5 ``edit``, each written only when set
    (``DECISION_VERSION``; older values read as not expired, approved by one person of one,
    held by nobody, no edit).
    """

    approved: bool
    change: str | None = None
    round: int  # >= 1
    expired_at: int | None = None  # >= 0
    approvals: tuple[str, ...] = ()  # at most MAX_APPROVALS user IDs
    needed: int = 1  # >= 1
    hold_until: int | None = None  # an approval that completes the quorum, held until then
    undo: bool = False  # an approver's Undo of a held approval
    edit: tuple[Item, ...] | None = None  # the basket as edited by hand (1 to MAX_ITEMS items)

    def __post_init__(self) -> None:
        check_bool(self.approved, "BasketDecision.approved")
        check_optional_str(self.change, "BasketDecision.change")
        check_int(self.round, "BasketDecision.round", ge=1)
        check_optional_int(self.expired_at, "BasketDecision.expired_at", ge=0)
        approvals = self.approvals
        if not isinstance(approvals, tuple | list) or len(approvals) > MAX_APPROVALS:
            raise ValueError(f"BasketDecision.approvals must be a list of at most {MAX_APPROVALS}")
        for i, user in enumerate(approvals):
            check_str(user, f"BasketDecision.approvals[{i}]", max_length=MAX_USER_ID_LENGTH)
        object.__setattr__(self, "approvals", tuple(approvals))
        check_int(self.needed, "BasketDecision.needed", ge=1)
        check_optional_int(self.hold_until, "BasketDecision.hold_until", ge=0)
        check_bool(self.undo, "BasketDecision.undo")
        if self.hold_until is not None and not (self.approved and self.quorum_reached):
            raise ValueError("BasketDecision.hold_until holds an approval that completes a quorum")
        if self.undo and (self.approved or self.change is not None):
            raise ValueError("BasketDecision.undo is an answer of its own")
        if self.edit is not None:
            edit = self.edit
            if not isinstance(edit, tuple | list) or not 1 <= len(edit) <= MAX_ITEMS:
                raise ValueError(f"BasketDecision.edit must have 1 to {MAX_ITEMS} items")
            for i, item in enumerate(edit):
                if not isinstance(item, Item):
                    raise ValueError(f"BasketDecision.edit[{i}] must be an Item")
            object.__setattr__(self, "edit", tuple(edit))
            if self.approved or self.change is not None or self.undo:
                raise ValueError("BasketDecision.edit is an answer of its own")

    @property
    def held(self) -> bool:
        """An approval that completes the quorum, held for the undo window."""
        return self.hold_until is not None

    @property
    def quorum_reached(self) -> bool:
        """Whether this answer ends the asking: anything but an approval does; an approval
        does once ``needed`` different people approved (one is always enough for one)."""
        if not self.approved or self.needed <= 1:
            return True
        return len(set(self.approvals)) >= self.needed

    def to_json(self) -> dict[str, Any]:
        return {
            "approved": self.approved,
            "change": self.change,
            "round": self.round,
            "expired_at": self.expired_at,
            "approvals": list(self.approvals),
            "needed": self.needed,
            **({"hold_until": self.hold_until} if self.hold_until is not None else {}),
            **({"undo": True} if self.undo else {}),
            **({"edit": [i.to_json() for i in self.edit]} if self.edit is not None else {}),
        }

    @classmethod
    def from_json(cls, data: Any) -> BasketDecision:
        fields = (
            "approved",
            "change",
            "round",
            "expired_at",
            "approvals",
            "needed",
            "hold_until",
            "undo",
            "edit",
        )
        data = dict(fields_of(data, "BasketDecision", fields, ("approved", "round")))
        approvals = data.get("approvals", [])
        if not isinstance(approvals, list):  # JSON's own type: a list, never a string
            raise ValueError(
                f"BasketDecision.approvals must be a list, not {type(approvals).__name__}"
            )
        if "edit" in data:
            edit = data["edit"]
            if not isinstance(edit, list) or len(edit) > MAX_ITEMS:
                raise ValueError(f"BasketDecision.edit must be a list of at most {MAX_ITEMS}")
            data["edit"] = tuple(
                Item.from_json(item, f"BasketDecision.edit[{i}]") for i, item in enumerate(edit)
            )
        return cls(**data)

    @property
    def edited(self) -> bool:
        """An edit by hand (Edit items): asked about again, the same round."""
        return self.edit is not None

    @classmethod
    def edited_to(cls, items: Sequence[Item], round: int) -> BasketDecision:
        """A person's edit of basket ``round``: its items as they left them."""
        return cls(approved=False, round=round, edit=tuple(items))

    @classmethod
    def expired(cls, round: int, at: float) -> BasketDecision:
        return cls(approved=False, round=round, expired_at=int(at))

    def released(self) -> BasketDecision:
        """A held approval once its undo window is over: the same approvals, ordered now."""
        return dataclasses.replace(self, hold_until=None)

    @classmethod
    def undone(cls, round: int) -> BasketDecision:
        """An approver's Undo of a held approval: the basket is asked about again."""
        return cls(approved=False, round=round, undo=True)

    @classmethod
    def from_answer(cls, answer: str | None, round: int) -> BasketDecision:
        """A typed answer: one of :data:`APPROVE_WORDS` approves; one of :data:`REJECT_WORDS`, or
        nothing, rejects (in any case, surrounding spaces ignored); any other text asks for that
        change. So a plain "yes" or "no" is a decision, and costs no model call."""
        text = (answer or "").strip()
        if text.lower() in APPROVE_WORDS:
            return cls(approved=True, round=round)
        if not text or text.lower() in REJECT_WORDS:
            return cls(approved=False, round=round)
        return cls(approved=False, change=text, round=round)


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
