"""The offline shopper: a basket read from the request with a built-in recipe table, no model.

Without ANTHROPIC_API_KEY the product still writes baskets that follow what was asked, labelled
as offline wherever the shopper is named:

1. The text is cut into clauses: sentences (``.``, ``;``, ``:``, new lines), then commas, "and",
   "&" and "or"; a dish whose name holds "and" (fish and chips) stays whole, and day names
   ("tacos on Friday") are dropped.
2. A clause may open with a verb ("we have", "no", "without", "add", "more", "less", "swap …
   for …"); a clause without one takes the verb before it in its sentence ("no pizza, add oat
   milk and eggs": remove pizza, add oat milk, add eggs).
3. Basket 1: each dish of :mod:`workflow.shop.dishes` becomes its ingredients, scaled from two
   servings to the household ("for 4", "family of 5", "for two"); the same ingredient from two
   dishes is one line. An unknown dish is one line, "ingredients for <dish>". Ingredients the
   household has ("we have rice", "we've got onions") are left out, and so is, or is swapped
   (``workflow.shop.swaps``), what it doesn't eat: its settings' rules and those the request
   states ("no fish", "we are vegetarian"; ``workflow.shop.check``).
4. A change starts from the last basket's lines (as ``Item.line`` wrote them) and makes only that
   change: the earlier ones are already in it. Removing a dish takes away only what the week's
   dishes brought in: the request and the earlier changes are read again to know which dishes
   the week has, so "no pizza" in a week without pizza takes nothing from the pasta's passata.
   A category or a diet ("no fish") swaps or leaves out every line made of it, as a name does;
   a part of the change that changed nothing is said back (``ShopperReply.unapplied``).
5. A request in which nothing is known (no dish or ingredient of the table, only "ingredients
   for …" lines, or nothing at all) is no basket: :class:`NoDinnersFound` says so.

The same brief gives the same items in the same order: nothing here is random or reads a clock.
"""

from __future__ import annotations

import math
import os
import re
from collections import Counter
from dataclasses import replace

from . import dishes as table
from . import reading
from .basket import MAX_ITEM_LENGTH, MAX_ITEMS, MAX_QUANTITY, Item
from .check import brief_diet, clause_diet
from .diet import Diet
from .dishes import KNOWN, SERVINGS, UNITS, Line, number, read_line
from .errors import ShopperError
from .names import name_key, words
from .shopper import Brief, ClaudeShopper, Shopper, ShopperReply
from .staples import staples
from .swaps import fit

LABEL = (
    "offline shopper (no ANTHROPIC_API_KEY; baskets come from a built-in recipe table, "
    "not from Claude)"
)
TOKENS_PER_ITEM = 8  # a stand-in for output tokens, so the progress line reads as with Claude

_WEIGHED = frozenset({"g", "ml", "kg", "l"})  # doubled by "more"; other units count pieces


def _tidy(value: float, unit: str) -> float:
    """A scaled amount as a shop sells it: grams to a round figure, pieces up to a whole one."""
    if unit in ("g", "ml"):
        step = 100 if value >= 1000 else 50 if value >= 200 else 10 if value >= 20 else 1
        value = max(step, math.floor(value / step + 0.5) * step)
    elif unit in ("kg", "l"):
        value = max(0.5, math.floor(value * 2 + 0.5) / 2)
    else:
        value = max(1, math.ceil(value - 1e-9))
    return min(value, MAX_QUANTITY)


class _Draft:
    """The basket being written: entries in the order they were first asked for."""

    def __init__(
        self,
        entries: list[Line],
        factor: float,
        exclude: list[tuple[str, ...]],
        week: Counter[str] | None = None,
        diet: Diet | None = None,
    ):
        self.entries, self.factor, self.exclude = entries, factor, exclude
        self.diet = diet or Diet()
        # The dishes the week has brought in so far, each as often as it was added.
        self.week: Counter[str] = Counter() if week is None else week

    def put(
        self, name: str, quantity: float, unit: str, *, keep: bool = False, note: str | None = None
    ) -> None:
        """Add to the line for ``name`` in ``unit`` (or leave it, with ``keep``), or start one."""
        key = name_key(name)
        line = next((e for e in self.entries if e.key == key and e.unit == unit), None)
        if line is None:
            quantity = min(quantity, MAX_QUANTITY)
            self.entries.append(Line(name[:MAX_ITEM_LENGTH], quantity, unit, note))
        elif not keep:
            line.quantity = min(line.quantity + quantity, MAX_QUANTITY)

    def scaled(self, dish: str) -> list[Line]:
        if self.factor == 1:
            return list(table.DISH_LINES[dish])
        return [
            Line(e.name, _tidy(e.quantity * self.factor, e.unit), e.unit)
            for e in table.DISH_LINES[dish]
        ]

    def _brought(self, dish: str) -> list[Line]:
        """What adding ``dish`` puts in the basket: its lines but what the household has, each
        that the household doesn't eat swapped or left out (``workflow.shop.swaps``)."""
        lines = [fit(e, self.diet) for e in self.scaled(dish)]
        return [
            e
            for e in lines
            if e is not None and not any(reading.matches(e.name, had) for had in self.exclude)
        ]

    def add_dish(self, dish: str) -> None:
        self.week[dish] += 1
        for e in self._brought(dish):
            self.put(e.name, e.quantity, e.unit, note=e.note)

    def refit(self, said: Diet) -> None:
        """Hold to ``said`` from now on ("no fish", "we are vegetarian"): each line that breaks
        a rule is swapped or left out."""
        self.diet += said
        entries, self.entries = self.entries, []
        for line in entries:
            if (e := fit(line, self.diet)) is not None:
                self.put(e.name, e.quantity, e.unit, note=e.note)

    def drop_dish(self, dish: str) -> None:
        """Take away what ``dish`` brought in, each time it did; nothing if the week never
        had it (its ingredients are then another dish's, or asked for on their own)."""
        times = self.week.pop(dish, 0)
        for e in self._brought(dish) if times else []:
            for line in self.entries:
                if line.key == e.key and line.unit == e.unit:
                    line.quantity -= e.quantity * times
        self.entries = [line for line in self.entries if line.quantity > 1e-9]

    def add(self, target: str) -> None:
        """``2 l oat milk``, ``eggs`` (as much as the table buys), ``lasagne`` (its ingredients)."""
        target = re.sub(r"^(\d+(?:\.\d+)?)([a-z]+)\b", r"\1 \2", target)  # "500g butter"
        first, _, rest = target.partition(" ")
        quantity = number(first) if rest else None
        name = rest if quantity is not None else target
        unit, _, after = name.partition(" ")
        unit = UNITS[unit] if after and unit in UNITS else ""
        name = re.sub(r"^of ", "", after) if unit else name
        if not name:
            return
        dishes, left = reading.scan(words(name))
        known = KNOWN.get(name_key(name))
        if known is None and dishes and not left:
            for dish in dishes:
                self.add_dish(dish)
        elif known is not None and quantity is None:
            self.put(known.name, known.quantity, known.unit, keep=True)
        else:
            if known is not None and not unit and known.unit not in _WEIGHED:
                unit = known.unit
            self.put(name, quantity or 1, unit, keep=quantity is None)

    def swap(self, target: str) -> None:
        """``beef for chicken``, ``beef with chicken``, ``beef to chicken``."""
        if found := re.fullmatch(r"(.+?) (?:for|with|to) (.+)", target):
            self.apply("remove", found[1])
            self.add(found[2])

    def apply(self, action: str, target: str) -> None:
        """Make one clause's change: ``action`` (a verb of :data:`reading.VERBS`, "dish" or "maybe",
        which adds only a dish) to ``target``."""
        if (said := clause_diet(action, target)) is not None:
            self.refit(said)  # a category or a diet: what is made of it goes, as a name would
            return
        asked = reading.asked(target)
        dishes, left = reading.scan(words(target))
        whole = dishes if not left and name_key(target) not in KNOWN else []  # "no pizza"
        lines = [e for e in self.entries if reading.matches(e.name, asked)]
        if action in ("remove", "have"):
            self.entries = [e for e in self.entries if not reading.matches(e.name, asked)]
            for dish in whole if action == "remove" else []:
                self.drop_dish(dish)
        elif action == "swap":
            self.swap(target)
        elif action == "more" and lines:
            for e in lines:
                more = _tidy(e.quantity * 2, e.unit) if e.unit in _WEIGHED else e.quantity + 1
                e.quantity = min(more, MAX_QUANTITY)
        elif action == "less":
            keys = {e.key for dish in whole if self.week[dish] for e in table.DISH_LINES[dish]}
            for e in lines or [e for e in self.entries if e.key in keys]:
                e.quantity = min(_tidy(e.quantity / 2, e.unit), e.quantity)
        elif dishes and action in ("dish", "maybe") or whole:
            for dish in dishes:
                self.add_dish(dish)
        elif action in ("add", "more") or action == "dish" and _is_ingredient(target):
            self.add(target)
        elif action == "dish":
            self.put(f"ingredients for {target}", 1, "", keep=True)


def _is_ingredient(target: str) -> bool:
    """Whether a request's clause names something to buy ("milk", "2 l milk"), not a dinner."""
    return name_key(target) in KNOWN or number(target.partition(" ")[0]) is not None


class NoDinnersFound(ShopperError):
    """The request named nothing the recipe table knows: no basket is started (a basket of
    "ingredients for …" lines alone would be ordered as they are)."""

    reason = (
        "the offline shopper found no dinners it knows in that request "
        "(try e.g. “tacos on Friday, lasagne on Sunday”)"
    )

    def __init__(self) -> None:
        super().__init__(self.reason)


def _first_basket(clauses: list[tuple[str, str]], draft: _Draft) -> _Draft:
    for action, target in clauses:
        if action not in ("have", "remove"):  # those are left out of every dish, above
            draft.apply(action, target)
    return draft


def basket_for(brief: Brief) -> list[Item]:
    """The offline basket for ``brief``: basket 1 from the request, or the last one changed.

    Raises :class:`NoDinnersFound` for a basket 1 in which nothing is known."""
    return written_for(brief)[0]


def written_for(brief: Brief) -> tuple[list[Item], tuple[str, ...]]:
    """The offline basket for ``brief``, and the parts of its change that changed nothing and
    do not hold by themselves, in the person's words ("make it cheaper"; "no fish" holds once
    there is no fish, whether or not there was any)."""
    asked = reading.normal(brief.request)
    size, request = reading.household(asked)
    # The request's "for six" wins; else the household the workspace said; else two.
    if request == asked and brief.household.people:
        size = min(brief.household.people, reading.MAX_HOUSEHOLD)
    clauses = reading.clauses(request, "dish")
    earlier = [reading.clauses(reading.normal(change), "maybe") for change in brief.earlier]
    exclude = [reading.asked(t) for a, t in clauses if a in ("have", "remove")]
    exclude += [reading.asked(t) for said in earlier for a, t in said if a == "have"]
    # The rules as they stood at the last basket (or at this one); a change's own come as read.
    diet = brief_diet(replace(brief, change=None))
    first = _first_basket(clauses, _Draft([], size / SERVINGS, exclude, diet=diet))
    if brief.change is None:
        if not any(line.key in KNOWN for line in first.entries):
            raise NoDinnersFound()
        had = [e for e in first.entries if not any(reading.matches(e.name, x) for x in exclude)]
        items = [line.item() for line in had[:MAX_ITEMS]]  # "rice, we have rice": no rice
        return (items + staples(brief.household, items))[:MAX_ITEMS], ()
    for said in earlier:  # the week as it stands, to know which dishes it has
        for action, target in said:
            first.apply(action, target)
    last = [entry for entry in map(read_line, brief.last_basket) if entry]
    draft = _Draft(last, size / SERVINGS, exclude, first.week, diet=diet)
    unapplied = []
    for action, target, part in reading.said(reading.normal(brief.change), "maybe"):
        before = [(e.name, e.quantity, e.unit, e.note) for e in draft.entries]
        draft.apply(action, target)
        after = [(e.name, e.quantity, e.unit, e.note) for e in draft.entries]
        if after == before and not _holds(action, target):
            unapplied.append(part)
    return [line.item() for line in draft.entries[:MAX_ITEMS]], tuple(unapplied)


def _holds(action: str, target: str) -> bool:
    """Whether a clause that changed nothing holds anyway: "no salmon" (a dish or ingredient
    the table knows) or "no fish" (a category) with none in the basket."""
    if clause_diet(action, target) is not None:
        return True
    if action not in ("remove", "have"):
        return False
    dishes, left = reading.scan(words(target))
    return name_key(target) in KNOWN or (bool(dishes) and not left)


class OfflineShopper:
    """A shopper that needs no key and no network: it reads the brief with a recipe table, so
    the product can be tried end to end offline. It fails only for a request in which it knows
    nothing (:class:`NoDinnersFound`)."""

    label = LABEL

    async def write(self, brief: Brief) -> ShopperReply:
        items, unapplied = written_for(brief)
        tokens = TOKENS_PER_ITEM * len(items)
        return ShopperReply(items=items, output_tokens=tokens, unapplied=unapplied)


def default_shopper() -> Shopper:
    """Claude when ANTHROPIC_API_KEY is set, otherwise the offline shopper (here, so that the
    shopper module never imports this one: the arrow points one way)."""
    if os.environ.get("ANTHROPIC_API_KEY"):
        return ClaudeShopper()
    return OfflineShopper()
