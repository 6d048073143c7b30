"""The sandbox's stand-in of Claude (``bot.sandbox.claude_stand_in``), through the real shopper
and the real anthropic SDK: it writes what the offline shopper's recipe table reads in the
request, streamed as the fake Messages API streams (``input_json_delta`` pieces, fine-grained:
the shopper's tools set ``eager_input_streaming``), answers a change as the difference
(``revise_basket``), leaves out what a second ask names, and answers only its own key and never a
browser page (``loopback.refused``: an ``Origin`` header is 403). Order and counts are asserted,
never durations (a high speed keeps the tests quick; the sandbox runs it at 60 tokens a second).
"""

from __future__ import annotations

import asyncio
import json
import urllib.error
import urllib.request
from collections.abc import Iterator

import anthropic
import pytest

from bot.sandbox import claude_stand_in
from bot.sandbox.anthropic_api import FakeAnthropic
from workflow.shop.basket import Item
from workflow.shop.errors import ShopperUnreachable
from workflow.shop.household import Household
from workflow.shop.shopper import Brief, ClaudeShopper

WEEK = "tacos on Tuesday, we have rice"


@pytest.fixture
def stand_in() -> Iterator[FakeAnthropic]:
    fake = claude_stand_in.start(speed=20_000, latency=0.0)
    try:
        yield fake
    finally:
        fake.stop()


def shopper(fake: FakeAnthropic, key: str | None = None, **kw: object) -> ClaudeShopper:
    client = anthropic.AsyncAnthropic(api_key=key or fake.api_key, base_url=fake.url)
    return ClaudeShopper(client=client, **kw)  # type: ignore[arg-type]


def names(items: list[Item]) -> list[str]:
    return [item.name for item in items]


def test_basket_1_is_the_recipe_table_s_reading_streamed_item_by_item(
    stand_in: FakeAnthropic,
) -> None:
    """Tacos, no rice ("we have rice"), each item an aisle; the draft sees the items grow one
    by one, over a stream of input_json_delta pieces."""
    seen: list[int] = []
    reply = asyncio.run(
        shopper(stand_in, on_items=lambda items: seen.append(len(items))).write(Brief(WEEK))
    )
    assert names(reply.items) == [
        "beef mince", "taco shells", "lettuce", "tomatoes", "cheddar", "soured cream"
    ]  # fmt: skip
    assert all(item.aisle for item in reply.items)
    assert seen == sorted(seen) and seen[0] < len(reply.items) and seen[-1] == len(reply.items)
    kinds = [sent.event for sent in stand_in.streams[-1]]
    assert kinds[0] == "message_start" and kinds[-1] == "message_stop"
    pieces = [s.data for s in stand_in.streams[-1] if s.event == "content_block_delta"]
    assert len(pieces) > len(reply.items)  # fine-grained: cut anywhere, not one per item
    assert {p["delta"]["type"] for p in pieces} == {"input_json_delta"}


def test_the_household_s_size_and_staples_come_from_the_system_prompt(
    stand_in: FakeAnthropic,
) -> None:
    brief = Brief(WEEK, household=Household(people=4, staples="oat milk"))
    reply = asyncio.run(shopper(stand_in).write(brief))
    lines = [item.line() for item in reply.items]
    assert "600 g beef mince" in lines and "12 taco shells" in lines  # for 4, not 2
    assert "oat milk" in names(reply.items)


def test_a_change_is_answered_as_the_difference(stand_in: FakeAnthropic) -> None:
    first = asyncio.run(shopper(stand_in).write(Brief(WEEK))).items
    brief = Brief(
        WEEK,
        change="no lettuce, add oat milk, more cheddar",
        last_items=first,
        last_basket=[item.line() for item in first],
    )
    reply = asyncio.run(shopper(stand_in).write(brief))
    assert reply.revised
    call = stand_in.requests[-1]
    assert call["tool_choice"] == {"type": "any"}
    assert "lettuce" not in names(reply.items) and "oat milk" in names(reply.items)
    cheddar = [item.line() for item in reply.items if item.name == "cheddar"]
    assert cheddar == ["200 g cheddar"]


def test_a_change_that_changes_nothing_gives_the_same_basket_whole(
    stand_in: FakeAnthropic,
) -> None:
    first = asyncio.run(shopper(stand_in).write(Brief(WEEK))).items
    brief = Brief(WEEK, change="xyzzy", last_items=first, last_basket=[i.line() for i in first])
    reply = asyncio.run(shopper(stand_in).write(brief))
    assert not reply.revised and reply.items == first


def test_asked_again_it_leaves_out_the_items_named(stand_in: FakeAnthropic) -> None:
    brief = Brief(WEEK, conflicts=("beef mince: contains beef: you said no meat",))
    reply = asyncio.run(shopper(stand_in).write(brief))
    assert "beef mince" not in names(reply.items) and "taco shells" in names(reply.items)


def test_a_week_it_knows_nothing_of_is_still_an_answer(stand_in: FakeAnthropic) -> None:
    reply = asyncio.run(shopper(stand_in).write(Brief("something unheard of")))
    assert names(reply.items) == ["ingredients for something unheard of"]


def test_only_the_sandbox_s_bot_may_call_it(stand_in: FakeAnthropic) -> None:
    """Another key is refused (401, which the shopper reports as unreachable); so is a browser
    page (an Origin header), whatever key it sends."""
    assert stand_in.api_key.startswith("sandbox-stand-in-") and len(stand_in.api_key) > 40
    with pytest.raises(ShopperUnreachable):
        asyncio.run(shopper(stand_in, key="sk-ant-someone-else").write(Brief(WEEK)))
    request = urllib.request.Request(
        f"{stand_in.url}/v1/messages",
        data=json.dumps({}).encode(),
        headers={"x-api-key": stand_in.api_key, "Origin": "http://evil.example"},
    )
    with pytest.raises(urllib.error.HTTPError) as refused:
        urllib.request.urlopen(request, timeout=10)
    assert refused.value.code == 403
    assert stand_in.url.startswith("http://127.0.0.1:")


def test_the_banner_says_a_stand_in_writes_the_baskets_not_claude() -> None:
    said = claude_stand_in.banner()
    assert said.startswith("A stand-in writes the baskets, not Claude")
    assert "60 output tokens a second after 0.5 s" in said
