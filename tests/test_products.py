"""A basket item matched to a store's product, and what the basket costs (issue 34, item 2's
core): sizes read from shelf labels, the match's rule, the total against a budget, and the
values that will cross checkpoints (``Offer``, ``Priced``), refused when read back malformed
as every checkpoint value is (``tests/test_checkpoint_values.py``)."""

from __future__ import annotations

import json
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from bot.orders.kroger_values import product_of
from bot.sandbox.kroger_catalogue import CATALOGUE, LOCATIONS, at_store
from workflow.persistence.registry import TypeRegistry
from workflow.shop.basket import Item
from workflow.shop.products import (
    MAX_COUNT,
    NO_PRICE,
    NO_SIZE,
    NOT_FOUND,
    NOT_IN_STOCK,
    OFFER_FIELDS,
    TOO_MANY,
    Offer,
    Priced,
    match,
)
from workflow.shop.sizes import Dimension, cover, size_of
from workflow.shop.totals import basket_total, budget_line, money, total_line

G, ML, CT = Dimension.WEIGHT, Dimension.VOLUME, Dimension.COUNT


@pytest.mark.parametrize(
    ("text", "amount", "dimension"),
    [
        ("500 g", 500, G),
        ("1 kg", 1000, G),
        ("16 oz", 453.59237, G),  # oz on a US label is a weight
        ("1 lb", 453.59237, G),
        ("1.5 lb", 680.388555, G),
        ("2 lbs", 907.18474, G),
        ("16.9 fl oz", 499.7926496, ML),  # and fl oz a volume
        ("16.9 FL. OZ", 499.7926496, ML),
        ("48 fl oz", 1419.529419, ML),
        ("1 gal", 3785.411784, ML),
        ("0.5 gal", 1892.705892, ML),
        ("1/2 gal", 1892.705892, ML),
        ("1 qt", 946.352946, ML),
        ("1 pt", 473.176473, ML),
        ("1.5 L", 1500, ML),
        ("500 ml", 500, ML),
        ("12 ct", 12, CT),
        ("1 dozen", 12, CT),
        ("1 bunch", 1, CT),
        ("each", 1, CT),
        ("6 pk", 6, CT),
        ("2 x 400 g", 800, G),
        ("2x400g", 800, G),
        ("4 × 12 fl oz", 1419.529419, ML),
    ],
)
def test_a_shelf_labels_size_is_an_amount_in_a_base_unit(
    text: str, amount: float, dimension: Dimension
) -> None:
    size = size_of(text)
    assert size is not None
    assert size.dimension is dimension
    assert size.amount == pytest.approx(amount)


@pytest.mark.parametrize(
    "text", ["", "family size", "16", "oz", "0 g", "-1 lb", "3 x 2 x 1 g", "1/0 gal", "12 furlongs"]
)
def test_a_size_we_do_not_read_is_none_not_a_guess(text: str) -> None:
    assert size_of(text) is None


def test_every_size_the_stand_in_sells_is_read() -> None:
    """The Kroger stand-in's 387 products (``bot.sandbox.kroger_catalogue``) are written as the
    shelf labels are: each size reads, so an unmatched item there is the rule's, not a label's."""
    assert [p.size for p in CATALOGUE if size_of(p.size) is None] == []


def test_every_product_the_stand_in_answers_is_an_offer() -> None:
    """What the bot reads from a Products API answer (``bot.orders.kroger_values.Product``)
    fits an :class:`Offer` field for field at every stand-in store, none refused by its limits;
    and the price paid is the same on both sides."""
    for location_id in LOCATIONS:
        for product in CATALOGUE:
            read = product_of(at_store(product, location_id))
            fields = {name: getattr(read, name) for name in OFFER_FIELDS}
            assert Offer(**fields).price_cents == read.price_cents


def item(quantity: float | None, unit: str = "", name: str = "chicken thighs") -> Item:
    return Item(name=name, quantity=quantity, unit=unit)


@pytest.mark.parametrize(
    ("wanted", "size", "count"),
    [
        (item(500, "g"), "450 g", 2),  # the example
        (item(450, "g"), "450 g", 1),
        (item(1, "lb"), "16 oz", 1),  # the same weight: rounding never adds one
        (item(1, "kg"), "1 lb", 3),
        (item(1, "l"), "16.9 fl oz", 3),
        (item(2, "l"), "1 gal", 1),
        (item(6), "12 ct", 1),  # 6 eggs, a box of 12
        (item(13), "12 ct", 2),
        (item(1, "dozen"), "6 ct", 2),
        (item(2, "bunch"), "1 bunch", 2),
        (item(1, "head"), "1 lb", 1),  # a head is a head whatever the pack weighs
        (item(1, "loaf"), "20 oz", 1),
        (item(2, "packs"), "10 ct", 2),  # two of the store's packs, not two tortillas
        (item(1, "jar"), "16 oz", 1),
        (item(2, "tins"), "15 oz", 2),
        (item(800, "g"), "2 x 400 g", 1),
        # Pieces of what PIECE_GRAMS weighs (USDA's medium portions): 6 × 123 g is 738 g.
        (item(6, name="tomatoes"), "1 lb", 2),
        (item(2, name="salmon fillets"), "12 oz", 1),  # 2 × 170 g in 340 g
        (item(6, name="onions"), "3 lb", 1),
        (item(3, name="bananas"), "each", 3),  # a count against a count, as before
    ],
)
def test_how_many_of_a_product_cover_an_item(wanted: Item, size: str, count: int) -> None:
    covered = cover(wanted, size, by_piece=True)  # (as for a fresh product; see below)
    assert covered is not None and covered.count == count


@pytest.mark.parametrize(
    ("wanted", "size"),
    [
        (item(500, "ml"), "16 oz"),  # a volume is not a weight: that needs a density
        (item(500, "g"), "16 fl oz"),
        (item(3), "1 lb"),  # 3 chicken thighs in a 1 lb pack: no typical piece (PIECE_GRAMS)
        (item(500, "g"), "12 ct"),
        (item(4, "cloves"), "3 ct"),  # stores sell bulbs
        (item(2, "handfuls"), "5 oz"),
        (item(500, "g"), "family size"),
        (item(None), "1 lb"),
    ],
)
def test_sizes_that_do_not_compare_cover_nothing(wanted: Item, size: str) -> None:
    assert cover(wanted, size) is None


def offer(
    pid: str,
    description: str = "Kroger Boneless Skinless Chicken Thighs",
    size: str = "450 g",
    regular: int | None = 500,
    promo: int | None = None,
    stock: str | None = "HIGH",
    aisle: str = "Meat",
) -> Offer:
    return Offer(
        product_id=pid,
        upc=pid.rjust(13, "0"),
        description=description,
        brand="Kroger",
        size=size,
        regular_cents=regular,
        promo_cents=promo,
        stock_level=stock,
        aisle=aisle,
    )


THIGHS = "Kroger Boneless Skinless Chicken Thighs"
MATCHES = [
    # (what is wanted, the offers, (the product chosen, count, cost in cents))
    pytest.param(item(500, "g"), [offer("1", size="450 g")], ("1", 2, 1000), id="2x450g"),
    pytest.param(
        item(500, "g"),
        [offer("1", size="450 g", regular=500), offer("2", size="1 kg", regular=1100)],
        ("1", 2, 1000),
        id="two-small-packs-beat-one-big-at-more",
    ),
    pytest.param(
        item(500, "g"),
        [offer("1", size="450 g", regular=500), offer("2", size="1 kg", regular=900)],
        ("2", 1, 900),
        id="one-big-pack-beats-two-small-at-more",
    ),
    pytest.param(
        item(500, "g"),
        [offer("1", regular=500), offer("2", regular=600, promo=400)],
        ("2", 2, 800),
        id="promo-beats-regular",
    ),
    pytest.param(
        item(500, "g"),
        [offer("1", regular=300, stock="TEMPORARILY_OUT_OF_STOCK"), offer("2", stock="LOW")],
        ("2", 2, 1000),
        id="out-of-stock-skipped",
    ),
    pytest.param(
        item(500, "g"),
        [offer("1", size="16 fl oz", regular=100), offer("2", size="16 oz", regular=450)],
        ("2", 2, 900),
        id="oz-weight-not-fl-oz",
    ),
    pytest.param(
        item(800, "g", "chopped tomatoes"),
        [
            offer("1", "Kroger Chopped Tomatoes", size="14.5 oz", regular=100),
            offer("2", "Hunt's Chopped Tomatoes", size="2 x 400 g", regular=180),
        ],
        ("2", 1, 180),
        id="a-multipack",
    ),
    pytest.param(
        item(None),
        [offer("1", size="2 lb", regular=900), offer("2", size="1 lb", regular=450)],
        ("2", 1, 450),
        id="no-quantity-one-of-the-cheapest",
    ),
    pytest.param(
        item(500, "g"),
        [offer("1", "Kroger Chicken Breast", regular=100), offer("2", THIGHS, regular=500)],
        ("2", 2, 1000),
        id="all-the-names-words-beat-some",
    ),
    pytest.param(
        item(500, "g"),
        [offer("1", size="1 lb", regular=500), offer("2", size="500 g", regular=500)],
        ("2", 1, 500),
        id="same-cost-lower-unit-price",
    ),
    pytest.param(
        item(800, "g", "chopped plum tomatoes"),
        [offer("1", "Kroger Chopped Tomatoes", size="14.5 oz", regular=99)],
        ("1", 2, 198),
        id="more-than-half-the-words-is-a-match",
    ),
    pytest.param(
        item(150, "g", "tuna"),
        [offer("1", "StarKist Chunk Light Tuna in Sunflower Oil", size="5 oz", regular=129)],
        ("1", 2, 258),
        id="what-it-is-packed-in-is-not-what-it-is",
    ),
    pytest.param(
        item(2, "", "bell peppers"),
        [offer("1", "Kroger Red Bell Peppers", size="3 ct", regular=449)],
        ("1", 1, 449),
        id="pieces-against-a-count",
    ),
]


@pytest.mark.parametrize(("wanted", "offers", "expected"), MATCHES)
def test_an_item_is_matched_to_the_cheapest_good_product(
    wanted: Item, offers: list[Offer], expected: tuple[str, int, int]
) -> None:
    priced = match(wanted, offers)
    assert priced.offer is not None and priced.reason is None
    assert (priced.offer.product_id, priced.count, priced.cost_cents) == expected
    assert priced.item == wanted
    assert match(wanted, list(reversed(offers))) == priced  # the order found changes nothing


NO_MATCHES = [
    pytest.param(item(500, "g"), [], NOT_FOUND, id="nothing-found"),
    pytest.param(
        item(500, "g"), [offer("1", "Kroger Beef Broth", size="32 fl oz")], NOT_FOUND, id="no-name"
    ),
    pytest.param(
        item(500, "g"),
        [offer("1", stock="TEMPORARILY_OUT_OF_STOCK"), offer("2", "Kroger Chicken Breast")],
        NOT_IN_STOCK,
        id="out-of-stock-never-bought-as-a-weaker-name",
    ),
    pytest.param(
        item(150, "ml", "soured cream"),
        [offer("1", "Kroger Vanilla Ice Cream", size="48 fl oz")],
        NOT_FOUND,
        id="half-the-words-is-not-a-match",
    ),
    pytest.param(
        item(300, "g", "gammon joint"),  # a British name store_names does not know
        [offer("1", "Kroger Ham Steak", size="1 lb")],
        NOT_FOUND,
        id="no-guess-at-another-countrys-name-not-in-the-table",
    ),
    pytest.param(
        item(50, "g", "peanuts"),
        [offer("1", "Kroger Creamy Peanut Butter", size="16 oz")],
        NOT_FOUND,
        id="peanut-butter-is-not-peanuts",
    ),
    pytest.param(
        item(250, "g", "pasta"),
        [offer("1", "Kroger Marinara Pasta Sauce", size="24 oz")],
        NOT_FOUND,
        id="pasta-sauce-is-not-pasta",
    ),
    pytest.param(item(500, "g"), [offer("1", regular=None)], NO_PRICE, id="no-price"),
    pytest.param(item(500, "ml"), [offer("1", size="16 oz")], NO_SIZE, id="volume-vs-weight"),
    pytest.param(item(500, "g"), [offer("1", size="family pack")], NO_SIZE, id="unread-size"),
    pytest.param(item(5, "kg"), [offer("1", size="1 oz")], TOO_MANY, id="177-packs"),
]


@pytest.mark.parametrize(("wanted", "offers", "reason"), NO_MATCHES)
def test_an_item_without_a_good_product_says_why(
    wanted: Item, offers: list[Offer], reason: str
) -> None:
    priced = match(wanted, offers)
    assert (priced.offer, priced.count, priced.cost_cents, priced.reason) == (None, 0, None, reason)


@pytest.mark.parametrize(
    ("name", "description", "searched"),
    [
        ("beef mince", "Kroger 80% Lean Ground Beef", "ground beef"),
        ("tinned chopped tomatoes", "Kroger Diced Tomatoes", "diced tomatoes"),
        ("Soured cream", "Daisy Sour Cream", "sour cream"),
        ("pizza bases", "Mama Mary's Pizza Crusts", "pizza crusts"),
        ("tinned black beans", "Bush's Canned Black Beans", "canned black bean"),
        ("fresh coriander", "Fresh Cilantro", "fresh cilantro"),
        ("coriander", "Fresh Cilantro", "cilantro"),
        ("chicken thighs", "Kroger Chicken Thighs", "chicken thighs"),  # as written
    ],
)
def test_a_british_name_is_searched_and_matched_as_a_us_store_says_it(
    name: str, description: str, searched: str
) -> None:
    """``workflow.shop.store_names``: the household's words stay on the basket; Kroger is asked
    for the US shelf's name, and its product matches either."""
    from bot.orders.kroger_prices import search_term

    wanted = item(1, "", name)
    assert search_term(wanted) == searched
    assert match(wanted, [offer("1", description, size="1 ct")]).offer is not None


@pytest.mark.parametrize(
    ("name", "description", "found"),
    [
        ("onions", "Cal-Organic Green Onions", False),  # seen in the sandbox: 2 × green onions
        ("green onions", "Cal-Organic Green Onions", True),
        ("onions", "Vidalia Yellow Onions", True),
        ("potatoes", "Nash Sweet Potatoes", False),
        ("sweet potatoes", "Nash Sweet Potatoes", True),
        ("milk", "Thai Kitchen Coconut Milk", False),
        ("coconut milk", "Thai Kitchen Coconut Milk", True),
        ("butter", "Kroger Creamy Peanut Butter", False),
        ("cheese", "Kroger Cream Cheese", False),
        ("beans", "Green Giant Green Beans", False),
        ("cream", "Daisy Sour Cream", False),
    ],
)
def test_a_word_before_the_noun_can_make_it_another_kind(
    name: str, description: str, found: bool
) -> None:
    """OTHER_KINDS: "onions" are not green onions, whatever they cost."""
    assert (
        match(item(1, "", name), [offer("1", description, size="1 ct")]).offer is not None
    ) is found


def test_pieces_are_weighed_only_for_a_product_sold_fresh() -> None:
    """6 tomatoes (PIECE_GRAMS: 123 g each) are 2 lb packs of Romas from the produce aisle,
    never one 28 oz can of crushed tomatoes, however much cheaper (the review's finding); and
    without an aisle, pieces and a weight do not compare."""
    roma = offer("1", "Kroger Roma Tomatoes", size="1 lb", regular=169, aisle="Produce")
    can = offer("2", "Kroger Crushed Tomatoes", size="28 oz", regular=129, aisle="Aisle 5")
    chosen = match(item(6, "", "tomatoes"), [roma, can])
    assert (chosen.offer, chosen.count) == (roma, 2)
    assert match(item(6, "", "tomatoes"), [can]).reason == NO_SIZE
    unsaid = offer("3", "Kroger Roma Tomatoes", size="1 lb", aisle="")
    assert match(item(6, "", "tomatoes"), [unsaid]).reason == NO_SIZE


def test_a_count_is_capped_at_max_count() -> None:
    """24 packs is the most one line buys; 25 leaves the item without a price."""
    assert match(item(24 * 450, "g"), [offer("1")]).count == MAX_COUNT
    assert match(item(24 * 450 + 1, "g"), [offer("1")]).reason == TOO_MANY


def priced_line(cents: int | None) -> Priced:
    if cents is None:
        return Priced.unmatched(item(1), NOT_FOUND)
    return Priced(item=item(1), offer=offer("1", regular=cents), count=1)


@pytest.mark.parametrize(
    ("cents", "budget", "total", "against"),
    [
        ([2500, 3640, None, None], None,
         "≈ $61.40 at Kroger, 2nd Ave; 2 items without a price", None),
        ([2500, 3640], 5500, "≈ $61.40 at Kroger, 2nd Ave", "$6.40 over this week's $55"),
        ([2500, 2680, None], 5500, "≈ $51.80 at Kroger, 2nd Ave; 1 item without a price",
         "$3.20 under this week's $55, before 1 item without a price"),
        ([5500], 5500, "≈ $55 at Kroger, 2nd Ave", "Exactly this week's $55"),
        ([None, None], 5500, "No prices at Kroger, 2nd Ave: 2 items without a price",
         "No prices to compare with this week's $55"),
        ([123456], 100000, "≈ $1,234.56 at Kroger, 2nd Ave", "$234.56 over this week's $1,000"),
    ],
)  # fmt: skip
def test_the_total_and_the_budget_as_the_basket_says_them(
    cents: list[int | None], budget: int | None, total: str, against: str | None
) -> None:
    summed = basket_total([priced_line(c) for c in cents], budget)
    assert total_line(summed, "Kroger, 2nd Ave") == total
    assert budget_line(summed) == against


def test_money_is_us_dollars_in_one_place() -> None:
    assert [money(c) for c in (0, 5, 100, 6140, 5500, -640)] == [
        *("$0", "$0.05", "$1", "$61.40", "$55", "-$6.40"),
    ]
    with pytest.raises(ValueError, match="never negative"):
        basket_total([], -1)


def test_values_round_trip_through_json_and_a_registry() -> None:
    """What registration will need: plain ``to_json``/``from_json``, the registry's protocol."""
    registry = TypeRegistry()
    registry.register(Offer)
    registry.register(Priced)
    lines = [
        match(item(500, "g"), [offer("1", promo=450, stock=None)]),
        match(item(500, "g"), []),
        match(item(None), [offer("2")]),
    ]
    for line in lines:
        data = json.loads(json.dumps(registry.encode(line)))
        assert registry.decode(data) == line
        assert Priced.from_json(line.to_json()) == line
    assert list(lines[0].to_json()) == ["item", "offer", "count", "reason"]


GOOD_OFFER = offer("0001111041700").to_json()
GOOD_PRICED = Priced(item=item(500, "g"), offer=offer("1"), count=2).to_json()
BAD_OFFERS: list[tuple[str, Any]] = [
    ("upc", "001111041700"),  # 12 digits
    ("upc", "00011110417001"),
    ("upc", "000111104170x"),
    ("upc", "٠٠٠١١١١٠٤١٧٠٠"),  # 13 digits, but not ASCII ones
    ("upc", 1111041700),
    ("description", "x" * 10_000),
    ("description", ""),
    ("description", None),
    ("product_id", ""),
    ("product_id", "../../etc"),
    ("product_id", "1" * 51),
    ("brand", "b" * 101),
    ("size", "s" * 51),
    ("aisle", ["Aisle 1"]),
    ("regular_cents", -100),
    ("regular_cents", 0),
    ("regular_cents", 4.99),
    ("regular_cents", "499"),
    ("regular_cents", True),
    ("promo_cents", 1_000_001),
    ("stock_level", "PLENTY"),
    ("stock_level", True),
    ("extra", 1),
]


@pytest.mark.parametrize(("field", "value"), BAD_OFFERS)
def test_a_malformed_offer_read_back_is_refused(field: str, value: Any) -> None:
    with pytest.raises((ValueError, TypeError)):
        Offer.from_json({**GOOD_OFFER, field: value})
    with pytest.raises((ValueError, TypeError)):
        Priced.from_json({**GOOD_PRICED, "offer": {**GOOD_OFFER, field: value}})


@pytest.mark.parametrize(
    "changes",
    [
        {"count": 0},  # an offer bought none of
        {"count": MAX_COUNT + 1},
        {"count": -1},
        {"count": 2.0},
        {"count": "2"},
        {"reason": NOT_FOUND},  # an offer and a reason
        {"offer": None},  # no offer and no reason
        {"offer": None, "count": 0, "reason": "because"},  # a reason we never give
        {"offer": None, "count": 3, "reason": NOT_FOUND},
        {"offer": {**GOOD_OFFER, "regular_cents": None}},  # chosen without a price
        {"offer": "0001111041700"},
        {"item": {"name": "", "quantity": 1, "unit": ""}},
        {"item": None},
        {"cost_cents": 1},  # a cost is never read: it is count times the price
    ],
)
def test_a_malformed_priced_line_read_back_is_refused(changes: dict[str, Any]) -> None:
    with pytest.raises((ValueError, TypeError)):
        Priced.from_json({**GOOD_PRICED, **changes})
    for missing in ("item", "offer", "count"):
        with pytest.raises(ValueError, match=f"missing '{missing}'"):
            Priced.from_json({k: v for k, v in GOOD_PRICED.items() if k != missing})


def test_a_stores_text_loses_its_control_characters() -> None:
    shown = offer("1", "Kroger\u202e Chicken\x1b[31m Thighs\n")
    assert shown.description == "Kroger Chicken[31m Thighs"
    assert Offer.from_json(shown.to_json()) == shown


json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats() | st.text(max_size=20),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=8), inner),
    max_leaves=8,
)


@given(
    st.sampled_from([GOOD_OFFER, GOOD_PRICED]),
    st.sampled_from(["product_id", "upc", "description", "offer", "count", "reason", "item"]),
    json_values,
)
def test_anything_read_back_is_a_checked_value_or_refused(
    good: dict[str, Any], field: str, value: Any
) -> None:
    """Whatever JSON a checkpoint holds, reading it builds a value that writes the same JSON
    again, or raises ``ValueError``/``TypeError`` (what the registry turns into a corrupt
    checkpoint), never anything else."""
    cls = Offer if good is GOOD_OFFER else Priced
    try:
        read = cls.from_json({**good, field: value})
    except (ValueError, TypeError):
        return
    assert cls.from_json(read.to_json()) == read
