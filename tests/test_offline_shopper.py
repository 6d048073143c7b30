"""The offline shopper on its own: it reads the request and the change, with its recipe table."""

from __future__ import annotations

import pytest

from workflow.shop.basket import AISLES, Item
from workflow.shop.console import EXAMPLE_WEEK
from workflow.shop.dishes import AISLE_OF, DISH_LINES, DISHES, KNOWN
from workflow.shop.offline import NoDinnersFound, OfflineShopper
from workflow.shop.shopper import Brief, ShopperReply

STIR_FRY = [
    "300 g chicken breast",
    "250 g egg noodles",
    "2 bell peppers",
    "1 head broccoli",
    "4 garlic cloves",
    "30 g fresh ginger",
    "50 ml soy sauce",
]
LENTIL_SOUP = [
    "250 g red lentils",
    "3 carrots",
    "2 onions",
    "1 l vegetable stock",
    "400 g tinned chopped tomatoes",
]
PIZZA = ["2 pizza bases", "250 g mozzarella", "200 g tomato passata", "150 g mushrooms"]


async def write(request: str) -> ShopperReply:
    return await OfflineShopper().write(Brief(request=request))


async def lines(request: str) -> list[str]:
    return [item.line() for item in (await write(request)).items]


async def revised(request: str, change: str, *earlier: str) -> list[str]:
    """Basket 1 of ``request``, then the basket the shopper writes for ``change``."""
    first = await lines(request)
    brief = Brief(request=request, last_basket=first, change=change, earlier=earlier)
    return [item.line() for item in (await OfflineShopper().write(brief)).items]


async def test_known_dishes_become_their_ingredients_in_the_order_asked() -> None:
    request = "chicken stir-fry Monday, lentil soup Wednesday, pizza Saturday"
    assert await lines(request) == STIR_FRY + LENTIL_SOUP + PIZZA


async def test_the_same_ingredient_from_two_dishes_is_one_line() -> None:
    # Lasagne and bolognese both use beef mince, tomato passata and onions.
    basket = await lines("lasagne and spaghetti bolognese")
    assert "700 g beef mince" in basket and "1000 g tomato passata" in basket
    assert "4 onions" in basket
    assert len(basket) == len(set(basket)) == 9


async def test_quantities_are_scaled_to_the_household() -> None:
    two = await lines("tacos on Friday")
    assert two[:3] == ["300 g beef mince", "6 taco shells", "1 head lettuce"]
    for said in ("tacos for 4 on Friday", "tacos Friday, 4 people", "family of four: tacos"):
        assert (await lines(said))[:3] == ["600 g beef mince", "12 taco shells", "2 head lettuce"]
    # For one, counts round up to a whole one and grams to a tidy figure.
    one = await lines("fish for one")
    assert one == ["1 white fish fillet", "250 g new potatoes", "100 g green beans", "1 lemon"]
    assert (await lines("curry for 3"))[:2] == ["600 g chicken thighs", "3 onions"]


async def test_what_the_household_has_is_left_out() -> None:
    basket = await lines("pasta Monday, fish Friday; we have rice")
    assert basket == [
        "250 g pasta",
        "500 g tomato passata",
        "4 garlic cloves",
        "1 bunch basil",
        "50 g parmesan",
        "2 white fish fillets",
        "500 g new potatoes",
        "200 g green beans",
        "1 lemon",
    ]
    with_rice = await lines("curry on Monday")
    assert "200 g rice" in with_rice
    without = await lines("curry on Monday. We have rice")
    assert without == [line for line in with_rice if line != "200 g rice"]
    got = await lines("chilli, risotto. We've got onions and garlic, and we already have rice")
    assert not [line for line in got if "onion" in line or "garlic" in line or "g rice" in line]
    assert "300 g arborio rice" not in got  # arborio rice is rice
    assert "200 g rice noodles" in await lines("pad thai. we have rice")  # noodles are not


async def test_the_console_example_week() -> None:
    basket = await lines(EXAMPLE_WEEK)  # "... We have rice, onions and olive oil."
    assert basket == STIR_FRY + [line for line in LENTIL_SOUP if line != "2 onions"] + PIZZA


async def test_an_unknown_dish_is_one_line_that_says_so() -> None:
    reply = await write("moussaka on Thursday, tacos on Friday, Grandma's hotpot")
    assert reply.items[0] == Item(
        name="ingredients for moussaka", quantity=1, unit="", aisle="other"
    )
    assert reply.items[-1].line() == "1 ingredients for grandma's hotpot"
    assert "300 g beef mince" in [item.line() for item in reply.items]


async def test_fish_and_chips_is_one_dish_and_an_and_list_is_not() -> None:
    assert await lines("fish and chips on Friday") == [
        "2 white fish fillets",
        "500 g oven chips",
        "200 g frozen peas",
        "1 lemon",
    ]
    both = await lines("tacos and pizza")
    assert both == (await lines("tacos")) + PIZZA


async def test_a_request_on_several_lines_with_days_and_bullets() -> None:
    request = "Family of 4.\nMonday: lasagne\n- Tuesday: fish & chips\n• beans on toast Wednesday"
    basket = await lines(request)
    assert basket[:2] == ["800 g beef mince", "500 g lasagne sheets"]
    assert "4 white fish fillets" in basket
    assert basket[-1] == "1 ingredients for beans on toast"


async def test_no_pizza_comma_add_oat_milk() -> None:
    request = "chicken stir-fry Monday, lentil soup Wednesday, pizza Saturday"
    basket = await revised(request, "no pizza, add oat milk")
    assert basket == STIR_FRY + LENTIL_SOUP + ["1 l oat milk"]
    # A verb carries over the rest of its list.
    carried = await revised(request, "No pizza, add oat milk and eggs")
    assert carried == STIR_FRY + LENTIL_SOUP + ["1 l oat milk", "6 eggs"]


async def test_removing_by_without_drop_and_what_the_household_has() -> None:
    request = "chicken stir-fry, lentil soup"
    assert await revised(request, "without ginger") == [
        line for line in STIR_FRY + LENTIL_SOUP if "ginger" not in line
    ]
    dropped = await revised(request, "drop the carrots and broccoli; we still have soy sauce")
    assert dropped == [
        line
        for line in STIR_FRY + LENTIL_SOUP
        if not any(w in line for w in ("carrots", "broccoli", "soy sauce"))
    ]
    # "no chicken" is the chicken breast, not the chicken stock.
    soup = await revised("chicken soup, chicken stir-fry", "no chicken")
    assert "1 l chicken stock" in soup and not [line for line in soup if "chicken breast" in line]


async def test_removing_a_dish_the_week_never_had_takes_nothing() -> None:
    """Issue 20: "no pizza" in a week of tacos and pasta took the pizza's 200 g of passata off
    the pasta's 500 g. A change removes only what the week's dishes brought in."""
    request = "tacos on Friday, pasta on Tuesday, we have rice"
    first = await lines(request)
    assert "500 g tomato passata" in first
    assert await revised(request, "no pizza, add oat milk") == [*first, "1 l oat milk"]
    assert await revised(request, "less pizza") == first
    # A dish removed by an earlier change is not taken away twice ...
    assert await changed("pasta, pizza", "no pizza", "no pizza") == await lines("pasta")
    # ... and one an earlier change added is the week's.
    assert await changed("pasta", "add pizza", "no pizza") == await lines("pasta")


async def changed(request: str, *changes: str) -> list[str]:
    """The basket after each of ``changes`` in turn, as the workflow briefs the shopper."""
    basket = await lines(request)
    for n, change in enumerate(changes):
        brief = Brief(request, last_basket=basket, change=change, earlier=changes[:n])
        basket = [item.line() for item in (await OfflineShopper().write(brief)).items]
    return basket


async def test_a_request_in_which_nothing_is_known_is_no_basket() -> None:
    """Issue 20: "<!channel> ~strike~ *bold*" became "1 ingredients for <!channel> …", which
    could be approved and ordered. Nothing known: no basket, and a reason a person can read."""
    for request in ("<!channel> ~strike~ *bold*", "moussaka", "we have rice"):
        with pytest.raises(NoDinnersFound) as raised:
            await write(request)
        assert "found no dinners it knows" in raised.value.reason
    assert await lines("milk and eggs") == ["1 l milk", "6 eggs"]  # things to buy, not dinners


async def test_removing_a_dish_keeps_what_another_dish_needs() -> None:
    basket = await revised("pasta, pizza", "no pizza")
    assert basket == await lines("pasta")  # the passata both used is the pasta's again
    gone = await revised("moussaka, tacos", "no moussaka")
    assert gone == await lines("tacos")


async def test_more_and_less() -> None:
    request = "chicken stir-fry, lentil soup"
    basket = await revised(request, "more chicken, less carrots, more bell peppers, less soy sauce")
    assert basket[0] == "600 g chicken breast"  # weighed: doubled
    assert "3 bell peppers" in basket  # counted: one more
    assert "2 carrots" in basket  # half of 3, still a whole carrot
    assert "30 ml soy sauce" in basket  # half of 50 ml, to a tidy figure
    twice_less = await revised("salad", "less cucumber")
    assert "1 cucumber" in twice_less  # never less than one
    assert await revised("salad", "more lemons") == [*await lines("salad"), "2 lemons"]


async def test_add_with_a_quantity_a_dish_or_something_unknown() -> None:
    basket = await revised("tacos", "add 2 litres of oat milk, a loaf of bread, lasagne, kombucha")
    assert basket[-7:] == [
        "2 l oat milk",
        "1 loaf bread",
        "250 g lasagne sheets",  # the lasagne's ingredients the tacos did not have
        "500 g tomato passata",
        "2 onions",
        "500 ml milk",
        "1 kombucha",  # unknown: one of it
    ]
    assert "700 g beef mince" in basket and "200 g cheddar" in basket  # merged with the tacos'
    assert "8 eggs" in await revised("omelette", "2 more eggs")
    assert await revised("omelette", "add eggs") == await lines("omelette")  # already there


async def test_a_dish_added_later_leaves_out_what_the_household_has() -> None:
    basket = await revised("tacos; we have onions", "add chilli")
    assert not [line for line in basket if "onion" in line]
    said = await revised("tacos", "add curry", "we have rice now")
    assert "200 g rice" not in said and "400 g chicken thighs" in said


async def test_a_change_it_cannot_read_changes_nothing() -> None:
    request = "chicken stir-fry, lentil soup"
    assert await revised(request, "cheaper please") == STIR_FRY + LENTIL_SOUP
    assert await revised(request, "less meat") == STIR_FRY + LENTIL_SOUP


async def test_a_basket_another_shopper_wrote_is_read_back() -> None:
    brief = Brief(
        request="",
        last_basket=["500 g chicken thighs — for Friday", "2 tins chickpeas", "bananas"],
        change="more chickpeas",
    )
    items = (await OfflineShopper().write(brief)).items
    assert [item.line() for item in items] == [
        "500 g chicken thighs — for Friday",
        "3 tins chickpeas",
        "1 banana",  # a known ingredient, named as one
    ]
    assert [item.aisle for item in items] == ["meat and fish", "pantry", "produce"]


@pytest.mark.parametrize(
    "brief",
    [
        Brief(request=EXAMPLE_WEEK),
        Brief(request="Tacos for 6, moussaka; fish & chips Friday\nwe have eggs"),
        Brief(request="pasta", last_basket=["250 g pasta"], change="no pasta, add 3 l milk"),
    ],
)
async def test_the_same_brief_gives_the_same_basket(brief: Brief) -> None:
    first, second = await OfflineShopper().write(brief), await OfflineShopper().write(brief)
    assert first == second and first.output_tokens == 8 * len(first.items)


async def test_every_name_of_a_dish_is_that_dish() -> None:
    assert await lines("stir fry") == await lines("Stir-fry") == await lines("stirfry")
    assert await lines("lasagna") == await lines("Lasagne") == await lines("lasagne on Tuesday")
    for names in DISHES:
        first, *others = names.split("|")
        expected = await lines(first)
        assert not [line for line in expected if "ingredients for" in line], first
        for other in others:
            assert await lines(other) == expected, other


async def test_every_dish_gives_valid_items_with_a_quantity_and_an_aisle() -> None:
    assert len(DISHES) >= 40
    assert set(AISLE_OF.values()) <= set(AISLES)
    for dish, ingredients in DISH_LINES.items():
        assert all(line.key in KNOWN and line.name in AISLE_OF for line in ingredients), dish
        for size in ("", " for 1", " for 7", " for 20"):
            items = (await write(dish + size)).items
            assert items, dish
            for item in items:
                assert item.quantity is not None and item.quantity > 0
                assert isinstance(item.unit, str) and item.aisle in AISLES, item
                assert Item.from_json(item.to_json()) == item


async def test_a_long_request_gives_at_most_500_items() -> None:
    request = "tacos, " + ", ".join(f"dish number {n}" for n in range(700))
    items = (await write(request)).items
    assert len(items) == 500 and items[-1].name == "ingredients for dish number 493"
    thrice = await lines("tacos for 20. " * 3)  # three dinners of tacos, for twenty
    assert thrice[:2] == ["9000 g beef mince", "180 taco shells"]


def test_the_label_says_it_is_offline() -> None:
    label = OfflineShopper().label
    assert label.startswith("offline shopper") and "not from Claude" in label
    assert "ANTHROPIC_API_KEY" in label


def test_the_offline_shopper_shops_for_the_household_and_adds_its_staples() -> None:
    """The workspace's household: its size when the week does not say one, and each staple
    once (not when the basket has it already)."""
    from workflow.shop.household import Household
    from workflow.shop.offline import basket_for
    from workflow.shop.shopper import Brief

    home = Household(people=4, staples="oat milk, coffee; Oat milk")
    two = {i.name: i.quantity for i in basket_for(Brief("tacos on Friday"))}
    four = {i.name: i.quantity for i in basket_for(Brief("tacos on Friday", household=home))}
    assert {n for n in four if n not in two} == {"oat milk", "coffee"}
    assert all(four[n] >= q for n, q in two.items() if q is not None)
    assert four != {**two, "oat milk": 1, "coffee": 1}  # scaled to four, not two
    six = basket_for(Brief("tacos on Friday for 6", household=home))
    assert six == basket_for(Brief("tacos on Friday for 6")) + [
        i for i in basket_for(Brief("tacos on Friday", household=home)) if i.note == "always"
    ]
