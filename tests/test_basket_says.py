"""What a basket says of itself (issue 33, confusing points): what "Basket 1 of 3" means (rounds
of changes), and whom it is for, how many included, whether or not the household is set.

Through the real handler and the fake Slack; the line's rule also as a table
(``bot.steps.whom.household_line``).
"""

from __future__ import annotations

from typing import Any

import pytest

from bot.steps.whom import NOT_SET, household_line
from tests.bot_kit import World, change, context_text, header, start_basket
from workflow.shop.basket import ShopRequest
from workflow.shop.household import Household


@pytest.mark.parametrize(
    ("text", "household", "line"),
    [
        ("tacos on Friday", Household(), NOT_SET),
        ("tacos on Friday for six", Household(), "For 6"),
        ("a family of 5: pasta, curry", Household(), "For 5"),
        ("tacos", Household(people=3), "For 3"),
        ("tacos for 6", Household(people=4, avoid="pork"), "For 6 · no pork"),
        (
            "tacos",
            Household(avoid="pork", staples="oat milk"),
            f"{NOT_SET} · no pork · always oat milk",
        ),
    ],
)
def test_the_line_says_how_many_the_shopper_was_told(
    text: str, household: Household, line: str
) -> None:
    """The request's own number first (as the offline shopper reads it, and Claude reads the
    request), else the settings'; with neither, that it was not said (Claude is told none)."""
    assert household_line(ShopRequest(text=text, household=household)) == line


def test_each_basket_says_what_its_round_means_up_to_the_last(world: World) -> None:
    basket = start_basket(world)
    said = context_text(basket)
    assert header(basket) == "Basket 1 of 3"
    assert "Change… writes basket 2; after basket 3 you can only approve or reject." in said
    assert "Edit items changes this one without using a basket." in said
    change(world, basket, "fewer")
    second = world.baskets()[-1]
    assert header(second) == "Basket 2 of 3"
    assert "Change… writes basket 3; after basket 3" in context_text(second)
    change(world, second, "fewer again")
    last = world.baskets()[-1]
    assert header(last).startswith("Basket 3 of 3")
    assert "Basket 3 is the last: no more changes." in context_text(last)
    assert "change_basket" not in world.buttons(last)
    assert world.slack.violations == []


def basket_for(world: World, text: str) -> dict[str, Any]:
    world.shop(text)
    world.run_lazies()
    return world.baskets()[-1]


def test_a_basket_says_whom_it_is_for_with_or_without_a_household(world: World) -> None:
    from tests.settings_kit import number, open_settings, save

    assert f"· {NOT_SET}" in context_text(basket_for(world, "dinners this week"))
    assert "· For 6" in context_text(basket_for(world, "tacos on Friday for six"))
    world.slack.set_person("U0CAROL", is_admin=True)
    form = open_settings(world, "U0CAROL")
    assert form is not None and save(world, "U0CAROL", form, people=number(3)) == {}
    said = context_text(basket_for(world, "pasta on Monday"))
    assert "· For 3" in said and NOT_SET not in said
    assert "· For 5" in context_text(basket_for(world, "pasta on Monday for 5 people"))


def test_the_offline_shopper_says_the_number_it_shopped_for(
    world: World, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Without a model key the offline shopper writes the basket, for its own default number
    when nothing says one (``workflow.shop.reading.household``, read here, not written down):
    the basket says that number, where Claude's says none was said."""
    from workflow.shop.reading import household

    default, _ = household("")
    monkeypatch.delenv("ANTHROPIC_API_KEY")
    world.boot()
    said = context_text(basket_for(world, "tacos on Friday, pasta on Monday"))
    assert f"· For {default}" in said and NOT_SET not in said
    assert "· For 6" in context_text(basket_for(world, "tacos on Friday for six"))
