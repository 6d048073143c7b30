"""Approve fills a Kroger cart (issue 34, item 4), through the real handler: a priced basket
approved, its products added once to the connected cart of the person the settings name (or of
whoever approved last), against the local Kroger stand-in (``bot.sandbox.kroger_api``, whose
cart a test reads back, which the bot itself never can) and moto's SSM and KMS.

What Kroger does that these rely on (sources in ``bot.sandbox.kroger_authorize``): a refresh
token is "invalidated once the client has used it" (Kroger's refresh token tutorial), so each
order renews it and saves the new one first; ``PUT /v1/cart/add`` has no idempotency key and
the cart cannot be read back without partner access, so an add whose answer never came is said
to the person ("may already be in the cart") with a Retry they choose, never made again by the
bot. Unconfirmed, and so chosen in the stand-in: what Kroger answers for a product it no longer
sells (a 400 here, nothing added).
"""

from __future__ import annotations

import dataclasses
import json
import time
import urllib.request
from collections.abc import Iterator
from typing import Any

import boto3
import pytest

from bot.orders.kroger import KrogerConfig
from bot.orders.kroger_cart import KrogerCart
from bot.orders.kroger_order import CONNECT_AGAIN, NOT_CONNECTED, NOTHING_PRICED
from bot.orders.place import MAY_BE_THERE
from bot.records.kroger_accounts import KrogerAccounts
from bot.records.order_choice import OrderChoice
from bot.records.workspace_settings import WorkspaceSettings
from bot.sandbox.anthropic_api import Reply
from bot.sandbox.kroger_api import FakeKroger
from bot.sandbox.world import CHANNEL
from tests.bot_kit import World
from tests.fault_kit import TENANT, thread_texts
from tests.test_kroger_cart import REDIRECT, connect
from tests.test_priced_basket import STORE, WEEK

PATH = "/weekly-shop/test/workspaces"
LEASE = 1.0
CART = OrderChoice(destination="kroger")


@pytest.fixture
def kroger() -> Iterator[FakeKroger]:
    with FakeKroger() as running:
        running.customers.register(running.client_id, REDIRECT)
        yield running


def carted(world: World, kroger: FakeKroger, **settings: Any) -> KrogerAccounts:
    """A deploy with a Kroger app and people's accounts kept in SSM; the workspace's store
    chosen and its orders going to a Kroger cart (unless ``settings`` say otherwise)."""
    from bot.handler import cold_start

    arn = str(boto3.client("kms").create_key(Description="weekly-shop keys")["KeyMetadata"]["Arn"])
    world.boot(
        KROGER_CLIENT_ID=kroger.client_id,
        KROGER_CLIENT_SECRET=kroger.client_secret,
        KROGER_API_URL=kroger.url,
        WORKSPACE_SECRETS_PATH=PATH,
        WORKSPACE_SECRETS_KEY=arn,
        KROGER_REDIRECT_URL=REDIRECT,
    )
    rt, _ = cold_start()
    wanted = {"store": STORE, "orders": CART, "order_delay": 0, **settings}
    store = rt.records.settings_store
    store.save(TENANT, WorkspaceSettings(**wanted), store.read(TENANT).etag)
    return KrogerAccounts(boto3.client("ssm"), PATH)


def connected(kroger: FakeKroger, accounts: KrogerAccounts, user: str, customer: str) -> str:
    """``user`` connected their Kroger account (``customer``) as the Home tab does: the
    refresh token the code exchange gave, saved; the token."""
    config = KrogerConfig(kroger.client_id, kroger.client_secret, kroger.url)
    tokens = connect(kroger, KrogerCart(config), customer)
    accounts.save(TENANT, user, tokens.refresh_token)
    return tokens.refresh_token


def approved(world: World, user: str = "U0BOB") -> dict[str, Any]:
    """A priced basket of :data:`WEEK` (5 products, tahini paste without one), approved."""
    world.claude.script(Reply(text=WEEK))
    world.shop()
    world.run_lazies()
    (basket,) = world.baskets()
    world.click(basket, "approve_basket", user=user)
    world.run_lazies()
    return basket


def order_reply(world: World, basket: dict[str, Any]) -> dict[str, Any]:
    (reply,) = [
        r for r in world.slack.thread(CHANNEL, basket["ts"]) if r["text"].startswith("Approved")
    ]
    return reply


def buttons(reply: dict[str, Any]) -> dict[str, dict[str, Any]]:
    return {
        e["text"]["text"]: e
        for b in reply.get("blocks") or []
        for e in b.get("elements") or []
        if e.get("type") == "button"
    }


def plain_texts(reply: dict[str, Any]) -> list[str]:
    return [
        b["text"]["text"]
        for b in reply.get("blocks") or []
        if b["type"] == "section" and b["text"]["type"] == "plain_text"
    ]


def retry(world: World, reply: dict[str, Any], user: str = "U0BOB") -> None:
    world.click(reply, "retry_order", user=user)
    world.run_lazies()


def test_an_approved_basket_s_products_go_once_to_the_approver_s_cart(
    world: World, kroger: FakeKroger
) -> None:
    """PUT /v1/cart/add with each product's UPC, how many, PICKUP, once; the thread says whose
    cart and what was not sent (no product at the store), and links to the cart. Each order
    renews the person's refresh token (Kroger spends the old one) and keeps the new one."""
    accounts = carted(world, kroger)
    first = connected(kroger, accounts, "U0BOB", "bob")
    basket = approved(world)
    cart = kroger.customers.cart_of("bob")
    assert len(cart) == 5 and {i["modality"] for i in cart} == {"PICKUP"}
    assert all(len(i["upc"]) == 13 and i["quantity"] >= 1 for i in cart)
    reply = order_reply(world, basket)
    assert reply["text"] == "Approved: 5 products added to <@U0BOB>'s Kroger cart."
    link = buttons(reply)["Open the Kroger cart"]["url"]
    assert link == f"{kroger.url}/cart"  # the stand-in's cart page, as kroger.com/cart is
    with urllib.request.urlopen(link, timeout=5) as page:
        assert "Signed in as bob: 5 lines" in page.read().decode()
    (left_out,) = [t for t in plain_texts(reply) if t.startswith("Not in the cart")]
    assert left_out == "Not in the cart (no product at the store, 1 item): tahini paste"
    renewed = accounts.read(TENANT, "U0BOB")
    assert renewed is not None and renewed != first
    world.click(basket, "approve_basket", user="U0BOB")  # a late double click: nothing more
    world.run_lazies()
    assert len(kroger.customers.cart_of("bob")) == 5


def test_the_cart_of_the_person_the_settings_name_is_filled_whoever_approves(
    world: World, kroger: FakeKroger
) -> None:
    carol = OrderChoice(destination="kroger", kroger_cart="U0CAROL")
    accounts = carted(world, kroger, orders=carol)
    connected(kroger, accounts, "U0CAROL", "carol")
    connected(kroger, accounts, "U0BOB", "bob")
    basket = approved(world, user="U0BOB")
    assert len(kroger.customers.cart_of("carol")) == 5 and kroger.customers.cart_of("bob") == []
    assert "<@U0CAROL>'s Kroger cart" in order_reply(world, basket)["text"]


def test_a_person_not_connected_is_told_and_retry_fills_the_cart_once_they_connect(
    world: World, kroger: FakeKroger
) -> None:
    accounts = carted(world, kroger)
    basket = approved(world)
    reply = order_reply(world, basket)
    assert reply["text"] == f"Approved, but the order did not go through: {NOT_CONNECTED}."
    assert "For <@U0BOB>'s Kroger cart." in json.dumps(reply["blocks"])
    assert "Retry" in buttons(reply)
    connected(kroger, accounts, "U0BOB", "bob")
    retry(world, reply)
    assert len(kroger.customers.cart_of("bob")) == 5
    now = world.slack.message(CHANNEL, reply["ts"]) or {}
    assert now["text"] == "Approved: 5 products added to <@U0BOB>'s Kroger cart."
    retry(world, reply)  # a second Retry (a stale button): nothing added again
    assert len(kroger.customers.cart_of("bob")) == 5


def test_a_token_refused_mid_order_is_renewed_once_and_the_items_added_once(
    world: World, kroger: FakeKroger
) -> None:
    """A 401 on the add (Kroger ending a token before ``expires_in`` says) added nothing:
    renewed once more and added, once."""
    accounts = carted(world, kroger)
    connected(kroger, accounts, "U0BOB", "bob")
    kroger.customers.fail_next_add(401)
    basket = approved(world)
    assert len(kroger.customers.cart_of("bob")) == 5
    assert order_reply(world, basket)["text"].startswith("Approved: 5 products")


def test_a_connection_kroger_no_longer_accepts_says_connect_again_with_retry(
    world: World, kroger: FakeKroger
) -> None:
    """The person removed the app at Kroger: the refresh is a 400 invalid_grant."""
    accounts = carted(world, kroger)
    connected(kroger, accounts, "U0BOB", "bob")
    kroger.customers.revoke("bob")
    basket = approved(world)
    reply = order_reply(world, basket)
    assert reply["text"] == f"Approved, but the order did not go through: {CONNECT_AGAIN}."
    assert "Retry" in buttons(reply) and kroger.customers.cart_of("bob") == []


def test_an_add_whose_answer_never_came_says_they_may_be_in_the_cart_and_only_retry_adds_again(
    world: World, kroger: FakeKroger
) -> None:
    """The add is made and the connection closes unanswered: the bot cannot know (no
    idempotency key, no reading the cart), says so, and adds again only when the person
    presses Retry."""
    accounts = carted(world, kroger)
    connected(kroger, accounts, "U0BOB", "bob")
    kroger.customers.drop_next_add()
    basket = approved(world)
    reply = order_reply(world, basket)
    assert reply["text"] == f"Approved, but the order did not go through: {MAY_BE_THERE}."
    assert len(kroger.customers.cart_of("bob")) == 5
    world.click(basket, "approve_basket", user="U0BOB")  # a redelivery adds nothing
    world.run_lazies()
    assert len(kroger.customers.cart_of("bob")) == 5
    retry(world, reply)  # the person looked, and chose to add them again
    assert len(kroger.customers.cart_of("bob")) == 10
    now = world.slack.message(CHANNEL, reply["ts"]) or {}
    assert now["text"].startswith("Approved: 5 products added")


def test_a_product_kroger_refuses_at_ordering_adds_nothing_and_says_so(
    world: World, kroger: FakeKroger
) -> None:
    """A product the store stopped selling between pricing and ordering (what Kroger answers is
    unconfirmed: a 400 here): nothing is added, and the thread says Kroger refused the items."""
    accounts = carted(world, kroger)
    connected(kroger, accounts, "U0BOB", "bob")
    kroger.customers.fail_next_add(400)
    basket = approved(world)
    reply = order_reply(world, basket)
    assert "Kroger refused the items (400)" in reply["text"]
    assert "nothing was added" in reply["text"]
    assert kroger.customers.cart_of("bob") == []


def test_a_basket_that_was_never_priced_sends_nothing_to_the_cart(
    world: World, kroger: FakeKroger
) -> None:
    accounts = carted(world, kroger)
    connected(kroger, accounts, "U0BOB", "bob")
    kroger.answer_next(503, times=100)  # the products API down while the basket is priced
    basket = approved(world)
    assert order_reply(world, basket)["text"] == (
        f"Approved, but the order did not go through: {NOTHING_PRICED}."
    )
    assert kroger.customers.cart_of("bob") == []


def test_a_person_who_disconnects_while_the_basket_is_held_is_told_at_the_order(
    world: World, kroger: FakeKroger
) -> None:
    """Approved, held for the undo window; the person disconnects; the order timer fires: not
    connected, said with Retry, nothing added anywhere."""
    from tests.test_reminders import GROUP, ROLE, TARGET, fire, the_timer

    boto3.client("scheduler", region_name="us-east-1").create_schedule_group(Name=GROUP)
    world.boot(TIMER_GROUP=GROUP, TIMER_TARGET_ARN=TARGET, TIMER_ROLE_ARN=ROLE)
    accounts = carted(world, kroger, order_delay=120)
    connected(kroger, accounts, "U0BOB", "bob")
    basket = approved(world)
    payload, timer = the_timer()
    assert timer["kind"] == "order" and kroger.customers.cart_of("bob") == []
    assert accounts.forget_person(TENANT, "U0BOB")
    assert fire(world, payload) == {"fired": True, "kind": "order"}
    assert order_reply(world, basket)["text"].endswith(f"{NOT_CONNECTED}.")
    assert kroger.customers.cart_of("bob") == []


@pytest.mark.parametrize("point", ["order-before-call", "order-after-call", "order-recorded"])
def test_an_approve_killed_around_the_cart_add_never_adds_twice_on_its_own(
    served: World, kroger: FakeKroger, point: str
) -> None:
    """A fresh process killed before the add, after it (added, not recorded) and after the
    record; then Lambda's retry of the same click. Before or after the add, the retry cannot
    tell which (the cart cannot be read): it adds nothing and says they may be in the cart,
    with Retry. After the record, it shows the order. The cart never holds them twice."""
    world = served  # AWS as a moto server, which the fresh processes share
    accounts = carted(world, kroger)
    world.boot(LOCK_TTL_SECONDS=str(LEASE))
    connected(kroger, accounts, "U0BOB", "bob")
    world.claude.script(Reply(text=WEEK))
    world.shop()
    world.run_lazies()
    (basket,) = world.baskets()
    world.click(basket, "approve_basket", user="U0BOB")
    (lost,) = world.lam.take()
    world.in_fresh_process(lost.payload, crash_at=point)
    added = 0 if point == "order-before-call" else 5
    assert len(kroger.customers.cart_of("bob")) == added
    time.sleep(LEASE + 0.2)
    world.in_fresh_process(lost.payload)  # Lambda's retry
    world.in_fresh_process(lost.payload)  # and another
    assert len(kroger.customers.cart_of("bob")) == added
    texts = [t for t in thread_texts(world, basket) if t.startswith("Approved")]
    if point == "order-recorded":
        assert texts == ["Approved: 5 products added to <@U0BOB>'s Kroger cart."]
    else:
        assert texts == [f"Approved, but the order did not go through: {MAY_BE_THERE}."]


def test_an_admin_sends_orders_to_a_person_s_kroger_cart_in_settings(
    world: World, kroger: FakeKroger
) -> None:
    """The Settings modal offers a Kroger cart, and whose (one person, or none: whoever
    approves last), only in a deploy with a Kroger app; the summary says whose."""
    from bot.steps.settings import NO_KROGER
    from tests.settings_kit import open_settings, option, save, users

    world.slack.set_person("U0CAROL", is_admin=True, tz="Europe/London")
    form = open_settings(world, "U0CAROL")  # no Kroger app yet: no cart offered
    assert form is not None
    offered = next(b for b in form["blocks"] if b.get("block_id") == "destination")
    assert "kroger" not in json.dumps(offered) and "kroger_cart" not in json.dumps(form)
    refused = save(world, "U0CAROL", form, destination=option("kroger"))  # forged
    assert refused == {"response_action": "errors", "errors": {"destination": NO_KROGER}}

    carted(world, kroger, orders=OrderChoice())
    form = open_settings(world, "U0CAROL")
    assert form is not None and '"value": "kroger"' in json.dumps(form)
    chosen = {"kroger_cart": users("U0DAVE"), "kroger_modality": option("DELIVERY")}
    answer = save(world, "U0CAROL", form, destination=option("kroger"), **chosen)
    assert answer == {}
    home = json.dumps((world.open_home("U0CAROL") or {}).get("blocks", []))
    assert "*Orders go to:* <@U0DAVE>'s Kroger cart, for delivery" in home
    again = open_settings(world, "U0CAROL")
    assert again is not None
    (cart,) = [b for b in again["blocks"] if b.get("block_id") == "kroger_cart"]
    assert cart["element"]["initial_users"] == ["U0DAVE"]


def test_kroger_past_its_limit_at_ordering_adds_nothing_and_retry_adds_once(
    world: World, kroger: FakeKroger
) -> None:
    """A 429 is a refusal (nothing added): said with Retry (cold review: it had none)."""
    from bot.orders.kroger_order import BUSY

    accounts = carted(world, kroger)
    connected(kroger, accounts, "U0BOB", "bob")
    kroger.customers.fail_next_add(429)
    basket = approved(world)
    reply = order_reply(world, basket)
    assert reply["text"] == f"Approved, but the order did not go through: {BUSY}."
    assert kroger.customers.cart_of("bob") == [] and "Retry" in buttons(reply)
    retry(world, reply)
    assert len(kroger.customers.cart_of("bob")) == 5


def test_a_retry_after_orders_moved_elsewhere_sends_nothing_and_says_why(
    world: World, kroger: FakeKroger
) -> None:
    """Bob is not connected; the admin sends orders to a canvas instead; Bob's Retry of the cart
    order makes no canvas (the record, the thread and its cart are the Kroger order's), and is
    told why (cold review: the thread said a canvas was a Kroger cart)."""
    from bot.handler import cold_start
    from bot.orders.place import DestinationChanged
    from tests.fault_kit import ephemeral_texts

    carted(world, kroger)
    basket = approved(world)
    reply = order_reply(world, basket)
    assert reply["text"].endswith(f"{NOT_CONNECTED}.")
    rt, _ = cold_start()
    store = rt.records.settings_store
    now = store.read(TENANT)
    assert now.saved is not None
    moved = dataclasses.replace(now.saved, orders=OrderChoice())
    store.save(TENANT, moved, now.etag)
    retry(world, reply)
    assert world.slack.canvases == {}
    assert (world.slack.message(CHANNEL, reply["ts"]) or {})["text"] == reply["text"]
    said = DestinationChanged("kroger", "canvas").reason
    assert ephemeral_texts(world, "U0BOB")[-1] == said
    assert said.startswith("This order was for a Kroger cart, and orders now go to a Slack canvas")


def test_only_the_cart_s_owner_can_retry_adding_to_it(world: World, kroger: FakeKroger) -> None:
    """After "they may already be in the cart", only the person whose cart it is (who can look
    in it) may add again: Carol's Retry adds nothing and says whose choice it is."""
    from bot.orders.place import NotYourCart
    from tests.fault_kit import ephemeral_texts

    accounts = carted(world, kroger)
    connected(kroger, accounts, "U0BOB", "bob")
    kroger.customers.drop_next_add()
    basket = approved(world)
    reply = order_reply(world, basket)
    assert reply["text"].endswith(f"{MAY_BE_THERE}.")
    retry(world, reply, user="U0CAROL")
    assert len(kroger.customers.cart_of("bob")) == 5
    assert ephemeral_texts(world, "U0CAROL")[-1] == NotYourCart("U0BOB").reason
    retry(world, reply, user="U0BOB")
    assert len(kroger.customers.cart_of("bob")) == 10


def test_a_household_that_chose_delivery_gets_its_cart_for_delivery(
    world: World, kroger: FakeKroger
) -> None:
    """Kroger's cart add takes a ``modality``, PICKUP or DELIVERY (the kroger-api package's
    glossary): the household's choice in Settings is what is sent."""
    accounts = carted(
        world, kroger, orders=OrderChoice(destination="kroger", kroger_modality="DELIVERY")
    )
    connected(kroger, accounts, "U0BOB", "bob")
    approved(world)
    cart = kroger.customers.cart_of("bob")
    assert len(cart) == 5 and {i["modality"] for i in cart} == {"DELIVERY"}


def test_200_items_go_to_the_cart_in_one_add_and_the_thread_stays_within_slack_s_limits(
    world: World, kroger: FakeKroger
) -> None:
    """200 items (the basket's most), each priced, approved: one PUT /v1/cart/add with one line
    per product (the same product for two items is one line, their counts summed), and the
    thread's reply within what Slack takes (the fake refuses over 50 blocks, over 3,000
    characters a section). How many items Kroger takes in one add is not published: the
    stand-in takes any number."""
    from bot.sandbox.kroger_catalogue import CATALOGUE

    names = sorted({product.description.split(" ", 1)[1] for product in CATALOGUE})[:100]
    week = [f"{n} {name}" for n in (1, 2) for name in names]
    accounts = carted(world, kroger)
    connected(kroger, accounts, "U0BOB", "bob")
    world.claude.script(Reply(text="\n".join(week)))
    world.shop()
    world.run_lazies()
    (basket,) = world.baskets()
    adds_before = sum(1 for r in kroger.requests if r["path"] == "/v1/cart/add")
    world.click(basket, "approve_basket", user="U0BOB")
    world.run_lazies()
    adds = [r for r in kroger.requests if r["path"] == "/v1/cart/add"][adds_before:]
    assert len(adds) == 1
    lines = json.loads(adds[0]["body"])["items"]
    assert len({line["upc"] for line in lines}) == len(lines) <= 100  # 200 items, 100 names
    assert kroger.customers.cart_of("bob") == lines
    reply = order_reply(world, basket)
    assert reply["text"] == f"Approved: {len(lines)} products added to <@U0BOB>'s Kroger cart."
    assert world.slack.violations == []
