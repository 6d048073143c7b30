"""A change asked of a basket, answered as the difference: what to remove, what to set, what to
add, by item name (``revise_basket``), applied here to the basket the workflow already holds.

The model then writes only what changes: "no pizza, add oat milk" is two operations, not the
seventeen items of a whole basket again (each re-emitted as tool input, at the model's output
speed). A change the difference cannot say ("plan a different week") still gets a whole basket
through ``submit_basket``; the model chooses (``tool_choice: any``).

    {"remove": ["pizza dough"],
     "set": [{"name": "milk", "quantity": 2, "unit": "l"}],
     "add": [{"name": "oat milk", "quantity": 1, "unit": "l", "aisle": "dairy and eggs"}]}

Names are matched as the basket writes them, ignoring case and spacing; an operation naming an
item that is not there (or two items of the same name), adding one that is, setting nothing, or
leaving an empty or oversized basket, is a ``ValueError`` naming the first problem in our words
(the shopper makes it ``ShopperReplyUnfit``, as for a whole basket that does not fit).
"""

from __future__ import annotations

import copy
import json
from collections.abc import Sequence
from dataclasses import dataclass, replace
from typing import Any, Literal

from .basket import MAX_ITEMS, Item, check_new_quantity

REVISE_TOOL_NAME = "revise_basket"
SETTABLE = ("quantity", "unit", "note")


def revise_tool(item_schema: dict[str, Any]) -> dict[str, Any]:
    """The strict tool, its ``add`` entries shaped as ``submit_basket``'s items."""
    settable = {name: copy.deepcopy(item_schema["properties"][name]) for name in SETTABLE}
    named = {"type": "string", "description": "The item's name, as in the last basket."}
    return {
        "name": REVISE_TOOL_NAME,
        "description": (
            "Make the household's change to the last basket by naming only what changes: items "
            "to remove, items whose quantity, unit or note changes, items to add. Items not "
            "named stay as they are."
        ),
        "strict": True,
        # Streamed as it is written, each operation shown as it ends (``shopper_stream``);
        # without it the API sends each of remove, set and add whole (shopper.BASKET_TOOL).
        "eager_input_streaming": True,
        "input_schema": {
            "type": "object",
            "properties": {
                "remove": {
                    "type": "array",
                    "description": "Names of items to take out, as in the last basket.",
                    "items": {"type": "string"},
                },
                "set": {
                    "type": "array",
                    "description": "Items that stay with a new quantity, unit or note.",
                    "items": {
                        "type": "object",
                        "properties": {"name": named, **settable},
                        "required": ["name"],
                        "additionalProperties": False,
                    },
                },
                "add": {
                    "type": "array",
                    "description": "Items to buy that are not in the last basket.",
                    "items": copy.deepcopy(item_schema),
                },
            },
            "required": ["remove", "set", "add"],
            "additionalProperties": False,
        },
    }


def _key(name: str) -> str:
    return " ".join(name.casefold().split())


def _find(items: list[Item], name: Any, where: str) -> int:
    if not isinstance(name, str) or not name.strip():
        raise ValueError(f"{where} must name an item")
    found = [i for i, item in enumerate(items) if _key(item.name) == _key(name)]
    if not found:
        raise ValueError(f"{where} names an item that is not in the basket")
    if len(found) > 1:
        raise ValueError(f"{where} names two items of the basket")
    return found[0]


def apply_revision(items: Sequence[Item], data: Any) -> list[Item]:
    """``items`` with a ``revise_basket`` input applied: removals, then settings, then
    additions (at the end, as the basket's aisles group them). ``ValueError`` if it does not
    fit."""
    if not isinstance(data, dict) or set(data) != {"remove", "set", "add"}:
        raise ValueError("the input must be an object with exactly remove, set and add")
    for field in ("remove", "set", "add"):
        if not isinstance(data[field], list):
            raise ValueError(f"{field} must be a list")
    basket = list(items)
    for i, name in enumerate(data["remove"]):
        del basket[_find(basket, name, f"remove[{i}]")]
    for i, change in enumerate(data["set"]):
        where = f"set[{i}]"
        if not isinstance(change, dict) or not set(change) <= {"name", *SETTABLE}:
            raise ValueError(f"{where} must be an object of name, quantity, unit and note")
        at = _find(basket, change.get("name"), where)
        values = {k: change[k] for k in SETTABLE if k in change}
        if not values:
            raise ValueError(f"{where} sets nothing")
        try:
            changed = replace(basket[at], **values)
            basket[at] = check_new_quantity(changed, where) if "quantity" in values else changed
        except (TypeError, ValueError) as exc:
            raise ValueError(f"{where}: {exc}") from None
    for i, entry in enumerate(data["add"]):
        where = f"add[{i}]"
        if isinstance(entry, dict) and entry.get("quantity") is None:
            raise ValueError(f"{where}.quantity is required")
        try:
            item = check_new_quantity(Item.from_json(entry, where), where)
        except (TypeError, ValueError) as exc:
            raise ValueError(f"{where}: {str(exc).split(' has unknown field ')[0]}") from None
        if any(_key(other.name) == _key(item.name) for other in basket):
            raise ValueError(f"{where} adds an item already in the basket (set it instead)")
        basket.append(item)
    if not basket:
        raise ValueError("the change leaves an empty basket")
    if len(basket) > MAX_ITEMS:
        raise ValueError(f"the change leaves {len(basket)} items, more than {MAX_ITEMS}")
    return basket


@dataclass(frozen=True)
class Change:
    """One finished operation of a ``revise_basket`` input while it streams (issue 36): what a
    change's draft shows before the revised basket is whole and checked. ``item`` is the item an
    ``add`` names; ``amount`` what a ``set`` makes of its item ("to 2 l", "to 2 l — for
    Friday", "to the unit ml": what it sets, no more)."""

    kind: Literal["remove", "set", "add"]
    name: str
    item: Item | None = None
    amount: str = ""

    def said(self) -> str:
        """``Removing pizza dough``, ``Changing milk to 2 l``, ``Adding 1 l oat milk``."""
        if self.kind == "remove":
            return f"Removing {self.name}"
        if self.kind == "add" and self.item is not None:
            return f"Adding {self.item.line()}"
        return f"Changing {self.name} {self.amount}".rstrip()


def draft_change(field: str, text: str) -> Change | None:
    """A finished entry of ``remove``, ``set`` or ``add`` (its JSON ``text``) as a
    :class:`Change`, or None when it does not fit: the final check (:func:`apply_revision`)
    says why, and the draft leaves it out."""
    try:
        entry = json.loads(text)
        if field == "remove" and isinstance(entry, str) and entry.strip():
            return Change("remove", entry.strip())
        if field == "add" and isinstance(entry, dict) and entry.get("quantity") is not None:
            item = check_new_quantity(Item.from_json(entry, "add"), "add")
            return Change("add", item.name, item=item)
        named = entry.get("name") if isinstance(entry, dict) else None
        if field == "set" and isinstance(named, str) and named.strip():
            values = {k: entry[k] for k in SETTABLE if entry.get(k) is not None}
            to = check_new_quantity(replace(Item(name="-", quantity=None), **values), "set")
            said = [f"to {to.amount}" if to.quantity is not None else ""]
            said.append(f"to the unit {to.unit}" if to.quantity is None and to.unit else "")
            said.append(f"— {to.note}" if to.note else "")
            return Change("set", named.strip(), amount=" ".join(p for p in said if p))
    except (TypeError, ValueError):
        return None
    return None


def revision_listing(items: Sequence[Item]) -> str:
    """The last basket as the revision prompt lists it, one item a line, its name first (what
    ``revise_basket`` names it by): ``- chicken breast: 500 g (for Friday)``."""
    lines = []
    for item in items:
        amount = Item(name="-", quantity=item.quantity, unit=item.unit).line().removesuffix("-")
        line = f"- {item.name}: {amount.strip()}" if amount.strip() else f"- {item.name}"
        lines.append(f"{line} ({item.note})" if item.note else line)
    return "\n".join(lines)
