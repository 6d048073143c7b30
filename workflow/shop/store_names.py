"""What a US grocery store calls a thing the shopper may name the British way.

The offline shopper's recipe table (``workflow.shop.dishes``) and many a household write
"beef mince", "coriander" and "tinned chopped tomatoes"; Kroger's shelves say "ground beef",
"cilantro" and "diced tomatoes". :func:`store_name` gives the name a product is searched for
and matched by (``bot.orders.kroger_prices``, ``workflow.shop.products.name_match``); the basket
keeps the household's own words beside the product found. Names are compared as
``workflow.shop.names`` reads them (lower case, singular), whole name first, then the name
after a leading "tinned" (said "canned") or "fresh" (kept). A name not in :data:`US_NAMES` is
searched as written. Left out on purpose: words whose US sense differs ("tomato purée" is a
paste in Britain, a purée in the US; "plum tomatoes" are tinned in British recipes, fresh Romas
in the US), and garlic cloves (stores sell bulbs: how many cloves a bulb holds is a guess).
"""

from __future__ import annotations

from .names import name_key

# The British (or recipe) name, as names.name_key reads it → the US shelf's.
US_NAMES: dict[str, str] = {
    "beef mince": "ground beef",
    "mince": "ground beef",
    "lamb mince": "ground lamb",
    "pork mince": "ground pork",
    "turkey mince": "ground turkey",
    "chopped tomato": "diced tomatoes",
    "tomato passata": "tomato puree",
    "passata": "tomato puree",
    "coriander": "cilantro",
    "courgette": "zucchini",
    "aubergine": "eggplant",
    "spring onion": "green onions",
    "rocket": "arugula",
    "double cream": "heavy cream",
    "single cream": "light cream",
    "soured cream": "sour cream",
    "plain flour": "all purpose flour",
    "self raising flour": "self rising flour",
    "caster sugar": "granulated sugar",
    "icing sugar": "powdered sugar",
    "prawn": "shrimp",
    "king prawn": "jumbo shrimp",
    "oven chip": "frozen french fries",
    "crisp": "potato chips",
    "yoghurt": "yogurt",
    "natural yoghurt": "plain yogurt",
    "chicken stock": "chicken broth",
    "beef stock": "beef broth",
    "vegetable stock": "vegetable broth",
    "stock cube": "bouillon cubes",
    "vegetable stock cube": "vegetable bouillon cubes",
    "pizza base": "pizza crusts",
    "tortilla wrap": "flour tortillas",
    "pitta bread": "pita bread",
    "burger bun": "hamburger buns",
    "salad leave": "salad mix",
    "beansprout": "bean sprouts",
    "baking potato": "russet potatoes",
    "new potato": "baby potatoes",
    "stewing beef": "beef stew meat",
    "porridge oat": "old fashioned oats",
    "toilet roll": "toilet paper",
    "kitchen roll": "paper towels",
    "lasagne sheet": "lasagna noodles",
    "gravy granule": "gravy mix",
    "fresh ginger": "ginger root",
    "bell pepper": "bell peppers",
}
# A leading word that says how it is sold, as a US shelf says it: kept, so that "tinned
# tomatoes" never ties with fresh ones ("fresh ginger" has its own entry above).
_SOLD_AS = {"tinned ": "canned ", "fresh ": "fresh "}


def store_name(name: str) -> str:
    """``name`` as a US store's shelf says it: "beef mince" → "ground beef", "tinned black
    beans" → "canned black bean", "tinned chopped tomatoes" → "diced tomatoes" (a US name that
    says canned by itself); the name itself when the table has nothing for it."""
    key = name_key(name)
    if key in US_NAMES:
        return US_NAMES[key]
    for british, us in _SOLD_AS.items():
        if key.startswith(british):
            rest = key.removeprefix(british)
            if british == "tinned " and rest in US_NAMES:
                return US_NAMES[rest]
            return us + US_NAMES.get(rest, rest)
    return name
