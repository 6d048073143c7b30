"""What the offline shopper buys instead of an ingredient the household doesn't eat.

:data:`INSTEAD` maps an ingredient of the recipe table (``workflow.shop.dishes``) to what is
bought in its place, in the same quantity, and in its own unit when it has one ("2 salmon
fillets" becomes "2 pack tofu"). A swap is used only if it breaks none of the week's rules
itself (``workflow.shop.diet``): with no meat and no soya either, beef mince is left out. An
ingredient without a swap (eggs, whole chickens, peanuts) is left out.

:func:`fit` says which: the line as it is, its swap with a note saying why ("instead of beef
mince: you said no meat"), or None.
"""

from __future__ import annotations

from .diet import Diet, conflicts
from .dishes import Line
from .names import name_key

_PLANT_PROTEIN = ("tofu", "pack")
INSTEAD: dict[str, tuple[str, str | None]] = {
    name_key(name): swap
    for names, swap in {
        "beef mince, lamb mince": ("soya mince", None),
        "chicken breast, chicken thighs, beef steak, stewing beef, prawns": ("tofu", None),
        "beef steaks, salmon fillets, white fish fillets": _PLANT_PROTEIN,
        "fish pie mix": ("chickpeas", None),
        "beef meatballs": ("vegetarian meatballs", None),
        "beef burgers": ("bean burgers", None),
        "sausages": ("vegetarian sausages", None),
        "pancetta, bacon, chorizo": ("smoked tofu", None),
        "chicken stock, beef stock": ("vegetable stock", None),
        "milk": ("oat milk", None),
        "butter": ("dairy-free spread", None),
        "cheddar, parmesan": ("vegan cheese", None),
        "mozzarella": ("vegan mozzarella", None),
        "feta": ("vegan feta", None),
        "soured cream, double cream": ("oat cream", None),
        "yoghurt": ("soya yoghurt", None),
        "spaghetti": ("gluten-free spaghetti", None),
        "pasta, macaroni": ("gluten-free pasta", None),
        "lasagne sheets": ("gluten-free lasagne sheets", None),
        "egg noodles, ramen noodles": ("rice noodles", None),
        "soy sauce": ("tamari", None),
        "bread, crusty bread": ("gluten-free bread", None),
        "tortilla wraps": ("corn tortillas", None),
        "pizza bases": ("gluten-free pizza bases", None),
        "pitta breads": ("gluten-free wraps", None),
        "plain flour": ("gluten-free flour", None),
        "gravy granules": ("gluten-free gravy granules", None),
    }.items()
    for name in names.split(", ")
}


def fit(line: Line, diet: Diet) -> Line | None:
    """``line`` if it breaks none of ``diet``'s rules; else its swap, if that breaks none, with a
    note saying why; else None (left out)."""
    broken = conflicts(line.name, diet)
    if not broken:
        return line
    swap = INSTEAD.get(line.key)
    if swap is None or conflicts(swap[0], diet):
        return None
    name, unit = swap
    why = broken[0].partition(": ")[2]  # "you said no meat"
    return Line(
        name, line.quantity, line.unit if unit is None else unit, f"instead of {line.name}: {why}"
    )
