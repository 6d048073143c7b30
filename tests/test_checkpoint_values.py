"""The weekly shop's checkpoint values are plain classes (``workflow.persistence.values``), no
longer pydantic models: each writes the very JSON the model it replaced wrote, and reads back
exactly what that model read in strict mode (JSON's own types, no coercion), which is never more
than it read. The same holds for a record's header line (``workflow.persistence.record_format``).
``Basket@2`` and ``BasketDecision@3`` came after the models went: their reference models below say
their schemas in pydantic's terms, and the plain classes must agree with them, read for read and
byte for byte. (An item's text has dropped control characters since issue 31: the reference
model says so too.)"""

from __future__ import annotations

import json
import zlib
from datetime import UTC, datetime, timedelta
from typing import Annotated, Any, Literal

import pytest
from hypothesis import given
from hypothesis import strategies as st
from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator

from workflow.errors import CheckpointCorrupt, CheckpointError
from workflow.persistence.record_format import PLAIN, READS
from workflow.shop.basket import AISLES, MAX_ITEMS, Basket, Item, ShopRequest
from workflow.shop.decision import BasketDecision
from workflow.shop.graph import shop_registry
from workflow.shop.text import one_line


class ItemModel(BaseModel):  # Basket@2's items, as pydantic would say them
    model_config = ConfigDict(frozen=True, extra="forbid")
    name: str = Field(min_length=1, max_length=500)
    quantity: int | float | None = Field(gt=0, le=100_000)
    unit: str = Field(max_length=30)
    note: str | None = Field(default=None, max_length=300)
    aisle: Literal[AISLES] | None = None  # type: ignore[valid-type]

    # Since issue 31: no control or bidirectional-control character stays in an item's text,
    # whoever wrote it (workflow.shop.text.one_line), checked after it is dropped.
    @field_validator("name", "unit", "note", mode="before")
    @classmethod
    def _one_line(cls, value: Any) -> Any:
        return one_line(value) if isinstance(value, str) else value


class OldBasket(BaseModel):  # Basket@2
    model_config = ConfigDict(frozen=True, extra="forbid")
    items: list[ItemModel] = Field(max_length=MAX_ITEMS)
    round: int = Field(ge=1)


class OldHousehold(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")
    people: int = Field(default=0, ge=0, le=20)
    avoid: str = Field(default="", max_length=200)
    staples: str = Field(default="", max_length=300)


class OldShopRequest(BaseModel):  # ShopRequest@2: the model's @1, plus the household
    model_config = ConfigDict(frozen=True, extra="forbid")
    text: str = Field(min_length=1, max_length=3000)
    requested_by: str = Field(default="", max_length=64)
    household: OldHousehold = Field(default_factory=OldHousehold)


class OldBasketDecision(BaseModel):  # BasketDecision@3: the model's @2, plus a quorum's fields
    model_config = ConfigDict(frozen=True, extra="forbid")
    approved: bool
    change: str | None = None
    round: int = Field(ge=1)
    expired_at: int | None = Field(default=None, ge=0)
    approvals: list[Annotated[str, Field(max_length=64)]] = Field(default=[], max_length=50)
    needed: int = Field(default=1, ge=1)


PAIRS: list[tuple[Any, type[BaseModel]]] = [
    (Basket, OldBasket),
    (ShopRequest, OldShopRequest),
    (BasketDecision, OldBasketDecision),
]

texts = st.one_of(
    st.text(max_size=70),
    st.integers(0, 3).map(lambda n: "é" * (3000 - 1 + n)),
    st.integers(0, 3).map(lambda n: "U" * (64 - 1 + n)),
)
scalars = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(-3, 3),
    st.integers(),
    st.floats(allow_nan=False),
    st.sampled_from([1.0, 2.0, "1", "2", "true", "yes", b"x", 0.5]),
    texts,
)
values = st.one_of(
    scalars,
    st.lists(st.one_of(st.text(max_size=8), scalars), max_size=4),
    st.integers(MAX_ITEMS - 1, MAX_ITEMS + 1).map(lambda n: ["x"] * n),
    st.dictionaries(st.text(max_size=4), scalars, max_size=2),
)
FIELDS = [
    *("items", "round", "text", "requested_by", "approved", "change", "expired_at"),
    *("approvals", "needed", "extra"),
]
ITEM_FIELDS = ["name", "quantity", "unit", "note", "aisle", "extra"]
Fields = st.SearchStrategy[dict[str, Any]]
good_items: Fields = st.fixed_dictionaries(
    {
        "name": st.text(min_size=1, max_size=500).filter(one_line),  # (a name of controls: none)
        "quantity": st.none() | st.integers(1, 100_000) | st.floats(0.001, 100_000),
        "unit": st.text(max_size=30),
    },
    optional={
        "note": st.none() | st.text(max_size=300),
        "aisle": st.none() | st.sampled_from(AISLES),
    },
)
item_values = st.one_of(
    values,
    st.sampled_from([0, -1, 0.0, 100_000, 100_000.5, float("inf"), float("nan"), "produce"]),
    st.integers(0, 3).map(lambda n: "n" * (500 - 1 + n)),
    st.integers(0, 3).map(lambda n: "u" * (30 - 1 + n)),
)
read_items = st.one_of(
    good_items,
    st.tuples(good_items, st.sampled_from(ITEM_FIELDS), item_values).map(
        lambda c: {**c[0], c[1]: c[2]}
    ),
    st.tuples(good_items, st.sampled_from(ITEM_FIELDS)).map(
        lambda c: {k: v for k, v in c[0].items() if k != c[1]}
    ),
    values,
)
good_baskets: Fields = st.fixed_dictionaries(
    {"items": st.lists(good_items, max_size=MAX_ITEMS // 50), "round": st.integers(min_value=1)}
)
read_baskets: Fields = st.fixed_dictionaries(
    {"items": st.lists(read_items, max_size=4), "round": st.integers(min_value=1)}
)
good_requests: Fields = st.fixed_dictionaries(
    {"text": st.text(min_size=1, max_size=3000), "requested_by": st.text(max_size=64)}
)
good_decisions: Fields = st.fixed_dictionaries(
    {
        "approved": st.booleans(),
        "change": st.none() | st.text(),
        "round": st.integers(min_value=1),
        "expired_at": st.none() | st.integers(min_value=0),
    },
    optional={
        "approvals": st.lists(st.text(max_size=64), max_size=4)
        | st.just(["U" * 64])
        | st.just(["U0BOB"] * 50),
        "needed": st.integers(min_value=1, max_value=4),
    },
)
read_decisions: Fields = st.fixed_dictionaries(  # a quorum's fields at and past their bounds
    {"approved": st.booleans(), "round": st.integers(min_value=1)},
    optional={
        "approvals": st.one_of(
            st.integers(0, 3).map(lambda n: ["U" * (64 - 1 + n)]),
            st.integers(49, 52).map(lambda n: ["U0BOB"] * n),
            st.lists(st.one_of(st.text(max_size=8), scalars), max_size=3),
            values,
        ),
        "needed": st.one_of(st.integers(-1, 3), values),
    },
)


def _read_back(good: Fields) -> st.SearchStrategy[Any]:
    """Data read back: a good value, one with a field changed, added or dropped, or anything."""
    changed = st.tuples(good, st.sampled_from(FIELDS), values).map(lambda c: {**c[0], c[1]: c[2]})
    dropped = st.tuples(good, st.sampled_from(FIELDS)).map(
        lambda c: {k: v for k, v in c[0].items() if k != c[1]}
    )
    anything = st.one_of(st.dictionaries(st.sampled_from(FIELDS), values), values)
    return st.one_of(good, changed, dropped, anything)


READ_BACK = {
    "Basket": st.one_of(good_baskets, read_baskets),
    "ShopRequest": good_requests,
    "BasketDecision": st.one_of(good_decisions, read_decisions),
}


@pytest.mark.parametrize(("plain", "old"), PAIRS, ids=lambda c: c.__name__)
@given(data=st.data())
def test_a_value_is_read_back_exactly_as_the_strict_model_read_it(
    plain: Any, old: type[BaseModel], data: st.DataObject
) -> None:
    raw = data.draw(_read_back(READ_BACK[plain.__name__]))
    try:
        expected: Any = old.model_validate(raw, strict=True).model_dump(mode="json")
    except ValidationError:
        expected = None
    try:
        got: Any = plain.from_json(raw).to_json()
    except ValueError:
        got = None
    assert got == expected
    if got is not None:
        assert list(got) == list(expected)  # in the same order: the checkpoint's bytes
        assert old.model_validate(raw).model_dump(mode="json") == got  # lax reads it the same


@given(
    case=st.one_of(
        good_baskets.map(lambda d: (Basket, OldBasket, d)),
        good_requests.map(lambda d: (ShopRequest, OldShopRequest, d)),
        good_decisions.map(lambda d: (BasketDecision, OldBasketDecision, d)),
    )
)
def test_a_value_is_written_byte_for_byte_as_the_model_wrote_it(case: Any) -> None:
    plain, old, fields = case
    value = plain.from_json(fields)
    registry = shop_registry()

    def written(v: Any) -> str:
        return json.dumps(registry.encode(v), separators=(",", ":"), ensure_ascii=False)

    reference = json.dumps(
        {"t": registry.versioned_tag(plain), "v": old(**fields).model_dump(mode="json")},
        separators=(",", ":"),
        ensure_ascii=False,
    )
    assert written(value) == reference
    assert registry.decode(json.loads(reference)) == value


def test_a_value_built_wrong_in_code_is_a_value_error() -> None:
    with pytest.raises(ValueError, match="Basket.round must be >= 1"):
        Basket(items=[], round=0)
    with pytest.raises(ValueError, match="Basket.items must have at most 500 items"):
        Basket(items=[Item(name="x", quantity=1)] * 501, round=1)
    with pytest.raises(ValueError, match=r"Basket.items\[0\] must be an Item, not str"):
        Basket(items=["500 g chicken"], round=1)  # type: ignore[list-item]
    with pytest.raises(ValueError, match="Item.quantity must be more than 0"):
        Item(name="x", quantity=0)
    with pytest.raises(ValueError, match="ShopRequest.text must have at least 1"):
        ShopRequest(text="")
    with pytest.raises(ValueError, match="BasketDecision.approved must be true or false"):
        BasketDecision(approved=1, round=1)  # type: ignore[arg-type]
    with pytest.raises(TypeError):
        Basket([], 1)  # type: ignore[misc]  # keywords only, as the models were


def test_values_are_frozen_and_do_not_share_the_callers_list() -> None:
    milk = Item(name="milk", quantity=1, unit="l")
    items = [milk]
    basket = Basket(items=items, round=1)
    items.append(Item(name="eggs", quantity=6))
    assert basket.items == [milk]
    with pytest.raises(AttributeError):
        basket.round = 2  # type: ignore[misc]
    assert {ShopRequest(text="x"), ShopRequest(text="x")} == {ShopRequest(text="x")}


def test_a_value_that_does_not_validate_is_corrupt_naming_its_tag() -> None:
    registry = shop_registry()
    with pytest.raises(CheckpointCorrupt, match=r"'Basket@1' does not validate: Basket.round"):
        registry.decode({"t": "Basket@1", "v": {"items": [], "round": "1"}})
    with pytest.raises(CheckpointCorrupt, match=r"'Basket@2' does not validate: Item.unit"):
        registry.decode(
            {"t": "Basket@2", "v": {"items": [{"name": "x", "quantity": 1, "unit": 2}], "round": 1}}
        )
    with pytest.raises(CheckpointCorrupt, match=r"'BasketDecision@1' does not validate"):
        registry.decode({"t": "BasketDecision@1", "v": {"approved": True, "round": 1, "x": 0}})
    with pytest.raises(CheckpointCorrupt, match=r"'ShopRequest@1' does not validate"):
        registry.decode({"t": "ShopRequest@1", "v": ["tacos"]})


# -- the record header (workflow.persistence.record_format), checked by hand ----------------------


class OldHeader(BaseModel):  # workflow.persistence.record_format._Header as it was
    model_config = ConfigDict(extra="forbid", frozen=True)
    v: int
    id: str = Field(max_length=64)
    cp: str = Field(max_length=64)
    parent: str | None = Field(max_length=64)
    run: str = Field(max_length=64)
    at: int = Field(ge=0)
    seq: int = Field(ge=0)
    sig: str = Field(max_length=128)


HEADER = {"v": 2, "id": "i", "cp": "c", "parent": None, "run": "r", "at": 0, "seq": 0, "sig": "s"}
header_values = st.one_of(
    values,
    st.integers(-1, 3),
    st.integers(0, 3).map(lambda n: "h" * (64 - 1 + n)),
    st.integers(0, 3).map(lambda n: "s" * (128 - 1 + n)),
    st.sampled_from([10**15, 10**30, 2.0]),
)
headers = st.one_of(
    st.tuples(st.sampled_from([*HEADER, "extra"]), header_values).map(
        lambda c: {**HEADER, c[0]: c[1]}
    ),
    st.sampled_from(list(HEADER)).map(lambda k: {f: v for f, v in HEADER.items() if f != k}),
    st.dictionaries(st.sampled_from(list(HEADER)), header_values),
    header_values,
)


@given(header=headers)
def test_a_record_header_is_read_as_the_strict_model_read_it(header: Any) -> None:
    line = json.dumps(header, default=repr)  # what a header line can hold: JSON
    header = json.loads(line)
    data = zlib.compress(line.encode() + b"\n{}")
    try:
        old = OldHeader.model_validate(header, strict=True)
        expected: Any = (old.cp, old.parent, old.at, old.seq, old.sig, old.v)
        datetime(1970, 1, 1, tzinfo=UTC) + timedelta(milliseconds=old.at)
        if old.v not in READS:
            expected = None
    except (ValidationError, OverflowError):
        expected = None
    try:
        record = PLAIN.from_bytes(data, "cp", "T", "s")
        ms = (record.created_at - datetime(1970, 1, 1, tzinfo=UTC)) // timedelta(milliseconds=1)
        got: Any = (
            record.checkpoint_id,
            record.parent_checkpoint_id,
            ms,
            record.sequence,
            record.signature,
            record.mac,
        )
    except CheckpointError:
        got = None
    assert got == expected
