"""A change answered as the difference (issue 23): ``revise_basket`` names what to remove, set and
add, and the bot applies it to the basket it holds; a change the difference cannot say gets a
whole basket through ``submit_basket``; the stable prefix (tools, system prompt, the week's
request) is marked for the prompt cache, which the fake Messages API plays as the API does
(a prefix under the model's minimum is not cached, and nothing is said)."""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

import pytest

from bot.sandbox.anthropic_api import FakeAnthropic, Reply, prompt_of, shorter_revisions
from bot.sandbox.anthropic_cache import PromptCache, cache_problem, minimum_of, tokens_of
from bot.sandbox.anthropic_tools import tools_problem
from workflow.shop.basket import MAX_ITEMS, Item
from workflow.shop.errors import ShopperReplyUnfit
from workflow.shop.revision import apply_revision
from workflow.shop.shopper import CACHED, TOOLS, Brief, ClaudeShopper

BASKET = (
    Item(name="chicken breast", quantity=500, unit="g", note="for Friday", aisle="meat and fish"),
    Item(name="pizza dough", quantity=1, unit="pack"),
    Item(name="milk", quantity=1, unit="l", aisle="dairy and eggs"),
)


def diff(remove: Any = (), set: Any = (), add: Any = ()) -> dict[str, Any]:
    return {"remove": list(remove), "set": list(set), "add": list(add)}


def test_a_difference_is_applied_to_the_basket_held() -> None:
    """ "drop the pizza dough, make it 2 litres of milk, add oat milk": three operations; the
    untouched item keeps its note and aisle; names match ignoring case and spacing."""
    revised = apply_revision(
        BASKET,
        diff(
            remove=["Pizza  Dough"],
            set=[{"name": "MILK", "quantity": 2}],
            add=[{"name": "oat milk", "quantity": 1, "unit": "l", "aisle": "dairy and eggs"}],
        ),
    )
    assert revised == [
        BASKET[0],
        Item(name="milk", quantity=2, unit="l", aisle="dairy and eggs"),
        Item(name="oat milk", quantity=1, unit="l", aisle="dairy and eggs"),
    ]
    assert apply_revision(BASKET, diff()) == list(BASKET)  # nothing to change: the same basket


@pytest.mark.parametrize(
    ("revision", "said"),
    [
        (diff(remove=["bananas"]), "remove[0] names an item that is not in the basket"),
        (diff(set=[{"name": "bananas", "quantity": 2}]), "set[0] names an item that is not"),
        (diff(set=[{"name": "milk"}]), "set[0] sets nothing"),
        (diff(set=[{"name": "milk", "quantity": 0}]), "set[0]: "),
        (diff(set=[{"name": "milk", "aisle": "pantry"}]), "set[0] must be an object of"),
        (diff(add=[{"name": "milk", "quantity": 1, "unit": "l"}]), "already in the basket"),
        (diff(add=[{"name": "eggs", "unit": ""}]), "add[0].quantity is required"),
        (diff(remove=["chicken breast", "pizza dough", "milk"]), "leaves an empty basket"),
        ({"remove": [], "set": []}, "exactly remove, set and add"),
        ({"remove": "milk", "set": [], "add": []}, "remove must be a list"),
        (diff(remove=[7]), "remove[0] must name an item"),
    ],
)
def test_a_difference_that_does_not_fit_is_refused_naming_the_problem(
    revision: dict[str, Any], said: str
) -> None:
    with pytest.raises(ValueError, match=said.replace("[", r"\[").replace("]", r"\]")):
        apply_revision(BASKET, revision)


def test_two_items_of_one_name_cannot_be_named_and_the_basket_stays_bounded() -> None:
    twice = (*BASKET, Item(name="milk", quantity=2, unit="l"))
    with pytest.raises(ValueError, match="names two items"):
        apply_revision(twice, diff(remove=["milk"]))
    full = tuple(Item(name=f"thing {i}", quantity=1) for i in range(MAX_ITEMS))
    with pytest.raises(ValueError, match="more than"):
        apply_revision(full, diff(add=[{"name": "one more", "quantity": 1, "unit": ""}]))


def test_both_tools_are_strict_schemas_the_api_accepts() -> None:
    body = {"tools": TOOLS, "tool_choice": {"type": "any"}}
    assert tools_problem(body) is None
    assert tools_problem({"tools": [], "tool_choice": {"type": "any"}}) is not None


@pytest.fixture
def claude(monkeypatch: pytest.MonkeyPatch) -> Iterator[FakeAnthropic]:
    with FakeAnthropic(responder=shorter_revisions) as fake:
        monkeypatch.setenv("ANTHROPIC_BASE_URL", fake.url)
        yield fake


def shopper(fake: FakeAnthropic) -> ClaudeShopper:
    return ClaudeShopper(api_key=fake.api_key)


def revision_of(items: tuple[Item, ...], change: str) -> Brief:
    return Brief("dinners this week", last_basket=[i.line() for i in items], change=change,
                 last_items=items)  # fmt: skip


async def test_a_change_is_asked_for_as_the_difference_and_applied(claude: FakeAnthropic) -> None:
    claude.script(
        Reply(
            tool="revise_basket",
            tool_input=diff(remove=["pizza dough"], set=[{"name": "milk", "quantity": 2}]),
            output_tokens=31,
        )
    )
    reply = await shopper(claude).write(revision_of(BASKET, "no pizza, 2 l of milk"))
    assert reply.revised and reply.output_tokens == 31
    assert [i.line() for i in reply.items] == ["500 g chicken breast — for Friday", "2 l milk"]
    (request,) = claude.requests
    assert request["tool_choice"] == {"type": "any"} and request["tools"] == TOOLS
    asked = prompt_of(request)
    assert "- chicken breast: 500 g (for Friday)\n- pizza dough: 1 pack\n- milk: 1 l" in asked


async def test_a_change_the_difference_cannot_say_gets_a_whole_basket(
    claude: FakeAnthropic,
) -> None:
    claude.script(Reply(text="2 kg potatoes\n6 eggs", tool="submit_basket"))
    reply = await shopper(claude).write(revision_of(BASKET, "plan a different week"))
    assert not reply.revised
    assert [i.line() for i in reply.items] == ["2 kg potatoes", "6 eggs"]


async def test_a_difference_naming_what_is_not_there_is_unfit(claude: FakeAnthropic) -> None:
    claude.script(Reply(tool="revise_basket", tool_input=diff(remove=["caviar"])))
    with pytest.raises(ShopperReplyUnfit, match="not in the basket"):
        await shopper(claude).write(revision_of(BASKET, "no caviar"))
    claude.script(Reply(tool="revise_basket", tool_input=diff(remove=[i.name for i in BASKET])))
    with pytest.raises(ShopperReplyUnfit, match="empty basket"):
        await shopper(claude).write(revision_of(BASKET, "nothing at all"))


async def test_basket_one_is_forced_to_the_whole_basket_tool(claude: FakeAnthropic) -> None:
    await shopper(claude).write(Brief("dinners this week"))
    (request,) = claude.requests
    assert request["tool_choice"] == {"type": "tool", "name": "submit_basket"}
    assert request["system"][-1]["cache_control"] == CACHED  # tools, system, the week
    assert "cache_control" not in json.dumps(request["messages"])


# -- the prompt cache, as the fake API plays it ------------------------------------------------


def body(*blocks: dict[str, Any], model: str = "claude-sonnet-4-5") -> dict[str, Any]:
    return {"model": model, "messages": [{"role": "user", "content": list(blocks)}]}


def text(words: str, cached: bool = False) -> dict[str, Any]:
    block: dict[str, Any] = {"type": "text", "text": words}
    if cached:
        block["cache_control"] = dict(CACHED)
    return block


@pytest.mark.parametrize(
    ("blocks", "said"),
    [
        ([text("x", True)] * 5, "A maximum of 4 blocks with cache_control"),
        ([{**text("x"), "cache_control": {"type": "persistent"}}], "Input should be 'ephemeral'"),
        ([{**text("x"), "cache_control": {"type": "ephemeral", "ttl": "2h"}}], "'5m' or '1h'"),
        ([text("", True)], "cache_control cannot be set for empty text blocks"),
    ],
)
def test_the_fake_refuses_the_cache_control_the_api_refuses(
    blocks: list[dict[str, Any]], said: str
) -> None:
    problem = cache_problem(body(*blocks))
    assert problem is not None and said in problem


def test_a_prefix_over_the_minimum_is_written_then_read_and_one_under_is_not_cached() -> None:
    cache = PromptCache()
    week = "a long standing order " * 400  # about 2,300 tokens in this model of counting
    first = cache.usage(body(text(week, True), text("basket 1")), now=0)
    assert first["cache_creation_input_tokens"] > 1024 and first["cache_read_input_tokens"] == 0
    second = cache.usage(body(text(week, True), text("a change")), now=60)
    assert second["cache_read_input_tokens"] == first["cache_creation_input_tokens"]
    assert second["input_tokens"] < first["input_tokens"] + first["cache_creation_input_tokens"]
    later = cache.usage(body(text(week, True), text("a change")), now=60 + 301)  # 5 min idle
    assert later["cache_read_input_tokens"] == 0 and later["cache_creation_input_tokens"] > 0
    small = cache.usage(body(text("dinners this week", True)), now=0)
    assert small == {
        "input_tokens": tokens_of(text("dinners this week", True)),
        "cache_creation_input_tokens": 0,
        "cache_read_input_tokens": 0,
    }
    assert minimum_of("claude-haiku-4-5-20251001") == 4096  # a larger floor for some models


async def test_the_fake_reports_cache_tokens_on_a_revision(claude: FakeAnthropic) -> None:
    """With the week's request long enough to be cached, basket 1 writes the prefix and the
    revision reads it; the reply carries the counts (for the logs and make bench)."""
    week = "soup for lunch every day, and " * 300
    claude.responder = shorter_revisions
    one = await shopper(claude).write(Brief(week))
    claude.script(Reply(tool="revise_basket", tool_input=diff(remove=["pizza dough"])))
    two = await shopper(claude).write(
        Brief(week, last_basket=[i.line() for i in BASKET], change="no pizza", last_items=BASKET)
    )
    assert one.cache_write_tokens > 0 and one.cache_read_tokens == 0
    # basket 1 forced submit_basket and the revision lets the model choose, a different
    # tool_choice: the prefix ends in the system prompt, which a tool_choice does not touch
    assert two.cache_read_tokens == one.cache_write_tokens and two.cache_write_tokens == 0
    assert two.input_tokens < one.input_tokens + one.cache_write_tokens
    assert json.dumps(claude.requests[1]["tools"]) == json.dumps(claude.requests[0]["tools"])
