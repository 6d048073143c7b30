"""A deploy while baskets wait: the graph changes under a basket posted by the code before it.

Every lazy run is a fresh interpreter (``python -m tests.lambda_invoke``), the ones after the
deploy running ``tests.shop_next_deploy``: version 6 of the graph has a ``check-basket``
executor between ``write-basket`` and the ``approve-basket`` port of version 5 (the current
code's), which drops an item listed twice. The basket the shopper writes here lists "2 bell
peppers" twice, so which graph wrote a basket shows in its items and in its progress line.
"""

from __future__ import annotations

import json
from concurrent.futures import ThreadPoolExecutor
from typing import Any

import pytest

from bot.sandbox.anthropic_api import DEFAULT_BASKET, Reply
from bot.slack.blocks import START_AGAIN
from bot.slack.outcome import RETIRED
from bot.steps.start import ALREADY_AGAIN, BEING_STARTED, STILL_WAITING
from tests import shop_next_deploy
from tests.bot_kit import CHANNEL, World, context_text, header
from tests.fault_kit import TENANT, ephemeral_texts, s3_of, session_of, thread_texts
from workflow.persistence.s3_store import S3CheckpointStore
from workflow.shop import graph
from workflow.shop.records import SHOP_PREFIX, SHOP_RECORDS

TWICE = DEFAULT_BASKET + "\n2 Bell peppers"  # 11 items; version 5 orders 10


def saved(world: World, session: str) -> dict[str, Any]:
    """The latest checkpoint document of ``session``, as S3 holds it."""
    store = S3CheckpointStore("bot-bucket", SHOP_PREFIX, s3_client=s3_of(world), codec=SHOP_RECORDS)
    record = store.latest(TENANT, session)
    assert record is not None
    doc: dict[str, Any] = json.loads(record.state)
    return doc


def keys(world: World) -> dict[str, str]:
    listed = s3_of(world).list_objects_v2(Bucket="bot-bucket").get("Contents", [])
    return {o["Key"]: o["ETag"] for o in listed}


def basket_on_v5(world: World) -> dict[str, Any]:
    """Basket 1, written and posted by the code as it is before the deploy (graph version 5)."""
    world.claude.script(Reply(text=TWICE))
    world.shop()
    world.run_lazies(fresh_process=True)
    (basket,) = world.baskets()
    assert "basket written" in context_text(basket)
    assert saved(world, session_of(world, basket))["workflow"] == {
        "name": "weekly-shop",
        "version": 5,
    }
    return basket


def test_a_basket_waiting_when_the_graph_changes_orders_on_the_graph_it_started_on(
    served: World,
) -> None:
    world = served
    basket = basket_on_v5(world)

    world.click(basket, "approve_basket")
    world.run_lazies(fresh_process=True, deploy="kept")

    assert thread_texts(world, basket) == ["Ordered 11 items."]  # version 5: nothing checked
    assert saved(world, session_of(world, basket))["workflow"]["version"] == 5
    world.claude.script(Reply(text=TWICE))
    world.shop(text="next week's dinners")
    world.run_lazies(fresh_process=True, deploy="kept")
    new = world.baskets()[-1]
    assert "basket checked: 1 dropped" in context_text(new)  # a new week starts on version 6
    assert saved(world, session_of(world, new))["workflow"]["version"] == 6


def test_a_declared_carry_moves_a_waiting_basket_onto_the_new_graph(served: World) -> None:
    world = served
    basket = basket_on_v5(world)

    world.click(basket, "change_basket")
    world.submit_change("add lemons")
    world.claude.script(Reply(text=TWICE + "\n3 lemons"))  # a change: an unchanged one re-asks
    world.run_lazies(fresh_process=True, deploy="carried")

    second = world.baskets()[-1]
    assert header(second) == "Basket 2 of 3"
    assert "basket checked: 1 dropped" in context_text(second)  # revised through version 6
    session = session_of(world, basket)
    assert saved(world, session)["workflow"]["version"] == 6
    world.click(second, "approve_basket")
    world.run_lazies(fresh_process=True, deploy="carried")
    assert thread_texts(world, second) == ["Ordered 11 items."]


def test_a_basket_whose_version_was_removed_starts_again_and_orders_once(served: World) -> None:
    world = served
    basket = basket_on_v5(world)
    old_session = session_of(world, basket)
    before = keys(world)

    world.click(basket, "approve_basket", user="U0BOB")
    world.run_lazies(fresh_process=True, deploy="removed")

    (said,) = world.slack.thread(CHANNEL, basket["ts"])
    assert said["text"] == RETIRED
    assert list(world.buttons(said)) == [START_AGAIN]
    retired = world.slack.message(CHANNEL, basket["ts"])
    assert retired is not None
    assert world.buttons(retired) == {}  # nobody answers the dead basket twice
    assert "No longer waiting" in context_text(retired)
    # Nothing written, no lock left; only its receipt goes: the basket waits on nothing now, so
    # the Home tab no longer lists it.
    receipt = f"weekly-shop/T0TEAM/s/{old_session}/shown"
    assert keys(world) == {k: v for k, v in before.items() if k != receipt}

    world.claude.script(Reply(text=TWICE))
    world.click(said, START_AGAIN, user="U0CAROL")
    world.run_lazies(fresh_process=True, deploy="removed")

    again = world.baskets()[-1]
    assert again["ts"] != basket["ts"] and header(again) == "Basket 1 of 3"
    assert "basket checked: 1 dropped" in context_text(again)  # the new graph wrote it
    assert "For <@U0ALICE>:" in context_text(again)  # the same week's request
    assert "dinners this week" in str(world.claude.requests[-1])
    (settled,) = world.slack.thread(CHANNEL, basket["ts"])
    assert world.buttons(settled) == {} and "<@U0CAROL> started this week again" in settled["text"]

    world.click(said, START_AGAIN, user="U0DAVE")  # a second press, from the stale message
    world.run_lazies(fresh_process=True, deploy="removed")
    assert ALREADY_AGAIN in ephemeral_texts(world, "U0DAVE")
    assert len(world.baskets()) == 2

    world.click(again, "approve_basket", user="U0BOB")
    world.run_lazies(fresh_process=True, deploy="removed")
    assert thread_texts(world, again) == ["Ordered 10 items."]
    assert session_of(world, again) != old_session
    assert not [k for k in keys(world) if k.endswith("/lock")]
    said_everywhere = [t for b in world.baskets() for t in thread_texts(world, b)]
    assert [t for t in said_everywhere if t.startswith("Ordered")] == ["Ordered 10 items."]


def test_two_presses_of_start_again_at_once_start_one_basket(served: World) -> None:
    """Both presses' lazy runs in fresh processes at the same time, the model slow: the lock
    names each press (its trigger ID), so the second press cannot take the first one's live
    lock over as if it were its retry; its presser is told the basket is on its way."""
    world = served
    basket = basket_on_v5(world)
    world.click(basket, "approve_basket", user="U0BOB")
    world.run_lazies(fresh_process=True, deploy="removed")
    (said,) = world.slack.thread(CHANNEL, basket["ts"])
    calls = world.claude.message_calls

    world.claude.script(Reply(text=TWICE, delay=4.0))
    world.click(said, START_AGAIN, user="U0CAROL")
    world.click(said, START_AGAIN, user="U0DAVE")
    lazies = world.lam.take()
    with ThreadPoolExecutor(2) as pool:
        list(pool.map(lambda i: world.in_fresh_process(i.payload, deploy="removed"), lazies))

    assert len(world.baskets()) == 2 and world.claude.message_calls == calls + 1
    told = ephemeral_texts(world, "U0CAROL") + ephemeral_texts(world, "U0DAVE")
    assert told in ([BEING_STARTED], [ALREADY_AGAIN])
    assert not [k for k in keys(world) if k.endswith("/lock")]


def test_a_retired_basket_answered_after_a_rollback_is_not_started_again(served: World) -> None:
    """Retired under the deploy that removed version 5, then answered under the code before it
    (a rollback, which still has version 5): the session moved on, so a later Start again
    (the deploy back) says the basket is gone and starts nothing."""
    world = served
    basket = basket_on_v5(world)
    value = world.buttons(basket)["approve_basket"]
    world.click(basket, "approve_basket", user="U0BOB")
    world.run_lazies(fresh_process=True, deploy="removed")
    (said,) = world.slack.thread(CHANNEL, basket["ts"])

    world.click(basket, "approve_basket", user="U0BOB", value=value)
    world.run_lazies(fresh_process=True)  # the rollback
    assert "Ordered 11 items." in thread_texts(world, basket)
    calls = world.claude.message_calls

    world.click(said, START_AGAIN, user="U0CAROL")
    world.run_lazies(fresh_process=True, deploy="removed")

    assert ephemeral_texts(world, "U0CAROL") == ["This basket is no longer waiting for an answer."]
    assert len(world.baskets()) == 1 and world.claude.message_calls == calls


def remove_v5(monkeypatch: pytest.MonkeyPatch) -> None:
    """From now on this process runs the deploy that removed versions 1 to 5."""
    monkeypatch.setattr(graph, "shop_versions", shop_next_deploy.removed)


def test_start_again_on_a_basket_that_can_still_be_answered_starts_nothing(
    world: World, monkeypatch: pytest.MonkeyPatch
) -> None:
    world.shop()
    world.run_lazies()
    (basket,) = world.baskets()
    value = world.buttons(basket)["approve_basket"]  # a Start again naming a live basket

    world.click(basket, START_AGAIN, value=value)
    world.run_lazies()

    assert STILL_WAITING in ephemeral_texts(world, "U0BOB")
    assert len(world.baskets()) == 1 and world.claude.message_calls == 1


@pytest.mark.parametrize(
    "value",
    [
        json.dumps({"s": "0" * 24, "r": "1" * 32}),  # no such session
        json.dumps({"s": "../../etc", "r": "x"}),  # not an ID
        "not json",
    ],
)
def test_a_forged_start_again_starts_nothing_and_says_why(
    world: World, monkeypatch: pytest.MonkeyPatch, value: str
) -> None:
    world.shop()
    world.run_lazies()
    (basket,) = world.baskets()
    remove_v5(monkeypatch)
    calls = world.claude.message_calls

    world.click(basket, START_AGAIN, value=value)
    world.run_lazies()

    assert ephemeral_texts(world, "U0BOB") == ["This basket is no longer waiting for an answer."]
    assert world.claude.message_calls == calls and len(world.baskets()) == 1


def test_only_an_approver_may_start_a_retired_basket_again(
    world: World, monkeypatch: pytest.MonkeyPatch
) -> None:
    world.boot(APPROVER_IDS="U0BOB")
    world.shop()
    world.run_lazies()
    (basket,) = world.baskets()
    remove_v5(monkeypatch)
    world.click(basket, "approve_basket", user="U0BOB")
    world.run_lazies()
    (said,) = world.slack.thread(CHANNEL, basket["ts"])

    world.click(said, START_AGAIN, user="U0CAROL")
    world.run_lazies()

    assert ephemeral_texts(world, "U0CAROL") == ["Only <@U0BOB> can answer baskets here."]
    assert len(world.baskets()) == 1
