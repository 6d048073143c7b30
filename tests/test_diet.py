"""What a household doesn't eat, read into rules, and every item's name checked against them
(issue 33, 1): the reading of "What we don't eat" (``workflow.shop.diet``), the basket's context
line, and the flag the bot's check writes on an item (``workflow.shop.check``)."""

from __future__ import annotations

import pytest

from workflow.shop.basket import Item
from workflow.shop.check import conflicting, flagged, said_diet, week_diet
from workflow.shop.diet import conflicts, read_diet
from workflow.shop.household import Household


@pytest.mark.parametrize(
    ("said", "shown", "told"),
    [
        ("meat, fish", "no meat, fish", "We don't eat: meat, fish."),
        ("vegetarian", "vegetarian", "We are vegetarian (no meat, poultry, fish or seafood)."),
        ("we are vegetarian: no meat please", "vegetarian", None),  # "no meat" adds nothing
        ("Veggie", "vegetarian", None),
        ("vegan", "vegan", "We are vegan (no meat, fish, dairy, eggs or honey)."),
        ("pescatarian, no nuts", "pescatarian, no nuts", None),
        ("vegetarian except fish", "vegetarian except fish", "We are vegetarian except fish."),
        ("vegetarian, but we eat fish", "vegetarian except fish", None),
        ("vegan but eggs", "vegan except eggs", None),
        ("vegetarian except on Sundays", "vegetarian", None),  # the stricter reading
        ("nuts (allergy)", "no nuts", "We don't eat: nuts."),
        ("no meat or fish please", "no meat, fish", None),
        ("we don't eat pork", "no pork", None),
        ("gluten-free", "no gluten", None),
        ("dairy and eggs", "no dairy, eggs", None),
        ("fish and seafood", "no fish", None),
        ("mushrooms", "no mushrooms", "We don't eat: mushrooms."),
        ("pork <!channel>", "no pork <!channel>", "We don't eat: pork <!channel>."),
        ("none", "", ""),
        ("", "", ""),
    ],
)
def test_what_a_household_doesnt_eat_is_read_into_rules(
    said: str, shown: str, told: str | None
) -> None:
    """A diet is shown as said ("vegetarian", never "no vegetarian"); a category, or plain words,
    after "no"; a rule another covers is said once."""
    diet = read_diet(said)
    assert diet.shown() == shown
    if told is not None:
        assert diet.told() == told


MEAT_FISH = "meat, fish"


@pytest.mark.parametrize(
    ("avoid", "name", "reasons"),
    [
        (MEAT_FISH, "beef mince", ["contains beef: you said no meat"]),
        (MEAT_FISH, "chicken thighs", ["contains poultry: you said no meat"]),
        (MEAT_FISH, "chicken stock", ["contains poultry: you said no meat"]),
        (MEAT_FISH, "pancetta", ["contains pork: you said no meat"]),
        (MEAT_FISH, "salmon fillets", ["contains fish: you said no fish"]),
        (MEAT_FISH, "prawns", ["contains shellfish: you said no fish"]),
        (MEAT_FISH, "worcestershire sauce", ["contains fish: you said no fish"]),
        (MEAT_FISH, "soya mince", []),  # a plant word clears the meat after it
        (MEAT_FISH, "bean burgers", []),
        (MEAT_FISH, "vegetarian sausages", []),
        (MEAT_FISH, "vegetable stock", []),
        ("vegetarian", "bacon", ["contains pork: you said vegetarian"]),
        ("vegetarian", "egg noodles", []),
        ("vegan", "egg noodles", ["contains eggs: you said vegan"]),
        ("vegetarian except fish", "salmon fillets", []),
        ("vegetarian except fish", "bacon", ["contains pork: you said vegetarian except fish"]),
        ("vegan", "parmesan", ["contains dairy: you said vegan"]),
        ("vegan", "oat milk", []),  # the longer phrase wins over "milk"
        ("vegan", "vegan cheese", []),
        ("vegan", "eggplant", []),  # one word, not an egg
        ("vegan", "butternut squash", []),
        ("vegan", "butter beans", []),
        ("no pork", "pork chops", ["contains pork: you said no pork"]),
        ("no pork", "chicken breast", []),
        ("gluten", "spaghetti", ["contains gluten: you said no gluten"]),
        ("gluten", "gluten-free spaghetti", []),
        ("gluten", "soy sauce", ["contains gluten: you said no gluten"]),
        ("gluten", "rice noodles", []),
        ("nuts", "almond milk", ["contains nuts: you said no nuts"]),
        ("nuts", "peanuts", ["contains nuts: you said no nuts"]),
        ("nuts", "nutmeg", []),
        ("milk", "milk", ["contains milk: you said no milk"]),
        ("milk", "almond milk", []),  # plain words that are a food: that food, not a nut milk
        ("milk", "oat milk", []),
        ("mushrooms", "chestnut mushrooms", ["contains mushrooms: you said no mushrooms"]),
        (
            "meat, dairy",
            "carbonara",
            ["contains pork: you said no meat", "contains dairy: you said no dairy"],
        ),
        ("", "bacon", []),
    ],
)
def test_an_items_name_is_checked_against_the_rules(
    avoid: str, name: str, reasons: list[str]
) -> None:
    """What the basket says beside an item: "contains pork: you said no pork", one reason a
    rule, the most telling category first."""
    assert conflicts(name, read_diet(avoid)) == reasons


def test_the_context_line_shows_a_diet_as_said() -> None:
    """Issue 33: "vegetarian" in the field showed "no vegetarian"."""
    assert Household(people=3, avoid="vegetarian").line() == "For 3 · vegetarian"
    home = Household(people=3, avoid="meat, fish", staples="bread, milk")
    assert home.line() == "For 3 · no meat, fish · always bread, milk"
    assert Household(avoid="none").line() == ""


@pytest.mark.parametrize(
    ("text", "shown"),
    [
        ("no fish, add oat milk", "no fish"),
        ("we are vegetarian: no meat please", "vegetarian"),
        ("we don't eat pork", "no pork"),
        ("no salmon", ""),  # a change of the basket, not a rule
        ("fish on Friday", ""),  # a dinner
        ("vegetarian lasagne on Monday", ""),
        ("tacos on Friday", ""),
    ],
)
def test_a_request_or_change_states_rules_only_as_a_diet_or_category(text: str, shown: str) -> None:
    assert said_diet(text).shown() == shown


def test_the_weeks_rules_are_the_households_and_what_the_week_said() -> None:
    diet = week_diet(Household(avoid="pork"), ["tacos on Friday", "no fish"])
    assert diet.shown() == "no pork, fish"


def test_a_flag_is_the_notes_first_words_and_is_recomputed_every_time() -> None:
    """The flag is the bot's, on the item, before the shopper's note; written again it is not
    doubled, and it goes once the conflict has gone."""
    diet = read_diet("pork")
    items = [
        Item(name="bacon", quantity=150, unit="g", note="for Sunday"),
        Item(name="rice", quantity=1, unit="kg"),
    ]
    once = flagged(items, diet)
    assert once[0].line() == "150 g bacon — contains pork: you said no pork; for Sunday"
    assert once[1] == items[1]
    assert flagged(once, diet) == once
    assert flagged(once, read_diet("fish"))[0].note == "for Sunday"
    assert flagged(once, read_diet(""))[0] == once[0]  # no rules: notes are left alone
    assert conflicting(items, diet) == ["bacon: contains pork: you said no pork"]
