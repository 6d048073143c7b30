"""Edit items: a basket changed by hand, with no model call.

A person removes items, sets quantities and adds one item in a modal (``bot.slack.edit_form``);
:func:`edited_items` applies that to the basket the workflow holds, and the edit is an answer to
the pending request (``BasketDecision.edit``, graph version 4's ``edit-basket``). The modal names
the basket it was opened on by :func:`basket_sha256`, so an edit made on a basket that changed
since (another edit, a revision) is refused rather than applied to items it never showed.

:func:`edit_summary` says what changed, for the basket's message: "−pizza dough, milk 1 → 2 l".
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Mapping, Sequence
from dataclasses import replace

from .basket import (
    MAX_ITEM_LENGTH,
    MAX_ITEMS,
    MAX_QUANTITY,
    MAX_UNIT_LENGTH,
    MIN_QUANTITY,
    Item,
)
from .dishes import aisle_of
from .text import one_line

A_NUMBER = f"Enter a number of at least {MIN_QUANTITY} and at most {MAX_QUANTITY:,}."

MAX_SUMMARY = 300  # characters of the summary shown on the basket
EMPTY = "That would leave the basket empty: keep at least one item, or reject the basket."
UNCHANGED_EDIT = "That edit changed nothing: the basket is as it was."


def basket_sha256(items: Sequence[Item]) -> str:
    """The basket's items as one hex digest: what an edit modal was opened on."""
    data = json.dumps([i.to_json() for i in items], sort_keys=True, separators=(",", ":"))
    return hashlib.sha256(data.encode()).hexdigest()


def _key(name: str) -> str:
    return " ".join(name.split()).casefold()


def edited_items(
    items: Sequence[Item],
    *,
    removed: frozenset[int] = frozenset(),
    quantities: Mapping[int, int | float] | None = None,
    added: Item | None = None,
) -> list[Item]:
    """``items`` with those at the ``removed`` positions left out, the ``quantities`` set (by
    position; an item without a quantity of its own, from a ``Basket@1``, keeps none), and
    ``added`` last. A ``ValueError`` in the person's words when the result is no basket: empty,
    too many items, or an added item already in it."""
    quantities = quantities or {}
    for where in (*removed, *quantities):
        if not 0 <= where < len(items):
            raise ValueError("That form is of another basket: open Edit items again.")
    kept = []
    for i, item in enumerate(items):
        if i in removed:
            continue
        quantity = quantities.get(i)
        if quantity is not None and item.quantity is not None and quantity != item.quantity:
            if quantity < MIN_QUANTITY:
                raise ValueError(A_NUMBER)
            item = replace(item, quantity=quantity)  # checked as an Item is built
        kept.append(item)
    if added is not None:
        if added.aisle is not None and all(i.aisle is None for i in kept):
            added = replace(added, aisle=None)  # a basket from before aisles stays one list
        if any(_key(added.name) == _key(i.name) for i in kept):
            raise ValueError(f"{added.name[:80]} is in the basket already: change its quantity.")
        kept.append(added)
    if not kept:
        raise ValueError(EMPTY)
    if len(kept) > MAX_ITEMS:
        raise ValueError(f"A basket holds at most {MAX_ITEMS} items.")
    return kept


def added_item(name: str, quantity: int | float, unit: str) -> Item:
    """The one item a person adds, in its aisle (the recipe table's, else "other"): a
    ``ValueError`` in their words if it cannot be one."""
    name, unit = " ".join(one_line(name).split()), " ".join(one_line(unit).split())
    if not name:
        raise ValueError("Name the item to add.")
    if len(name) > MAX_ITEM_LENGTH:
        raise ValueError(f"An item's name has at most {MAX_ITEM_LENGTH} characters.")
    if len(unit) > MAX_UNIT_LENGTH:
        raise ValueError(f"A unit has at most {MAX_UNIT_LENGTH} characters.")
    if not MIN_QUANTITY <= quantity <= MAX_QUANTITY:
        raise ValueError(A_NUMBER)
    return Item(name=name, quantity=quantity, unit=unit, aisle=aisle_of(name))


def edit_summary(before: Sequence[Item], after: Sequence[Item]) -> str:
    """What an edit changed: removals, then new quantities, then the item added, each in the
    basket's order: "−pizza dough, milk 1 → 2 l, +oat milk 1 l" (plain text: the names are the
    model's and the person's, shown as written)."""
    after_by = {_key(i.name): i for i in after}
    before_keys = {_key(i.name) for i in before}
    removed = [f"−{i.name}" for i in before if _key(i.name) not in after_by]
    changed = []
    for item in before:
        now = after_by.get(_key(item.name))
        if now is not None and (now.quantity != item.quantity or now.unit != item.unit):
            changed.append(f"{item.name} {item.quantity_text or '?'} → {now.amount}")
    added = [
        "+" + " ".join(p for p in (i.name, i.amount) if p)
        for i in after
        if _key(i.name) not in before_keys
    ]
    said = [*removed, *changed, *added]
    text = ", ".join(said)
    return text if len(text) <= MAX_SUMMARY else text[: MAX_SUMMARY - 1] + "…"
