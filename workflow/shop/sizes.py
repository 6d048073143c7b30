"""How much a store's product holds, and how many of it cover what a basket item asks for.

A store writes a size on the shelf label: ``16 oz``, ``1 lb``, ``500 g``, ``16.9 fl oz``,
``1 gal``, ``12 ct``, ``1 bunch``, ``2 x 400 g``. :func:`size_of` reads it into an amount in a
base unit: grams for a weight, millilitres for a volume, pieces for a count. ``oz`` is always
a weight (avoirdupois, 28.35 g) and ``fl oz`` always a volume (US, 29.57 ml): US labels write
them so, and a weight is never turned into a volume (that needs a density: a guess).

A basket item says its quantity in the units of ``workflow.shop.dishes.UNITS`` (or any unit a
person types in Edit items). :func:`cover` says how many of a product cover it:

- ``g``, ``kg`` (and ``oz``, ``lb``) against a weight; ``ml``, ``l`` (``fl oz``, ``gal``, ``qt``,
  ``pt``) against a volume: as many as the amount needs, rounded up (500 g wanted, 450 g
  packs: 2);
- no unit, ``piece``, ``each``, ``bulb``, ``ct``, ``dozen``: pieces, against a count only (6
  eggs, a 12 ct box: 1);
- ``head``, ``loaf``, ``bunch``: pieces against a count, and otherwise one product each (a
  loaf is a loaf whatever it weighs; a 1 lb pack of broccoli crowns is a head's worth);
- ``pack``, ``jar``, ``tin``/``can``, ``bottle``, ``bag``, ``tub``, ``box``: one product each,
  whatever its size (a person's "2 packs of tortillas" is two of the store's packs, not 2
  tortillas);
- ``clove`` and anything else: nothing (stores sell garlic by the bulb; cloves to a bulb is a
  guess).

Pieces against a weight only for the things in :data:`PIECE_GRAMS`, at a typical piece's weight,
and only for a product sold fresh (``cover(..., by_piece=True)``: 6 tomatoes, a 1 lb pack of
Romas: 2 packs; never a can): the one estimate here, named as one in the table, and the basket
shows the product's size beside the item. Otherwise unknown or incomparable is None,
never a guess. Imports nothing of the shop but ``Item`` and how names are compared.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass
from enum import Enum

from .basket import Item
from .names import name_key

# A counted item sold by weight: a typical piece in grams. Produce from USDA FoodData Central's
# "medium" portions (tomato 123 g, onion 110 g, carrot 61 g, lemon 84 g, lime 67 g, apple 182 g,
# banana 118 g, potato 213 g, bell pepper 119 g, avocado 150 g); meat and fish at a typical
# retail piece (a salmon fillet 6 oz, a pork chop 7 oz, a sausage link 2.5 oz, a chicken
# breast 8 oz): estimates, not any store's weights.
PIECE_GRAMS: dict[str, float] = {
    "tomato": 123.0,
    "onion": 110.0,
    "red onion": 110.0,
    "carrot": 61.0,
    "lemon": 84.0,
    "lime": 67.0,
    "apple": 182.0,
    "banana": 118.0,
    "potato": 213.0,
    "baking potato": 213.0,
    "bell pepper": 119.0,
    "red bell pepper": 119.0,
    "avocado": 150.0,
    "salmon fillet": 170.0,
    "pork chop": 198.0,
    "sausage": 71.0,
    "chicken breast": 227.0,
}


class Dimension(Enum):
    WEIGHT = "g"
    VOLUME = "ml"
    COUNT = "count"


@dataclass(frozen=True, slots=True)
class Size:
    """An amount in the dimension's base unit: grams, millilitres or pieces."""

    amount: float
    dimension: Dimension


@dataclass(frozen=True, slots=True)
class Cover:
    """``count`` of a product cover an item; each holds ``per`` of the item's measure (its base
    unit, or 1 for one-product-each units), so a unit price is the price over ``per``."""

    count: int
    per: float


_W, _V, _C = Dimension.WEIGHT, Dimension.VOLUME, Dimension.COUNT
# Every unit as written (lower case, dots and spaces dropped) → its base unit and factor.
_UNIT_GROUPS: tuple[tuple[str, Dimension, float], ...] = (
    ("g gr gram grams", _W, 1.0),
    ("kg kgs kilo kilos kilogram kilograms", _W, 1000.0),
    ("oz ounce ounces", _W, 28.349523125),
    ("lb lbs pound pounds", _W, 453.59237),
    ("ml milliliter milliliters millilitre millilitres", _V, 1.0),
    ("cl", _V, 10.0),
    ("l lt ltr liter liters litre litres", _V, 1000.0),
    ("floz fluidounce fluidounces", _V, 29.5735295625),
    ("gal gallon gallons", _V, 3785.411784),
    ("qt quart quarts", _V, 946.352946),
    ("pt pint pints", _V, 473.176473),
    ("ct count ea each pc pcs piece pieces pk pack packs", _C, 1.0),
    ("bunch bunches head heads loaf loaves bulb bulbs", _C, 1.0),
    ("dozen doz", _C, 12.0),
)
UNITS: dict[str, tuple[Dimension, float]] = {
    word: (dimension, factor) for group, dimension, factor in _UNIT_GROUPS for word in group.split()
}
# A basket item's units that are one whole thing: pieces against a count, else one product each.
WHOLES = frozenset({"head", "heads", "loaf", "loaves", "bunch", "bunches"})
# ...that are one of whatever the store sells, whatever its size.
_CONTAINERS = "pk pack packs packet packets jar jars tin tins can cans bottle bottles bag bags"
CONTAINERS = frozenset(f"{_CONTAINERS} tub tubs box boxes carton cartons".split(" "))
MAX_AMOUNT = 1_000_000.0  # a tonne, a thousand litres: more is not a shelf label
_NUMBER = r"(\d+(?:\.\d+)?|\.\d+|\d+/\d+)"
_ONE = re.compile(rf"{_NUMBER}\s*([a-z][a-z. ]*)")
_MULTI = re.compile(r"(\d+)\s*[x×]\s*(.+)")


def _number(text: str) -> float:
    if "/" in text:
        top, bottom = text.split("/")
        return int(top) / int(bottom) if int(bottom) else math.inf
    return float(text)


def unit_of(text: str) -> tuple[Dimension, float] | None:
    """``fl. oz`` → (volume, 29.57): a unit's dimension and its factor to the base unit."""
    return UNITS.get(re.sub(r"[.\s]", "", text.lower()).removesuffix("."))


def _checked(amount: float, dimension: Dimension) -> Size | None:
    if not math.isfinite(amount) or not 0 < amount <= MAX_AMOUNT:
        return None
    return Size(amount, dimension)


def size_of(text: str) -> Size | None:
    """A store's size text as an amount in its base unit; None when it is not one we read.
    ``each`` alone is one piece; ``2 x 400 g`` is 800 g."""
    plain = " ".join(text.lower().split())
    if plain in ("each", "ea"):
        return Size(1.0, Dimension.COUNT)
    multi = _MULTI.fullmatch(plain)
    if multi:
        inner = size_of(multi.group(2)) if not _MULTI.fullmatch(multi.group(2)) else None
        if inner is None:
            return None
        return _checked(int(multi.group(1)) * inner.amount, inner.dimension)
    one = _ONE.fullmatch(plain)
    unit = unit_of(one.group(2)) if one else None
    if one is None or unit is None:
        return None
    return _checked(_number(one.group(1)) * unit[1], unit[0])


def _count(wanted: float, per: float) -> int:
    """How many of ``per`` cover ``wanted``: rounded up, but a float's last bit never adds one
    (16 oz against 1 lb is one, not two)."""
    return max(1, math.ceil(wanted / per - 1e-9))


def cover(item: Item, size_text: str, by_piece: bool = False) -> Cover | None:
    """How many of a product of ``size_text`` cover ``item`` (see the module's rules); None when
    the item has no quantity, or its unit and the size do not compare. ``by_piece``: the product
    is sold fresh (produce, meat), so pieces of what :data:`PIECE_GRAMS` weighs compare with
    its weight; a can of crushed tomatoes is no 6 tomatoes."""
    if item.quantity is None:
        return None
    unit = " ".join(item.unit.lower().split())
    if unit in CONTAINERS:
        return Cover(_count(item.quantity, 1.0), 1.0)
    size = size_of(size_text)
    if unit in WHOLES and (size is None or size.dimension is not Dimension.COUNT):
        return Cover(_count(item.quantity, 1.0), 1.0)
    wanted = (Dimension.COUNT, 1.0) if unit == "" else unit_of(unit)
    piece = PIECE_GRAMS.get(name_key(item.name))
    weighed = size is not None and size.dimension is Dimension.WEIGHT
    if by_piece and unit in ("", "piece", "pieces", "each") and piece is not None and weighed:
        wanted = (Dimension.WEIGHT, piece)  # pieces at a typical weight: PIECE_GRAMS
    if wanted is None or size is None or size.dimension is not wanted[0]:
        return None
    return Cover(_count(item.quantity * wanted[1], size.amount), size.amount)
