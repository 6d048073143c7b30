"""What a household doesn't eat, read into rules that every basket is checked against.

"What we don't eat" is free text: "meat, fish", "we are vegetarian: no meat please", "nuts
(allergy)", "mushrooms". :func:`read_diet` reads it into a :class:`Diet`, each of whose rules is

    a diet          vegetarian (no meat, fish or seafood), vegan (nor dairy, eggs or honey),
                    pescatarian (no meat): shown as said, "vegetarian", never "no vegetarian";
                    "vegetarian except fish" ("…, but we eat fish") leaves a category in
    a category      meat (beef, pork, lamb, poultry), poultry, pork, beef, lamb, fish and
                    seafood, shellfish, dairy, eggs, gluten, nuts, honey: the foods,
                    ingredients and dishes :data:`COVERS` lists ("no meat")
    plain words     anything else ("no mushrooms"): an item whose name says them

:func:`conflicts` says which rules an item's name breaks, as the basket shows it: "contains pork:
you said no pork". A name is read as words (``workflow.shop.names``), the longest phrase of
:data:`COVERS` first, so "eggplant" holds no egg, "butternut squash" no butter, "butter beans"
and "oat milk" no dairy (listed as covering nothing), "almond milk" only nuts. A qualifier
clears what it qualifies: "vegetarian" and "vegan" everything after them ("vegan cheese"),
"gluten-free" its category, and a plant word (:data:`PLANT`) the meat or fish named right after
it ("soya mince", "lentil bolognese", "bean burgers").

The table is small and says so: a name it does not know conflicts with no category (only a
plain word can catch it), and hidden ingredients (rennet in parmesan) are not guessed at.
Imports nothing but ``workflow.shop.names``: the household's line is shown on the settings' ack
path.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import lru_cache

from .names import name_key, words

# Category: the words, ingredients and dishes it covers, as a shop or a recipe names them. A
# phrase in two categories is in both ("carbonara": pork and eggs); "" lists phrases that cover
# nothing, so that the longer phrase wins over a word in it ("oat milk" over "milk").
COVERS: dict[str, str] = {
    "pork": "pork, bacon, ham, gammon, pancetta, lardons, chorizo, salami, prosciutto, "
    "pepperoni, sausages, hot dogs, lard, carbonara, toad in the hole",
    "beef": "beef, steak, brisket, burgers, hamburgers, cheeseburgers, meatballs, bolognese, "
    "bolognaise, spag bol, lasagne, lasagna, chilli con carne, chili con carne, cottage pie, suet",
    "lamb": "lamb, mutton, moussaka, shepherd's pie",
    "poultry": "poultry, chicken, turkey, duck, goose",
    "meat": "meat, mince, veal, venison, rabbit, gelatine, gelatin, kebab, pate",
    "fish": "fish, salmon, cod, haddock, tuna, mackerel, sardines, anchovies, trout, pollock, "
    "hake, sea bass, plaice, kippers, sushi, fish sauce, worcestershire sauce",
    "shellfish": "shellfish, seafood, prawns, shrimp, crab, lobster, mussels, clams, oysters, "
    "scallops, squid, calamari, octopus, paella",
    "dairy": "dairy, milk, buttermilk, cheese, cheddar, parmesan, mozzarella, feta, halloumi, "
    "brie, ricotta, mascarpone, paneer, butter, cream, creme fraiche, yoghurt, yogurt, ghee, "
    "custard, ice cream, mac and cheese, macaroni cheese, carbonara, pizza",
    "eggs": "eggs, mayonnaise, mayo, meringue, omelette, omelet, quiche, pancakes, egg noodles, "
    "egg fried rice, carbonara",
    "gluten": "gluten, wheat, flour, bread, baguette, buns, bagels, croissants, pitta, naan, "
    "tortilla wraps, wraps, pasta, spaghetti, macaroni, penne, fusilli, tagliatelle, lasagne, "
    "lasagna, lasagne sheets, noodles, egg noodles, ramen, udon, couscous, bulgur, barley, rye, "
    "spelt, semolina, pastry, pizza, pizza bases, croutons, breadcrumbs, crackers, biscuits, "
    "cake, beer, soy sauce, gnocchi, gravy granules, seitan, quiche, pancakes",
    "nuts": "nuts, peanuts, almonds, cashews, walnuts, hazelnuts, pecans, pistachios, macadamias, "
    "brazil nuts, pine nuts, pesto, satay, marzipan, praline, almond milk, cashew milk, "
    "hazelnut milk, peanut butter, almond butter, pad thai",
    "honey": "honey",
    "": "oat milk, soy milk, soya milk, coconut milk, rice milk, oat cream, soya cream, "
    "coconut cream, soya yoghurt, coconut yoghurt, butter beans, cocoa butter, cream of tartar, "
    "rice noodles, rice flour, buckwheat, water chestnuts, chestnut mushrooms, nutmeg",
}
# A category's own, and those it holds: "no meat" rules out pork too.
HOLDS = {"meat": ("pork", "beef", "lamb", "poultry"), "fish": ("shellfish",)}
# The order in which an item's categories are named: the most telling first.
ORDER = (
    "pork", "beef", "lamb", "poultry", "meat", "shellfish", "fish",
    "dairy", "eggs", "gluten", "nuts", "honey",
)  # fmt: skip
# A diet: what it rules out, and how the shopper is told it.
DIETS = {
    "vegetarian": (("meat", "fish"), "no meat, poultry, fish or seafood"),
    "vegan": (("meat", "fish", "dairy", "eggs", "honey"), "no meat, fish, dairy, eggs or honey"),
    "pescatarian": (("meat",), "no meat or poultry"),
}
DIET_NAMES = {
    "vegetarian": "vegetarian", "veggie": "vegetarian", "vegan": "vegan",
    "plant based": "vegan", "pescatarian": "pescatarian", "pescetarian": "pescatarian",
}  # fmt: skip
# A household's word for a category: how the basket shows it, and what it rules out.
NAMES: dict[str, tuple[str, tuple[str, ...]]] = {
    "meat": ("meat", ("meat",)), "red meat": ("red meat", ("beef", "lamb", "pork")),
    "poultry": ("poultry", ("poultry",)), "pork": ("pork", ("pork",)),
    "beef": ("beef", ("beef",)), "lamb": ("lamb", ("lamb",)), "fish": ("fish", ("fish",)),
    "seafood": ("seafood", ("fish",)), "fish and seafood": ("fish", ("fish",)),
    "shellfish": ("shellfish", ("shellfish",)), "dairy": ("dairy", ("dairy",)),
    "lactose": ("dairy", ("dairy",)), "egg": ("eggs", ("eggs",)),
    "gluten": ("gluten", ("gluten",)), "wheat": ("gluten", ("gluten",)),
    "coeliac": ("gluten", ("gluten",)), "celiac": ("gluten", ("gluten",)),
    "nut": ("nuts", ("nuts",)), "tree nut": ("nuts", ("nuts",)), "honey": ("honey", ("honey",)),
}  # fmt: skip
# Plant words: the meat or fish named right after one is not meat or fish ("soya mince").
PLANT = frozenset(
    {"bean", "lentil", "tofu", "quorn", "soy", "soya", "vegetable", "veg", "mushroom"}
    | {"chickpea", "jackfruit", "cauliflower", "halloumi", "falafel", "nut", "beetroot"}
)


def holds(categories: tuple[str, ...] | frozenset[str]) -> frozenset[str]:
    """``categories`` and every category they hold."""
    return frozenset(c for cat in categories for c in (cat, *HOLDS.get(cat, ())))


_COVERED: dict[tuple[str, ...], frozenset[str]] = {}
for _category, _phrases in COVERS.items():
    for _phrase in _phrases.split(", "):
        _COVERED[words(_phrase)] = _COVERED.get(words(_phrase), frozenset()) | (
            frozenset({_category}) if _category else frozenset()
        )
_MEAT_OR_FISH = holds(("meat", "fish"))
# What a qualifier clears from the rest of a name: a diet's word, or "<category> free".
_CLEARS: dict[tuple[str, ...], frozenset[str]] = {
    **{words(name): holds(DIETS[diet][0]) for name, diet in DIET_NAMES.items()},
    **{(*words(name), "free"): holds(rules) for name, (_, rules) in NAMES.items()},
    ("meatless",): _MEAT_OR_FISH,
}
_LONGEST = max(map(len, [*_COVERED, *_CLEARS]))


@dataclass(frozen=True, slots=True)
class Rule:
    """One thing a household doesn't eat: a diet, a category or plain words, and how it is
    shown ("vegetarian", "pork", "mushrooms": as said for plain words)."""

    shown: str
    covers: frozenset[str] = frozenset()  # categories ruled out (none for plain words)
    words: tuple[str, ...] = ()  # plain words (none for a diet or a category)
    diet: str = ""  # the diet's name, for a diet

    @property
    def said(self) -> str:
        """As the household said it: "vegetarian", "no pork"."""
        return self.shown if self.diet else f"no {self.shown}"


@dataclass(frozen=True, slots=True)
class Diet:
    """What a household doesn't eat: its rules, each once, none covered by another."""

    rules: tuple[Rule, ...] = ()

    def __add__(self, other: Diet) -> Diet:
        return _tidied((*self.rules, *other.rules))

    @property
    def covers(self) -> frozenset[str]:
        return frozenset(c for rule in self.rules for c in rule.covers)

    def shown(self) -> str:
        """The basket's words for it: "vegetarian, no mushrooms", "no meat, fish"."""
        diets = [rule.shown for rule in self.rules if rule.diet]
        others = [rule.shown for rule in self.rules if not rule.diet]
        return ", ".join([*diets, *([f"no {', '.join(others)}"] if others else [])])

    def told(self) -> str:
        """The shopper's words for it: "We are vegetarian (no meat, …). We don't eat: nuts."."""
        said = [
            f"We are {rule.shown} ({DIETS[rule.diet][1]})."
            if rule.covers == holds(DIETS[rule.diet][0])
            else f"We are {rule.shown}."
            for rule in self.rules
            if rule.diet
        ]
        others = [rule.shown for rule in self.rules if not rule.diet]
        return " ".join([*said, *([f"We don't eat: {', '.join(others)}."] if others else [])])


def _tidied(rules: tuple[Rule, ...]) -> Diet:
    """``rules`` without repeats, or categories another rule covers ("vegetarian, no meat")."""
    kept: list[Rule] = []
    for i, rule in enumerate(rules):
        if rule.covers and any(
            other.covers > rule.covers or (other.covers == rule.covers and j < i)
            for j, other in enumerate(rules)
        ):
            continue
        if not rule.covers and any(rule.words == other.words for other in kept):
            continue
        kept.append(rule)
    return Diet(tuple(kept))


_PARTS = re.compile(r"[,;:/&()\[\]\n]+|\.(?:\s|$)|\s+(?:and|or|nor|plus)\s+", re.IGNORECASE)
_LEAD = re.compile(
    r"^(?:(?:we|i|all|strictly|mostly|are|am|we're|i'm|no|not|non|any|never|without|avoid"
    r"|avoiding|allergic to|allergy to|(?:do not|don't|dont|can't|cannot|never) eat|eat no)"
    r"(?:\s+|-|$))+",
    re.IGNORECASE,
)
_TRAIL = re.compile(
    r"(?:(?:^|\s+|-)(?:please|thanks|thank you|allergy|allergies|intolerance|intolerant"
    r"|products?|foods?|free|only|at all|ever))+$",
    re.IGNORECASE,
)


# What a household writes to say it eats everything: no rule.
_NOTHING = frozenset({"nothing", "none", "n a", "na", "nothing in particular", "anything"})


def _rule(part: str) -> Rule | None:
    said = part.replace("’", "'").strip(" \t.!?\"'")
    said = _TRAIL.sub("", _LEAD.sub("", said)).strip(" \t.!?\"'-")
    key = name_key(said)
    if not key or key in _NOTHING:
        return None
    if key in DIET_NAMES:
        diet = DIET_NAMES[key]
        return Rule(diet, holds(DIETS[diet][0]), diet=diet)
    if key in NAMES:
        shown, rules = NAMES[key]
        return Rule(shown, holds(rules))
    return Rule(said, words=words(said))


# "vegetarian except fish", "vegetarian, but we eat fish": what a diet leaves in.
_BUT = re.compile(
    r"(?:^|\s+)(?:except(?: for)?|but|apart from|other than)(?:\s+(?:we|i))?"
    r"(?:\s+(?:do|still|also))?(?:\s+eat)?\s+",
    re.IGNORECASE,
)


def _but(rule: Rule, eaten: str) -> Rule:
    """``rule`` (a diet) with the categories ``eaten`` names left in: "vegetarian except fish"."""
    kept = [r for r in read_diet(eaten).rules if r.covers and not r.diet]
    if not kept:
        return rule  # "except on Sundays": the diet as it is, the stricter reading
    covers = rule.covers - holds(tuple(c for r in kept for c in r.covers))
    shown = f"{rule.shown} except {', '.join(r.shown for r in kept)}"
    return Rule(shown, covers, diet=rule.diet)


@lru_cache(maxsize=512)
def read_diet(text: str) -> Diet:
    """The rules in a household's "What we don't eat" (or a change's "no fish")."""
    rules: list[Rule] = []
    for part in _PARTS.split(text):
        if not part or not part.strip():
            continue
        head, *but = _BUT.split(part, maxsplit=1)
        rule = _rule(head) if head.strip() else None
        if but and rule is None and rules and rules[-1].diet:
            rule = rules.pop()  # "vegetarian, but we eat fish": the diet before it
        if but and rule is not None and rule.diet:
            rule = _but(rule, but[0])
        if rule is not None:
            rules.append(rule)
    return _tidied(tuple(rules))


def _found(name: str) -> list[tuple[tuple[str, ...], frozenset[str]]]:
    """The phrases of :data:`COVERS` in ``name``, each with the categories it still holds once
    its qualifiers cleared theirs."""
    said, found, i = words(name), [], 0
    cleared: frozenset[str] = frozenset()  # by a diet's word, or "gluten-free", till the end
    plant = False  # the word before was a plant word: the next phrase is no meat or fish
    while i < len(said):
        for n in range(min(_LONGEST, len(said) - i), 0, -1):
            phrase = said[i : i + n]
            if phrase in _CLEARS:
                cleared |= _CLEARS[phrase]
                break
            if phrase in _COVERED:
                categories = _COVERED[phrase] - cleared - (_MEAT_OR_FISH if plant else set())
                found.append((phrase, categories))
                break
        else:
            n = 1
        plant = said[i] in PLANT and n == 1 and (said[i],) not in _COVERED
        i += n
    return found


def conflicts(name: str, diet: Diet) -> list[str]:
    """What in ``name`` the household said it doesn't eat, one reason a rule, in the basket's
    words: ["contains pork: you said no pork"]; [] when the item fits."""
    if not diet.rules:
        return []
    found, said, reasons = _found(name), words(name), []
    for rule in diet.rules:
        if rule.covers:
            hit = [c for _, held in found for c in ORDER if c in held and c in rule.covers]
            if hit:
                reasons.append(f"contains {hit[0]}: you said {rule.said}")
        elif covered := _COVERED.get(rule.words):  # "no milk": milk, not oat or almond milk
            if any(_within(rule.words, phrase) and held & covered for phrase, held in found):
                reasons.append(f"contains {rule.shown}: you said {rule.said}")
        elif rule.words and _within(rule.words, said):
            reasons.append(f"contains {rule.shown}: you said {rule.said}")
    return reasons


def _within(part: tuple[str, ...], whole: tuple[str, ...]) -> bool:
    return any(whole[i : i + len(part)] == part for i in range(len(whole) - len(part) + 1))
