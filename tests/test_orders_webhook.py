"""Approve ends in a signed webhook delivery (``ORDER_DESTINATION=webhook``), through the real
handler and a real HTTPS receiver on 127.0.0.1 (``bot.sandbox.webhook_receiver``): once per
order, or, when a process dies after the delivery and before the order record says so, twice
with the same Idempotency-Key (at least once, with a stable key); a refusal is said in the
thread with Retry."""

from __future__ import annotations

import json
import time
from collections.abc import Iterator
from typing import Any

import pytest

from bot.sandbox.world import CHANNEL
from bot.settings import Settings, SettingsError
from tests.bot_kit import World, start_basket
from tests.fault_kit import thread_texts

LEASE = 1.0


@pytest.fixture
def receiver() -> Iterator[Any]:
    from bot.sandbox.webhook_receiver import WebhookReceiver

    with WebhookReceiver() as running:
        yield running


def webhook_env(receiver: Any) -> dict[str, str]:
    return {
        "ORDER_DESTINATION": "webhook",
        "ORDER_WEBHOOK_URL": receiver.url,
        "ORDER_WEBHOOK_SECRET": receiver.secret,
        **receiver.env,
    }


def order_reply(world: World, basket: dict[str, Any]) -> dict[str, Any]:
    (reply,) = [r for r in world.slack.thread(CHANNEL, basket["ts"]) if "rder" in r["text"]]
    return reply


def session_of(basket: dict[str, Any]) -> str:
    (actions,) = [b for b in basket["blocks"] if b["type"] == "actions"]
    return str(json.loads(actions["elements"][0]["value"])["s"])


def test_an_approved_basket_is_delivered_to_the_webhook_once(world: World, receiver: Any) -> None:
    world.boot(**webhook_env(receiver))
    basket = start_basket(world)
    world.click(basket, "approve_basket", user="U0BOB")
    world.run_lazies()
    assert receiver.counts() == {session_of(basket): 1}
    (delivery,) = receiver.deliveries
    assert delivery.body["approved_by"] == ["U0BOB"] and len(delivery.body["items"]) == 10
    reply = order_reply(world, basket)
    assert reply["text"] == "Ordered 10 items."
    assert "Sent to the household's webhook." in json.dumps(reply["blocks"])
    world.click(basket, "approve_basket", user="U0CAROL")  # a late click: nothing sent again
    world.run_lazies()
    assert receiver.counts() == {session_of(basket): 1}


def test_a_webhook_that_refuses_is_said_with_retry_and_retry_delivers(
    world: World, receiver: Any
) -> None:
    world.boot(**webhook_env(receiver))
    receiver.answer_next(404)
    basket = start_basket(world)
    world.click(basket, "approve_basket", user="U0BOB")
    world.run_lazies()
    reply = order_reply(world, basket)
    assert reply["text"] == (
        "Approved, but the order did not go through: the webhook refused the order (404)."
    )
    world.click(reply, "retry_order", user="U0BOB")
    world.run_lazies()
    assert order_reply(world, basket)["text"] == "Ordered 10 items."
    assert receiver.counts() == {session_of(basket): 2}  # the refused one, then the retry


def test_a_webhook_url_that_points_inside_is_refused_at_send(world: World, receiver: Any) -> None:
    """ORDER_WEBHOOK_URL to the metadata address: nothing is sent, the thread says why."""
    env = webhook_env(receiver)
    world.boot(**{**env, "ORDER_WEBHOOK_URL": "https://169.254.169.254/latest/meta-data/"})
    basket = start_basket(world)
    world.click(basket, "approve_basket", user="U0BOB")
    world.run_lazies()
    assert order_reply(world, basket)["text"].startswith(
        "Approved, but the order did not go through: the webhook URL must not point at"
    )
    assert receiver.deliveries == []


@pytest.mark.parametrize(
    ("env", "said"),
    [
        ({"ORDER_DESTINATION": "webhook"}, "ORDER_WEBHOOK_URL and ORDER_WEBHOOK_SECRET"),
        ({"ORDER_WEBHOOK_URL": "http://hooks.example.com/x"}, "ORDER_WEBHOOK_URL is invalid"),
        ({"ORDER_WEBHOOK_SECRET": "short"}, "ORDER_WEBHOOK_SECRET is invalid"),
        ({"ORDER_DESTINATION": "email"}, "ORDER_DESTINATION is invalid"),
    ],
)
def test_a_webhook_configured_wrongly_fails_at_cold_start_naming_the_variable(
    env: dict[str, str], said: str
) -> None:
    base = {
        "SLACK_SIGNING_SECRET": "x" * 32,
        "SLACK_BOT_TOKEN": "xoxb-1",
        "CHECKPOINT_BUCKET": "bucket",
    }
    with pytest.raises(SettingsError, match=said):
        Settings.from_env({**base, **env})


@pytest.mark.parametrize(
    ("point", "deliveries"),
    [("order-before-call", 1), ("order-after-call", 2), ("order-recorded", 1)],
)
def test_an_approve_killed_around_the_webhook_delivers_at_least_once_with_one_key(
    served: World, receiver: Any, point: str, deliveries: int
) -> None:
    """Killed before the call: one delivery, by the retry. After the call and before the
    record: the outcome is unknown to the retry, which sends again with the same
    Idempotency-Key (two deliveries, one key: what a receiver dedupes). After the record: the
    retry shows it and sends nothing. The thread tells it once in every case."""
    world = served
    world.boot(LOCK_TTL_SECONDS=str(LEASE), **webhook_env(receiver))
    basket = start_basket(world)
    world.click(basket, "approve_basket")
    (lost,) = world.lam.take()
    world.in_fresh_process(lost.payload, crash_at=point)
    time.sleep(LEASE + 0.2)
    world.in_fresh_process(lost.payload)  # Lambda's retry
    assert receiver.counts() == {session_of(basket): deliveries}
    assert thread_texts(world, basket) == ["Ordered 10 items."]
    world.in_fresh_process(lost.payload)  # a third delivery: nothing more
    assert receiver.counts() == {session_of(basket): deliveries}
