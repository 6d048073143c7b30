"""A resume killed at each point in turn: once the lease passes, the next click (or Lambda's
retry of the lost invocation) brings the session right. Nothing lost, no order twice, no lock
left, and the baskets with live buttons are exactly the requests pending in the latest
checkpoint."""

from __future__ import annotations

import json
import time

import pytest

from bot.sandbox.anthropic_api import DEFAULT_BASKET, Reply
from tests.bot_kit import CHANNEL, World, context_text, header, start_basket
from tests.fault_kit import s3_of
from workflow.persistence.s3_store import S3CheckpointStore
from workflow.shop.executors import UNCHANGED
from workflow.shop.records import SHOP_PREFIX, SHOP_RECORDS

POINTS = [
    "lock-taken",
    "checkpoint-read",
    "model-call",
    "between-saves",
    "checkpoint-written",
    "posted",
]
LEASE = 1.0


def live_requests(world: World) -> set[str]:
    """Request IDs behind every button still on screen."""
    found = set()
    for message in world.slack.messages(CHANNEL):
        for value in world.buttons(message).values():
            found.add(json.loads(value)["r"])
    return found


def check_session(world: World, session: str) -> None:
    s3 = s3_of(world)
    store = S3CheckpointStore("bot-bucket", SHOP_PREFIX, s3_client=s3, codec=SHOP_RECORDS)
    keys = [o["Key"] for o in s3.list_objects_v2(Bucket="bot-bucket").get("Contents", [])]
    assert not [k for k in keys if k.endswith("/lock")], "a lock was left behind"
    chain = store.list("T0TEAM", session)
    assert [c.sequence for c in chain] == list(range(len(chain)))
    assert chain[0].parent_checkpoint_id is None
    assert all(
        c.parent_checkpoint_id == p.checkpoint_id for p, c in zip(chain, chain[1:], strict=False)
    )
    latest = store.latest("T0TEAM", session)
    assert latest is not None
    pending = {r["id"] for r in json.loads(latest.state)["requests"]}
    assert live_requests(world) == pending, "what Slack shows is not what is pending"
    orders = [
        r["text"]
        for m in world.slack.messages(CHANNEL)
        for r in world.slack.thread(CHANNEL, m["ts"])
        if r["text"].startswith("Ordered")
    ]
    assert len(orders) <= 1


@pytest.mark.parametrize("recovery", ["next click", "lambda retry"])
@pytest.mark.parametrize("point", POINTS)
def test_a_change_killed_at_each_point_recovers(served: World, point: str, recovery: str) -> None:
    world = served
    world.boot(LOCK_TTL_SECONDS=str(LEASE))
    basket = start_basket(world)
    approve_value = world.buttons(basket)["approve_basket"]
    session = json.loads(approve_value)["s"]

    world.click(basket, "change_basket")
    world.submit_change("no pizza")
    (lost,) = world.lam.take()
    world.in_fresh_process(lost.payload, crash_at=point)
    time.sleep(LEASE + 0.2)  # the dead process's lease passes

    if recovery == "lambda retry":
        world.in_fresh_process(lost.payload)
    else:
        world.click(basket, "approve_basket", value=approve_value)
        world.run_lazies(fresh_process=True)
    check_session(world, session)

    baskets = world.baskets()
    if point in ("lock-taken", "checkpoint-read", "model-call") and recovery == "next click":
        assert [header(b) for b in baskets] == ["Basket 1 of 3"]
        assert "Approved by <@U0BOB>" in context_text(baskets[0])
        assert world.slack.thread(CHANNEL, basket["ts"])[-1]["text"] == "Ordered 10 items."
    else:  # the change happened, before the crash or on the retry: basket 2 is live
        assert [header(b) for b in baskets] == ["Basket 1 of 3", "Basket 2 of 3"]
        assert "Change asked by <@U0BOB>: no pizza" in context_text(baskets[0])
        assert world.buttons(baskets[1])


def test_an_approve_killed_before_telling_slack_is_repaired_by_the_next_click(
    served: World,
) -> None:
    world = served
    world.boot(LOCK_TTL_SECONDS=str(LEASE))
    basket = start_basket(world)
    session = json.loads(world.buttons(basket)["approve_basket"])["s"]
    world.click(basket, "approve_basket")
    (lost,) = world.lam.take()
    world.in_fresh_process(lost.payload, crash_at="checkpoint-written")
    time.sleep(LEASE + 0.2)
    world.click(basket, "reject_basket", user="U0CAROL")  # the buttons are still there
    world.run_lazies(fresh_process=True)
    check_session(world, session)
    assert "Approved by <@U0BOB>" in context_text(world.baskets()[0])
    assert [m["text"] for m in world.slack.thread(CHANNEL, basket["ts"])] == ["Ordered 10 items."]
    world.click(basket, "reject_basket", user="U0CAROL")  # now it is only stale
    world.run_lazies()
    told = [e["text"] for e in world.slack.ephemerals("U0CAROL")]
    assert told == ["This basket was already answered by <@U0BOB>."]


def test_a_start_killed_before_posting_is_posted_by_the_retry(served: World) -> None:
    world = served
    world.boot(LOCK_TTL_SECONDS=str(LEASE))
    world.shop()
    (lost,) = world.lam.take()
    world.in_fresh_process(lost.payload, crash_at="checkpoint-written")
    assert world.baskets() == []
    time.sleep(LEASE + 0.2)  # the dead run's lease
    world.send(lost.payload)  # Lambda's retry
    (basket,) = world.baskets()
    assert header(basket) == "Basket 1 of 3"
    world.send(lost.payload)  # and a third delivery changes nothing
    assert len(world.baskets()) == 1
    assert world.claude.message_calls == 1


@pytest.mark.parametrize("point", ["checkpoint-written", "posted"])
def test_a_change_that_changed_nothing_killed_before_slack_heard_recovers(
    served: World, point: str
) -> None:
    """Issue 20: a change that changes nothing asks about the same basket again (a new request,
    the same round). Killed once that is saved, Lambda's retry catches up: the basket message
    keeps buttons for the request now pending, no second basket is posted."""
    world = served
    world.boot(LOCK_TTL_SECONDS=str(LEASE))
    basket = start_basket(world)
    session = json.loads(world.buttons(basket)["approve_basket"])["s"]
    world.click(basket, "change_basket")
    world.submit_change("maybe later")
    world.claude.script(Reply(text=DEFAULT_BASKET))  # basket 1 given back as it was
    (lost,) = world.lam.take()
    world.in_fresh_process(lost.payload, crash_at=point)
    time.sleep(LEASE + 0.2)
    world.in_fresh_process(lost.payload)
    check_session(world, session)
    (same,) = world.baskets()
    assert header(same) == "Basket 1 of 3" and world.buttons(same)
    assert UNCHANGED in [m["text"] for m in world.slack.thread(CHANNEL, basket["ts"])]
