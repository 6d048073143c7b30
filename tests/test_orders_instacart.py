"""Approve ends in an Instacart shopping-list page (``ORDER_DESTINATION=instacart``), through the
real handler and the local Instacart Developer Platform (``bot.sandbox.instacart_api``): the
thread's **Open in Instacart** button links to the page, which lists what it was sent; a wrong
key is said with Retry; a crash leaves one link in the thread."""

from __future__ import annotations

import json
import time
import urllib.request
from collections.abc import Iterator
from typing import Any

import pytest

from bot.orders.instacart import SERVERS, InstacartDestination, body_of
from bot.orders.order import DestinationDown, DestinationRefused, Order, OutcomeUnknown
from bot.sandbox.instacart_api import FakeInstacart, list_problem
from bot.sandbox.world import CHANNEL
from bot.settings import Settings, SettingsError
from tests.bot_kit import World, start_basket
from tests.fault_kit import thread_texts
from workflow.shop.basket import Item

LEASE = 1.0


@pytest.fixture
def instacart() -> Iterator[FakeInstacart]:
    with FakeInstacart() as running:
        yield running


def instacart_env(fake: FakeInstacart, key: str | None = None) -> dict[str, str]:
    return {
        "ORDER_DESTINATION": "instacart",
        "INSTACART_API_KEY": key or fake.api_key,
        "INSTACART_API_URL": fake.url,
    }


def order_reply(world: World, basket: dict[str, Any]) -> dict[str, Any]:
    (reply,) = [r for r in world.slack.thread(CHANNEL, basket["ts"]) if "rder" in r["text"]]
    return reply


def buttons(reply: dict[str, Any]) -> list[dict[str, Any]]:
    return [
        element
        for block in reply.get("blocks") or []
        for element in block.get("elements") or []
        if element.get("type") == "button"
    ]


def an_order(*items: Item) -> Order:
    return Order(
        order_id="S" * 20,
        team="T0HOME",
        channel=CHANNEL,
        title="Shopping list · week of 7 December 2026",
        lines=items or (Item(name="chicken breast", quantity=500, unit="g", note="for Friday"),),
        requested_by="U0ALICE",
        approved_by=("U0BOB",),
        approved_at=1796_000_000,
    )


def test_an_approved_basket_becomes_one_instacart_page_linked_from_the_thread(
    world: World, instacart: FakeInstacart
) -> None:
    """POST /idp/v1/products/products_link with the Bearer key, a title, link_type
    shopping_list and one line item per item (name, quantity, unit, display_text); the thread's
    link button is the answer's products_link_url, and that page lists the basket."""
    world.boot(**instacart_env(instacart))
    basket = start_basket(world)
    world.click(basket, "approve_basket", user="U0BOB")
    world.run_lazies()
    (sent,) = instacart.lists.values()
    assert sent["link_type"] == "shopping_list" and sent["title"].startswith("Shopping list")
    assert len(sent["line_items"]) == 10
    assert sent["line_items"][0] == {
        "name": "chicken breast",
        "display_text": "500 g chicken breast",
        "quantity": 500,
        "unit": "g",
    }
    assert {"name": "bell peppers", "quantity": 2, "unit": "each"}.items() <= sent["line_items"][
        1
    ].items()
    reply = order_reply(world, basket)
    assert reply["text"] == "Ordered 10 items."
    (link,) = buttons(reply)
    assert link["text"]["text"] == "Open in Instacart"
    with urllib.request.urlopen(link["url"]) as page:  # the stand-in's page of the list
        shown = page.read().decode()
    assert "500 g chicken breast" in shown and "250 g mozzarella" in shown
    world.click(basket, "approve_basket", user="U0CAROL")  # a late click: no second page
    world.run_lazies()
    assert len(instacart.lists) == 1
    home = (world.open_home("U0ALICE") or {}).get("blocks", [])  # the past order: its page
    opened = [e for b in home for e in b.get("elements") or [] if e.get("url") == link["url"]]
    assert [e["text"]["text"] for e in opened] == ["Open in Instacart"]


def test_a_wrong_instacart_key_is_said_with_retry_and_nothing_is_made(
    world: World, instacart: FakeInstacart
) -> None:
    """Instacart answers 401 to a key it does not know (a development key on production too):
    refused, not tried again, said in our words (never the key), with Retry."""
    world.boot(**instacart_env(instacart, key="not-the-key-at-all"))
    basket = start_basket(world)
    world.click(basket, "approve_basket", user="U0BOB")
    world.run_lazies()
    reply = order_reply(world, basket)
    assert reply["text"] == (
        "Approved, but the order did not go through: Instacart refused the workspace's API key "
        "(401): enter it again in Settings."
    )
    assert "not-the-key" not in json.dumps(reply)
    assert [b["text"]["text"] for b in buttons(reply)] == ["Retry"]
    assert instacart.lists == {} and len(instacart.requests) == 1


def test_instacart_down_then_up_retry_makes_the_one_page(
    world: World, instacart: FakeInstacart
) -> None:
    """A 503 three times (its three attempts): failed, Retry offered; the Retry makes the page."""
    world.boot(**instacart_env(instacart))
    instacart.answer_next(503, times=3)
    basket = start_basket(world)
    world.click(basket, "approve_basket", user="U0BOB")
    world.run_lazies()
    reply = order_reply(world, basket)
    assert reply["text"].endswith("Instacart could not be reached or kept failing.")
    world.click(reply, "retry_order", user="U0BOB")
    world.run_lazies()
    assert order_reply(world, basket)["text"] == "Ordered 10 items."
    assert len(instacart.lists) == 1


@pytest.mark.parametrize("point", ["order-before-call", "order-after-call", "order-recorded"])
def test_an_approve_killed_around_instacart_shows_one_link(
    served: World, instacart: FakeInstacart, point: str
) -> None:
    """Killed before the call: the retry makes the page. After the call, before the record:
    the API takes no idempotency key, so the retry makes a second page and the thread links
    that one (the first is never shown; a page is not a purchase). After the record: the retry
    shows it and makes nothing. The thread tells it once, with one link."""
    world = served
    world.boot(LOCK_TTL_SECONDS=str(LEASE), **instacart_env(instacart))
    basket = start_basket(world)
    world.click(basket, "approve_basket")
    (lost,) = world.lam.take()
    world.in_fresh_process(lost.payload, crash_at=point)
    time.sleep(LEASE + 0.2)
    world.in_fresh_process(lost.payload)  # Lambda's retry
    made = {"order-before-call": 1, "order-after-call": 2, "order-recorded": 1}[point]
    assert len(instacart.lists) == made
    assert thread_texts(world, basket) == ["Ordered 10 items."]
    (link,) = buttons(order_reply(world, basket))
    assert link["url"].endswith(f"/{made:04d}")  # the page the record kept
    world.in_fresh_process(lost.payload)
    assert len(instacart.lists) == made


def test_the_body_is_what_the_api_documents(instacart: FakeInstacart) -> None:
    """``title`` and ``line_items`` required, each with a ``name``; an item counted in pieces
    says ``each``; one of no quantity (a basket of version 1) says none. A note (a staple's
    "always", a diet flag) is not sent: issue 33, "1 bread — always" reached Instacart."""
    staple = Item(name="bread", quantity=1, unit="loaf", note="always", aisle="bakery")
    body = json.loads(body_of(an_order(Item(name="eggs", quantity=6), Item.named("bread"), staple)))
    assert list_problem(body) is None
    assert body["expires_in"] == 30 and body["link_type"] == "shopping_list"
    assert body["line_items"] == [
        {"name": "eggs", "display_text": "6 eggs", "quantity": 6, "unit": "each"},
        {"name": "bread", "display_text": "bread"},
        {"name": "bread", "display_text": "1 loaf bread", "quantity": 1, "unit": "loaf"},
    ]


@pytest.mark.parametrize(
    ("change", "said"),
    [
        ({"title": ""}, "title is required"),
        ({"line_items": []}, "line_items is required"),
        ({"line_items": [{"quantity": 1}]}, "line_items[0].name is required"),
        ({"line_items": [{"name": "milk", "quantity": 0}]}, "quantity must be a positive"),
        ({"link_type": "cart"}, "link_type must be one of"),
        ({"expires_in": 400}, "expires_in must be a number of days up to 365"),
    ],
)
def test_the_stand_in_refuses_what_instacart_refuses(
    instacart: FakeInstacart, change: dict[str, Any], said: str
) -> None:
    body = {**json.loads(body_of(an_order())), **change}
    request = urllib.request.Request(
        f"{instacart.url}/idp/v1/products/products_link",
        data=json.dumps(body).encode(),
        headers={
            "Authorization": f"Bearer {instacart.api_key}",
            "Content-Type": "application/json",
        },
    )
    with pytest.raises(urllib.error.HTTPError) as refused:
        urllib.request.urlopen(request)
    assert refused.value.code == 400
    assert said in json.loads(refused.value.read())["error"]["message"]


def test_answers_become_the_order_errors(instacart: FakeInstacart) -> None:
    """400: refused (not tried again); 429/5xx three times: down; no answer in time: the
    outcome is unknown; an answer without an https link (from a real server): down."""
    pauses: list[float] = []
    place = InstacartDestination(instacart.api_key, instacart.url, sleep=pauses.append).place
    instacart.answer_next(422)
    with pytest.raises(DestinationRefused, match=r"refused the shopping list \(422\)"):
        place(an_order())
    instacart.answer_next(429, times=3)
    with pytest.raises(DestinationDown):
        place(an_order())
    assert len(pauses) == 2 and 0.5 <= pauses[0] <= 0.75 and 1.5 <= pauses[1] <= 2.25
    slow = InstacartDestination(instacart.api_key, instacart.url, timeout=0.2, sleep=pauses.append)
    instacart.answer_next(200, times=3, delay=0.5)
    with pytest.raises(OutcomeUnknown):
        slow.place(an_order())
    nothing = InstacartDestination("k" * 10, "http://127.0.0.1:9", sleep=pauses.append)
    with pytest.raises(DestinationDown, match="could not be reached"):
        nothing.place(an_order())


def test_development_and_production_are_different_servers() -> None:
    assert SERVERS == {
        "development": "https://connect.dev.instacart.tools",
        "production": "https://connect.instacart.com",
    }


@pytest.mark.parametrize(
    ("env", "said"),
    [
        ({"ORDER_DESTINATION": "instacart"}, "INSTACART_API_KEY is not set"),
        ({"INSTACART_SERVER": "staging"}, "INSTACART_SERVER is invalid"),
        ({"INSTACART_API_KEY": "short"}, "INSTACART_API_KEY is invalid"),
    ],
)
def test_instacart_configured_wrongly_fails_at_cold_start_naming_the_variable(
    env: dict[str, str], said: str
) -> None:
    base = {
        "SLACK_SIGNING_SECRET": "x" * 32,
        "SLACK_BOT_TOKEN": "xoxb-1",
        "CHECKPOINT_BUCKET": "bucket",
    }
    with pytest.raises(SettingsError, match=said):
        Settings.from_env({**base, **env})
