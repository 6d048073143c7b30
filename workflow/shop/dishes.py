"""The offline shopper's recipe table, and how its lines (and a basket's) are read.

Each entry of :data:`DISHES` is ``"name|synonym|…": "line; line; …"``: what to buy for
:data:`SERVINGS`, each line as ``Item.line`` writes one (``500 g beef mince``, ``2 lemons``:
quantity, an optional unit of :data:`UNITS`, name). :data:`STAPLES` are things a change may add
that no dish uses, as much as is bought at once. :data:`AISLE_OF` says where every ingredient is
found. Counted things are named in the plural; :meth:`Line.item` says "1 lemon" itself.

Names are compared by :func:`workflow.shop.names.name_key`: lower case, singular, no
punctuation ("Tomatoes" is "tomato"), so "lasagna" finds "lasagne" only because the table lists
both.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from .basket import MAX_NOTE_LENGTH, MAX_QUANTITY, Item
from .names import name_key, singular, words

SERVINGS = 2  # every quantity below feeds this many

DISHES: dict[str, str] = {
    "tacos|taco": "300 g beef mince; 6 taco shells; 1 head lettuce; 3 tomatoes; 100 g cheddar; "
    "150 ml soured cream",
    "fajitas|fajita|chicken fajitas": "300 g chicken breast; 6 tortilla wraps; 2 bell peppers; "
    "2 onions; 150 ml soured cream; 1 pack fajita seasoning",
    "burritos|burrito": "250 g beef mince; 4 tortilla wraps; 200 g rice; "
    "400 g tinned black beans; 100 g cheddar; 1 jar salsa",
    "chilli|chili|chilli con carne|chili con carne": "300 g beef mince; 400 g tinned kidney beans; "
    "400 g tinned chopped tomatoes; 2 onions; 2 bell peppers; 200 g rice",
    "curry|chicken curry|tikka masala|chicken tikka masala|korma|chicken korma": "400 g chicken "
    "thighs; 2 onions; 4 garlic cloves; 400 ml coconut milk; 1 jar curry paste; 200 g rice",
    "thai green curry|green curry": "300 g chicken breast; 400 ml coconut milk; "
    "1 jar green curry paste; 200 g green beans; 1 bunch coriander; 200 g rice",
    "dal|dhal|daal": "250 g red lentils; 2 onions; 4 garlic cloves; 400 g tinned chopped tomatoes; "
    "400 ml coconut milk; 200 g rice",
    "lentil soup": "250 g red lentils; 3 carrots; 2 onions; 1 l vegetable stock; "
    "400 g tinned chopped tomatoes",
    "soup|vegetable soup|veg soup": "3 carrots; 2 onions; 2 leeks; 500 g potatoes; "
    "1 l vegetable stock; 1 loaf crusty bread",
    "tomato soup": "800 g tinned chopped tomatoes; 2 onions; 500 ml vegetable stock; "
    "100 ml double cream; 1 loaf crusty bread",
    "chicken soup|chicken noodle soup": "300 g chicken thighs; 3 carrots; 1 l chicken stock; "
    "150 g egg noodles",
    "stir-fry|stir fry|stirfry|vegetable stir-fry": "250 g egg noodles; 2 bell peppers; "
    "1 head broccoli; 4 garlic cloves; 30 g fresh ginger; 50 ml soy sauce",
    "chicken stir-fry|chicken stir fry": "300 g chicken breast; 250 g egg noodles; 2 bell peppers; "
    "1 head broccoli; 4 garlic cloves; 30 g fresh ginger; 50 ml soy sauce",
    "beef stir-fry|beef stir fry": "300 g beef steak; 250 g egg noodles; 2 bell peppers; "
    "1 head broccoli; 4 garlic cloves; 30 g fresh ginger; 50 ml soy sauce",
    "lasagne|lasagna": "400 g beef mince; 250 g lasagne sheets; 500 g tomato passata; 2 onions; "
    "500 ml milk; 100 g cheddar",
    "spaghetti bolognese|bolognese|spag bol|spaghetti bolognaise": "300 g beef mince; "
    "250 g spaghetti; 500 g tomato passata; 2 onions; 2 carrots; 50 g parmesan",
    "spaghetti and meatballs|meatballs": "400 g beef meatballs; 250 g spaghetti; "
    "500 g tomato passata; 50 g parmesan",
    "carbonara|spaghetti carbonara": "250 g spaghetti; 150 g pancetta; 3 eggs; 50 g parmesan",
    "pasta|pasta bake": "250 g pasta; 500 g tomato passata; 4 garlic cloves; 1 bunch basil; "
    "50 g parmesan",
    "mac and cheese|macaroni cheese|mac n cheese": "250 g macaroni; 200 g cheddar; 500 ml milk; "
    "50 g butter",
    "gnocchi": "500 g gnocchi; 500 g tomato passata; 125 g mozzarella; 1 bunch basil",
    "pizza|pizzas|homemade pizza": "2 pizza bases; 250 g mozzarella; 200 g tomato passata; "
    "150 g mushrooms",
    "risotto|mushroom risotto": "300 g arborio rice; 250 g mushrooms; 2 shallots; "
    "1 l vegetable stock; 50 g parmesan; 50 g butter",
    "paella": "300 g paella rice; 150 g chorizo; 200 g prawns; 2 bell peppers; 1 l chicken stock; "
    "150 g frozen peas",
    "fish|baked fish|fish dinner": "2 white fish fillets; 500 g new potatoes; 200 g green beans; "
    "1 lemons",
    "fish and chips|fish n chips|fish & chips": "2 white fish fillets; 500 g oven chips; "
    "200 g frozen peas; 1 lemons",
    "fish pie": "400 g fish pie mix; 800 g potatoes; 500 ml milk; 50 g butter; 150 g frozen peas",
    "salmon": "2 salmon fillets; 500 g new potatoes; 1 bunch asparagus; 1 lemons",
    "roast chicken|roast|roast dinner|sunday roast": "1 whole chickens; 800 g potatoes; 3 carrots; "
    "200 g green beans; 1 pack gravy granules",
    "burgers|burger|hamburgers|cheeseburgers": "2 beef burgers; 2 burger buns; 1 head lettuce; "
    "2 tomatoes; 100 g cheddar; 500 g oven chips",
    "sausages and mash|sausage and mash|bangers and mash": "6 sausages; 800 g potatoes; "
    "50 g butter; 1 pack gravy granules; 150 g frozen peas",
    "toad in the hole": "6 sausages; 3 eggs; 300 ml milk; 150 g plain flour",
    "salad|green salad": "1 head lettuce; 3 tomatoes; 1 cucumbers; 1 red onions; 200 g feta",
    "caesar salad|chicken caesar salad": "300 g chicken breast; 1 head lettuce; 50 g parmesan; "
    "1 pack croutons",
    "omelette|omelettes|omelet": "6 eggs; 100 g cheddar; 150 g mushrooms; 2 tomatoes",
    "pancakes|pancake": "150 g plain flour; 3 eggs; 500 ml milk; 2 lemons; 100 g caster sugar",
    "shepherd's pie|shepherds pie": "400 g lamb mince; 800 g potatoes; 2 onions; 2 carrots; "
    "500 ml beef stock",
    "cottage pie": "400 g beef mince; 800 g potatoes; 2 onions; 2 carrots; 500 ml beef stock",
    "stew|beef stew|casserole": "500 g stewing beef; 3 carrots; 2 onions; 500 g potatoes; "
    "500 ml beef stock",
    "ramen": "250 g ramen noodles; 1 l chicken stock; 2 eggs; 150 g mushrooms; "
    "1 bunch spring onions; 50 ml soy sauce",
    "pad thai": "200 g rice noodles; 200 g prawns; 2 eggs; 200 g beansprouts; 50 g peanuts; "
    "2 limes",
    "fried rice|egg fried rice": "250 g rice; 3 eggs; 150 g frozen peas; 1 bunch spring onions; "
    "50 ml soy sauce",
    "steak|steak and chips": "2 beef steaks; 500 g oven chips; 150 g mushrooms; 100 g salad leaves",
    "pork chops": "2 pork chops; 800 g potatoes; 200 g green beans",
    "jacket potatoes|jacket potato|baked potatoes": "4 baking potatoes; 400 g tinned baked beans; "
    "150 g cheddar; 50 g butter",
    "quiche": "1 pack shortcrust pastry; 4 eggs; 300 ml double cream; 100 g cheddar; 150 g bacon",
    "falafel|falafel wraps": "1 pack falafel; 4 pitta breads; 1 tub hummus; 1 cucumbers; "
    "2 tomatoes",
    "sushi": "300 g sushi rice; 1 pack nori sheets; 200 g salmon fillets; 1 cucumbers; "
    "1 avocados; 50 ml soy sauce",
}

STAPLES = (
    "1 l milk; 1 l oat milk; 6 eggs; 1 loaf bread; 250 g butter; 1 kg rice; 500 g pasta; "
    "6 onions; 1 bulb garlic; 500 ml olive oil; 6 bananas; 6 apples; 2 lemons; 500 g yoghurt; "
    "250 g cheddar; 1 kg potatoes; 6 tomatoes; 1 l orange juice; 1 pack toilet roll; "
    "1 pack coffee; 1 pack tea bags; 1 pack cereal"
)

AISLE_OF: dict[str, str] = {
    name: aisle
    for aisle, names in {
        "produce": "lettuce, tomatoes, bell peppers, onions, red onions, garlic, garlic cloves, "
        "carrots, leeks, potatoes, new potatoes, baking potatoes, broccoli, fresh ginger, "
        "mushrooms, shallots, green beans, coriander, basil, lemons, limes, asparagus, "
        "cucumbers, spring onions, beansprouts, salad leaves, avocados, bananas, apples, "
        "tofu, smoked tofu",
        "meat and fish": "beef mince, chicken breast, chicken thighs, beef steak, beef steaks, "
        "beef meatballs, pancetta, chorizo, prawns, white fish fillets, fish pie mix, "
        "salmon fillets, whole chickens, beef burgers, sausages, lamb mince, stewing beef, "
        "pork chops, bacon",
        "dairy and eggs": "cheddar, soured cream, double cream, milk, oat milk, parmesan, butter, "
        "mozzarella, eggs, feta, yoghurt, hummus, dairy-free spread, vegan cheese, "
        "vegan mozzarella, vegan feta, oat cream, soya yoghurt",
        "bakery": "taco shells, tortilla wraps, crusty bread, bread, pizza bases, burger buns, "
        "pitta breads, gluten-free bread, corn tortillas, gluten-free pizza bases, "
        "gluten-free wraps",
        "pantry": "fajita seasoning, rice, tinned black beans, salsa, tinned kidney beans, "
        "tinned chopped tomatoes, coconut milk, curry paste, green curry paste, red lentils, "
        "vegetable stock, chicken stock, beef stock, egg noodles, soy sauce, lasagne sheets, "
        "tomato passata, spaghetti, pasta, macaroni, gnocchi, arborio rice, paella rice, "
        "gravy granules, plain flour, croutons, caster sugar, ramen noodles, rice noodles, "
        "peanuts, tinned baked beans, nori sheets, sushi rice, olive oil, chickpeas, tamari, "
        "gluten-free spaghetti, gluten-free pasta, gluten-free lasagne sheets, gluten-free flour, "
        "gluten-free gravy granules, coffee, tea bags, cereal",
        "frozen": "frozen peas, oven chips, falafel, shortcrust pastry, soya mince, "
        "bean burgers, vegetarian sausages, vegetarian meatballs",
        "drinks": "orange juice",
        "household": "toilet roll",
    }.items()
    for name in names.split(", ")
}

_UNIT_GROUPS = (
    "g gram grams", "kg kilo kilos", "ml", "l litre litres liter liters",
    "pack packs packet packets", "head heads", "bulb bulbs", "bunch bunches", "jar jars",
    "loaf loaves", "bag bags", "tub tubs", "tin tins can cans", "bottle bottles", "piece pieces",
)  # fmt: skip
UNITS = {word: group.split()[0] for group in _UNIT_GROUPS for word in group.split()}
NUMBER_WORDS = (
    "zero", "one", "two", "three", "four", "five", "six",
    "seven", "eight", "nine", "ten", "eleven", "twelve",
)  # fmt: skip
_NUMBERS = {word: n for n, word in enumerate(NUMBER_WORDS)} | {"a": 1, "an": 1}


def number(text: str) -> int | float | None:
    """``2``, ``1.5``, ``two``, ``a``; None if ``text`` is not a quantity."""
    if text in _NUMBERS:
        return _NUMBERS[text]
    if not re.fullmatch(r"\d+(?:\.\d+)?", text):
        return None
    value = float(text)
    return int(value) if value.is_integer() else value


@dataclass
class Line:
    """One line of a basket being written (changed in place there; an ``Item`` once written)."""

    name: str
    quantity: float
    unit: str = ""
    note: str | None = None

    @property
    def key(self) -> str:
        return name_key(self.name)

    def item(self) -> Item:
        """As an item: a known ingredient named as the table names it ("1 lemon", "2 lemons"),
        in its aisle; anything else in "other"."""
        name, known = self.name, KNOWN.get(self.key)
        if known is not None:
            name = known.name
            if self.quantity == 1 and not self.unit:
                head, _, last = name.rpartition(" ")
                name = f"{head} {singular(last)}".lstrip()
        quantity = int(self.quantity) if float(self.quantity).is_integer() else self.quantity
        aisle = AISLE.get(self.key, "other")
        return Item(name=name, quantity=quantity, unit=self.unit, note=self.note, aisle=aisle)


def read_line(text: str) -> Line | None:
    """A line as ``Item.line`` writes it (``500 g chicken breast — a note``, ``2 lemons``, or
    any other text: one of it); None for a line with no name."""
    text, _, note = text.partition(" — ")
    parts = text.split()
    quantity = number(parts[0]) if len(parts) > 1 and parts[0][0].isdigit() else None
    if quantity is not None:
        parts = parts[1:]
    unit = parts.pop(0) if len(parts) > 1 and parts[0] in UNITS else ""
    if not parts:
        return None
    amount = min(quantity, MAX_QUANTITY) if quantity else 1
    return Line(" ".join(parts), amount, unit, note[:MAX_NOTE_LENGTH] or None)


def _lines(text: str) -> tuple[Line, ...]:
    return tuple(line for line in map(read_line, text.split("; ")) if line)


DISH_LINES = {names.split("|")[0]: _lines(text) for names, text in DISHES.items()}
ALIASES = {words(alias): names.split("|")[0] for names in DISHES for alias in names.split("|")}
LONGEST_ALIAS = max(map(len, ALIASES))
# Dish names that hold "and" or "&", longest first: a list is not split inside them.
JOINED_NAMES = sorted(
    (alias for names in DISHES for alias in names.split("|") if re.search(" (and|&) ", alias)),
    key=lambda alias: (-len(alias), alias),
)
# The first line naming an ingredient says how it is written and how much a change adds.
_ALL_LINES = [*_lines(STAPLES), *(line for lines in DISH_LINES.values() for line in lines)]
KNOWN = {line.key: line for line in reversed(_ALL_LINES)}
AISLE = {name_key(name): aisle for name, aisle in AISLE_OF.items()}


def aisle_of(name: str) -> str:
    """Where ``name`` is found in a shop: the table's aisle for it, else "other"."""
    return AISLE.get(name_key(name), "other")
