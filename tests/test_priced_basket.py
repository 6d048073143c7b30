"""A priced basket in Slack (issue 34, items 2 and 3): ``/shop`` through the real handler, the
basket matched at the workspace's store by the bot's Kroger client against the local stand-in,
posted with each item's product and cost and the total against the week's budget; and what it
says when it cannot be priced (no store chosen, Kroger down), its approval never blocked."""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from typing import Any

import pytest

from bot.orders.kroger_prices import DOWN
from bot.records.workspace_settings import ChosenStore, WorkspaceSettings
from bot.sandbox.anthropic_api import Reply
from bot.sandbox.kroger_api import FakeKroger
from tests.bot_kit import CHANNEL, World, context_text
from tests.fault_kit import TENANT, thread_texts
from workflow.shop.pricing import NO_STORE

STORE = ChosenStore(location_id="01400943", name="Kroger Over-the-Rhine", address="1420 Vine St")
# As a US shopper writes them (the stand-in's catalogue sells each).
WEEK = "\n".join(
    [
        "1.5 lb chicken thighs",
        "2 ct red bell peppers",
        "1 lb broccoli crowns",
        "2 lb carrots",
        "1 gal whole milk",
        "1 jar tahini paste",  # sold nowhere: no product found
    ]
)


@pytest.fixture
def kroger() -> Iterator[FakeKroger]:
    with FakeKroger() as running:
        yield running


def priced(world: World, kroger: FakeKroger, **settings: Any) -> None:
    """A cold start with the deploy's Kroger app, and the workspace's settings saved."""
    from bot.handler import cold_start

    world.boot(
        KROGER_CLIENT_ID=kroger.client_id,
        KROGER_CLIENT_SECRET=kroger.client_secret,
        KROGER_API_URL=kroger.url,
    )
    rt, _ = cold_start()
    rt.records.settings_store.save(TENANT, WorkspaceSettings(**settings), None)


def cents_of(dollars: str) -> int:
    """``1,234.50`` (or ``55``, whole dollars as the basket writes them) in cents."""
    return round(float(dollars.replace(",", "")) * 100)


def items_text(message: dict[str, Any]) -> str:
    return "\n".join(
        block["text"]["text"]
        for block in message["blocks"]
        if block["type"] == "section" and block["text"]["type"] == "plain_text"
    )


def test_a_basket_is_posted_with_products_prices_and_its_total_against_the_budget(
    world: World, kroger: FakeKroger
) -> None:
    priced(world, kroger, store=STORE, budget_cents=2_000)
    world.claude.script(Reply(text=WEEK))
    world.shop()
    world.run_lazies()
    (basket,) = world.baskets()
    items = items_text(basket)
    assert "chicken thighs → " in items and " · $" in items
    assert "tahini paste → no product found" in items
    said = context_text(basket)
    assert "≈ $" in said and "at Kroger Over-the-Rhine; 1 item without a price" in said
    assert "this week's $20" in said
    assert kroger.calls("products") == 6  # one search an item
    (system,) = {json.dumps(r["system"]) for r in world.claude.requests}
    assert "a US Kroger" in system and "weekly budget of $20" in system  # Claude was told

    world.click(basket, "approve_basket")
    world.run_lazies()
    assert thread_texts(world, basket)[-1] == "Ordered 6 items."


def test_with_no_store_chosen_the_basket_says_how_to_choose_one(
    world: World, kroger: FakeKroger
) -> None:
    priced(world, kroger)
    world.shop()
    world.run_lazies()
    (basket,) = world.baskets()
    assert NO_STORE in json.dumps(basket["blocks"]) and kroger.calls("products") == 0


def test_kroger_down_posts_the_basket_without_prices_saying_so_and_it_can_be_approved(
    world: World, kroger: FakeKroger
) -> None:
    priced(world, kroger, store=STORE)
    kroger.answer_next(503, times=100)
    world.claude.script(Reply(text=WEEK))
    world.shop()
    world.run_lazies()
    (basket,) = world.baskets()
    assert DOWN in json.dumps(basket["blocks"]) and " → " not in items_text(basket)
    world.click(basket, "approve_basket")
    world.run_lazies()
    assert thread_texts(world, basket)[-1] == "Ordered 6 items."


def test_200_items_are_priced_and_posted_within_slack_s_limits(
    world: World, kroger: FakeKroger
) -> None:
    """200 items (a long week for a big household): priced in 8 chunks, one search a name,
    posted in one message within Slack's limits (the fake refuses what Slack refuses: over 50
    blocks, over 3,000 characters a section), the items that do not fit counted, and the total
    over all 200."""
    from bot.sandbox.kroger_catalogue import CATALOGUE

    names = sorted({product.description.split(" ", 1)[1] for product in CATALOGUE})[:100]
    week = [f"{n} {name}" for n in (1, 2) for name in names]
    priced(world, kroger, store=STORE)
    world.claude.script(Reply(text="\n".join(week)))
    world.shop()
    world.run_lazies()
    (basket,) = world.baskets()
    assert world.slack.violations == []
    assert kroger.calls("products") == 100
    assert "not shown here (approving orders all 200)" in json.dumps(basket["blocks"])
    assert "at Kroger Over-the-Rhine" in context_text(basket)
    shown = sum(line.count(" → ") for line in items_text(basket).splitlines())
    assert 0 < shown < 200  # the items shown; the total is over all 200, shown or not
    costs = re.findall(r"· \$([\d,]+(?:\.\d\d)?)", items_text(basket))
    (total,) = re.findall(r"≈ \$([\d,]+(?:\.\d\d)?)", context_text(basket))
    assert cents_of(total) > sum(map(cents_of, costs)) > 0


def test_an_answered_basket_keeps_the_prices_it_was_answered_at(
    world: World, kroger: FakeKroger
) -> None:
    """Approved, the message still shows what was approved and at what total; a basket changed
    keeps its own prices, and the revised one shows its own (one item fewer, one total less)."""
    priced(world, kroger, store=STORE, budget_cents=2_000)
    world.claude.script(Reply(text=WEEK), Reply(text="\n".join(WEEK.splitlines()[1:])))
    world.shop()
    world.run_lazies()
    (first,) = world.baskets()
    before = context_text(first)
    world.click(first, "change_basket")
    world.submit_change("no chicken")
    world.run_lazies()
    first_now = world.slack.message(CHANNEL, first["ts"])
    assert first_now is not None and "Change asked" in json.dumps(first_now["blocks"])
    (total_before,) = re.findall(r"≈ \$[\d,.]+", before)
    assert total_before in context_text(first_now) and "chicken thighs → " in items_text(first_now)
    second = world.baskets()[-1]
    (total_after,) = re.findall(r"≈ \$[\d,.]+", context_text(second))
    assert cents_of(total_after[3:]) < cents_of(total_before[3:])
    world.click(second, "approve_basket")
    world.run_lazies()
    approved = world.slack.message(CHANNEL, second["ts"])
    assert approved is not None and "Approved by" in context_text(approved)
    assert total_after in context_text(approved) and " → " in items_text(approved)


def test_a_basket_held_for_its_undo_window_keeps_its_prices_once_ordered(
    world: World, kroger: FakeKroger
) -> None:
    """Timers on and the default undo window: approved, the basket is held with its prices;
    when its order timer fires and it is ordered, the message still shows them (the review's
    finding: the order timer's answer dropped them)."""
    import boto3

    from tests.test_reminders import GROUP, ROLE, TARGET, fire, the_timer

    boto3.client("scheduler", region_name="us-east-1").create_schedule_group(Name=GROUP)
    world.boot(TIMER_GROUP=GROUP, TIMER_TARGET_ARN=TARGET, TIMER_ROLE_ARN=ROLE)
    priced(world, kroger, store=STORE, order_delay=120)
    world.claude.script(Reply(text=WEEK))
    world.shop()
    world.run_lazies()
    (basket,) = world.baskets()
    (total,) = re.findall(r"≈ \$[\d,.]+", context_text(basket))
    world.click(basket, "approve_basket")
    world.run_lazies()
    held = world.slack.message(CHANNEL, basket["ts"]) or {}
    assert "ordering" in context_text(held) and total in context_text(held)
    payload, timer = the_timer()
    assert timer["kind"] == "order"
    assert fire(world, payload) == {"fired": True, "kind": "order"}
    ordered = world.slack.message(CHANNEL, basket["ts"]) or {}
    assert "Approved by <@U0BOB>" in context_text(ordered) and world.buttons(ordered) == {}
    assert total in context_text(ordered) and " → " in items_text(ordered)
