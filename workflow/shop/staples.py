"""What a household always buys, as items of the offline shopper's basket 1.

Settings' "always buy" ("bread, milk") is told to Claude as it is; the offline shopper puts each
in its basket as an item like any other: a quantity, a unit and an aisle from the recipe table
(``workflow.shop.dishes``). Why it is there is its note (:data:`STAPLE_NOTE`), never part of its
name: the name is what is ordered.
"""

from __future__ import annotations

from dataclasses import replace

from .basket import Item
from .dishes import KNOWN, Line
from .household import Household
from .names import name_key

STAPLE_NOTE = "always"  # why a staple is in the basket (Settings, "always buy")


def staples(household: Household, items: list[Item]) -> list[Item]:
    """What the household always buys ("oat milk, coffee"), unless it is there: each an item
    like any other, as much as the table buys at once, in its unit and aisle ("1 loaf bread",
    bakery); one the table does not know is one, in "other". Why it is there is its note
    ("always"), never part of its name."""
    have = {name_key(item.name) for item in items}
    names = [n.strip() for n in household.staples.replace(";", ",").split(",")]
    wanted: dict[str, Line] = {}
    for name in names:
        known = KNOWN.get(name_key(name))
        line = Line(known.name, known.quantity, known.unit) if known else Line(name[:100], 1)
        if name_key(name) and line.key not in have and name_key(name) not in have:
            wanted.setdefault(line.key, replace(line, note=STAPLE_NOTE))
    return [line.item() for line in wanted.values()]
