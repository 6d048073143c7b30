"""A quorum: with ``APPROVALS_NEEDED`` (``Rules.approvals_needed``) above 1, a basket is ordered
once that many different people pressed Approve (issue 21, item 4).

Through the real handler, with S3 in moto and the fake Slack Web API (which refuses invalid
Block Kit: ``world.slack.violations``); where a resume must not depend on memory, every lazy run
is a fresh interpreter against a moto server (``served``). The approvals so far live in the
checkpoint (graph version 2's ``count-approval`` keeps the last approval counted in the shop's
state), so a new process, a crash or a deploy between two approvals loses none.
"""

from __future__ import annotations

import json
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from typing import Any

import pytest

from bench.common import RequestCounter
from bot.records.history import S3History, history_prefix
from bot.runtime import Runtime
from bot.sandbox.anthropic_api import DEFAULT_BASKET, Reply
from bot.settings import Settings, SettingsError
from bot.steps.click_said import BUSY, counted_text
from bot.steps.rules import Rules
from tests.bot_kit import CHANNEL, World, change, context_text, header, objects, start_basket
from tests.fault_kit import TENANT, ephemeral_texts, lock_keys, s3_of, session_of, thread_texts
from workflow.persistence.s3_store import S3CheckpointStore
from workflow.shop.executors import UNCHANGED
from workflow.shop.records import SHOP_PREFIX, SHOP_RECORDS

LEASE = 1.0


def shown(world: World) -> dict[str, Any]:
    """The basket message as Slack shows it now (the first basket of the channel)."""
    return world.baskets()[0]


def orders(world: World) -> list[str]:
    return [
        r["text"]
        for m in world.slack.messages(CHANNEL)
        for r in world.slack.thread(CHANNEL, m["ts"])
        if r["text"].startswith("Ordered")
    ]


def latest_doc(s3: Any, bucket: str, session: str) -> dict[str, Any]:
    store = S3CheckpointStore(bucket, SHOP_PREFIX, s3_client=s3, codec=SHOP_RECORDS)
    record = store.latest(TENANT, session)
    assert record is not None
    doc: dict[str, Any] = json.loads(record.state)
    return doc


def pending_ids(s3: Any, bucket: str, session: str) -> set[str]:
    return {r["id"] for r in latest_doc(s3, bucket, session)["requests"]}


def live_request(world: World) -> str:
    return str(json.loads(world.buttons(shown(world))["approve_basket"])["r"])


def test_a_quorum_of_two_orders_on_the_second_different_approver(
    world: World, s3: Any, bucket: str
) -> None:
    world.boot(APPROVALS_NEEDED="2")
    basket = start_basket(world)
    session = session_of(world, basket)

    world.click(basket, "approve_basket", user="U0BOB")
    world.run_lazies()
    now = shown(world)
    assert now["ts"] == basket["ts"] and header(now) == "Basket 1 of 3"  # the same message
    assert "Approved by <@U0BOB> · 1 of 2 needed" in context_text(now)
    assert set(world.buttons(now)) == {
        "approve_basket",
        "reject_basket",
        "change_basket",
        "edit_basket",
    }
    assert world.buttons(now) != world.buttons(basket)  # bound to the request now pending
    assert {live_request(world)} == pending_ids(s3, bucket, session)
    assert thread_texts(world, basket) == [] and orders(world) == []
    assert world.slack.violations == []

    before = objects(s3, bucket)
    world.click(now, "approve_basket", user="U0BOB")  # the same person again
    world.run_lazies()
    assert ephemeral_texts(world, "U0BOB") == [counted_text(1, 2)]
    assert counted_text(1, 2) == (
        "Your approval of this basket is already counted (1 of 2): 1 more approval needed."
    )
    assert objects(s3, bucket) == before  # nothing written, no lock left

    world.click(now, "approve_basket", user="U0CAROL")
    world.run_lazies()
    done = shown(world)
    assert thread_texts(world, basket) == ["Ordered 10 items."]
    assert world.buttons(done) == {}
    assert "Approved by <@U0BOB> and <@U0CAROL> · " in context_text(done)
    assert "1 of 2" not in context_text(done)
    assert lock_keys(s3, bucket) == []
    last = list(latest_doc(s3, bucket, session)["answered"].values())[-1]
    assert last["by"] == "U0CAROL"
    assert last["response"]["t"] == "BasketDecision@5"
    assert last["response"]["v"]["approvals"] == ["U0BOB", "U0CAROL"]
    assert last["response"]["v"]["needed"] == 2

    history = S3History(bucket, history_prefix(SHOP_PREFIX), s3, b"")
    (name,) = history.names(TENANT, 10)
    key = f"{history_prefix(SHOP_PREFIX)}{TENANT}/{name}"
    record = json.loads(s3.get_object(Bucket=bucket, Key=key)["Body"].read())["ended"]
    assert record["kind"] == "ordered" and record["answered_by"] == "U0CAROL"
    assert record["approved_by"] == ["U0BOB", "U0CAROL"]


def test_what_each_approval_of_a_quorum_costs_in_s3_requests(world: World, s3: Any) -> None:
    """The approval that completes a quorum costs what one approval always did (lock PUT, LIST
    and GET of the latest checkpoint, one checkpoint PUT, the outcome PUT, lock DELETE); one
    that leaves the basket short writes two checkpoints (counted, then asked again: a message to
    a request port is raised in the superstep after it is sent) and the receipt; an approval
    already counted writes nothing (the receipt GET: is the channel up to date?). Each also
    reads the workspace's settings: one GET a lazy run; the completing one also writes the
    order's record twice (placing, then placed: ``bot.orders.place``)."""
    world.boot(APPROVALS_NEEDED="2")
    basket = start_basket(world)
    counter = RequestCounter(s3)
    world.click(basket, "approve_basket", user="U0BOB")
    world.run_lazies()
    short = counter.take()
    assert sum(short.values()) == 7 + 1 and short["PutObject"] == 4, short
    world.click(shown(world), "approve_basket", user="U0BOB")
    world.run_lazies()
    again = counter.take()
    assert sum(again.values()) == 5 + 1 and again["PutObject"] == 1, again  # the lock's own
    world.click(shown(world), "approve_basket", user="U0CAROL")
    world.run_lazies()
    last = counter.take()
    assert sum(last.values()) == 6 + 1 + 2 and last["PutObject"] == 3 + 2, last
    assert orders(world) == ["Ordered 10 items."]


def test_with_one_approval_needed_an_order_names_one_approver_and_its_record_is_as_before(
    world: World, s3: Any, bucket: str
) -> None:
    """N = 1 behaves as before quorums: one approval orders, and the outcome record has no
    ``approved_by`` (so code from before quorums reads it)."""
    basket = start_basket(world)
    world.click(basket, "approve_basket", user="U0BOB")
    world.run_lazies()
    assert thread_texts(world, basket) == ["Ordered 10 items."]
    assert "Approved by <@U0BOB> · " in context_text(shown(world))
    (key,) = [k for k in objects(s3, bucket) if k.startswith(history_prefix(SHOP_PREFIX))]
    record = json.loads(s3.get_object(Bucket=bucket, Key=key)["Body"].read())["ended"]
    assert "approved_by" not in record and record["answered_by"] == "U0BOB"


def test_a_click_on_the_buttons_before_an_approval_was_counted_counts_for_the_basket(
    world: World,
) -> None:
    """A screen not yet updated (or a click sent while the first approval was being counted)
    presses buttons bound to the request the first approval answered: the click answers the
    request now pending for the same basket."""
    world.boot(APPROVALS_NEEDED="3")
    basket = start_basket(world)  # ``basket`` keeps the buttons as first posted
    world.click(basket, "approve_basket", user="U0BOB")
    world.run_lazies()
    world.click(basket, "approve_basket", user="U0CAROL")  # the old buttons
    world.run_lazies()
    assert "Approved by <@U0BOB> and <@U0CAROL> · 2 of 3 needed" in context_text(shown(world))
    world.click(basket, "approve_basket", user="U0BOB")  # old buttons, already counted
    world.run_lazies()
    assert ephemeral_texts(world, "U0BOB") == [counted_text(2, 3)]
    world.click(basket, "approve_basket", user="U0DAVE")
    world.run_lazies()
    assert orders(world) == ["Ordered 10 items."]
    assert "Approved by <@U0BOB>, <@U0CAROL> and <@U0DAVE> · " in context_text(shown(world))
    world.click(basket, "approve_basket", user="U0BOSS")  # too late: it is ordered
    world.run_lazies()
    assert ephemeral_texts(world, "U0BOSS") == ["This basket was already answered by <@U0DAVE>."]
    assert orders(world) == ["Ordered 10 items."]


@pytest.mark.parametrize("rejecter", ["U0BOB", "U0CAROL"])
def test_a_reject_from_either_approver_ends_it(world: World, rejecter: str) -> None:
    world.boot(APPROVER_IDS="U0BOB,U0CAROL", APPROVALS_NEEDED="2")
    basket = start_basket(world)
    world.click(basket, "approve_basket", user="U0BOB")
    world.run_lazies()
    world.click(shown(world), "reject_basket", user=rejecter)
    world.run_lazies()
    assert thread_texts(world, basket) == ["No order placed: rejected"]
    done = shown(world)
    assert world.buttons(done) == {} and f"Rejected by <@{rejecter}> · " in context_text(done)
    assert orders(world) == []


def test_a_change_from_any_approver_revises_the_basket_and_the_approvals_start_again(
    world: World,
) -> None:
    world.boot(APPROVALS_NEEDED="2")
    basket = start_basket(world)
    world.click(basket, "approve_basket", user="U0BOB")
    world.run_lazies()
    change(world, shown(world), "no pizza", user="U0CAROL")

    first, second = world.baskets()
    assert header(second) == "Basket 2 of 3"
    assert "Change asked by <@U0CAROL>:" in context_text(first) and not world.buttons(first)
    assert "Approved by" not in context_text(second)  # Bob's approval was of basket 1
    world.click(second, "approve_basket", user="U0BOB")
    world.run_lazies()
    assert "Approved by <@U0BOB> · 1 of 2 needed" in context_text(world.baskets()[1])
    assert orders(world) == []
    world.click(world.baskets()[1], "approve_basket", user="U0DAVE")
    world.run_lazies()
    assert thread_texts(world, second) == ["Ordered 7 items."]
    assert world.slack.violations == []


def test_a_change_that_changes_nothing_also_starts_the_approvals_again(world: World) -> None:
    world.boot(APPROVALS_NEEDED="2")
    basket = start_basket(world)
    world.click(basket, "approve_basket", user="U0BOB")
    world.run_lazies()
    world.claude.script(Reply(text=DEFAULT_BASKET))  # basket 1 given back as it was
    change(world, shown(world), "maybe later", user="U0CAROL")

    (same,) = world.baskets()
    assert thread_texts(world, basket) == [UNCHANGED]
    assert world.buttons(same) and "Approved by" not in context_text(same)
    world.click(same, "approve_basket", user="U0CAROL")
    world.run_lazies()
    assert "Approved by <@U0CAROL> · 1 of 2 needed" in context_text(shown(world))
    assert orders(world) == []


def test_approvals_given_in_two_fresh_processes_are_both_counted(served: World) -> None:
    """Each approval a new interpreter, as two Lambda invocations a day apart would be: the
    first approval is read back from the checkpoint, not from any memory."""
    world = served
    world.boot(APPROVALS_NEEDED="2")
    world.shop()
    world.run_lazies(fresh_process=True)
    (basket,) = world.baskets()

    world.click(basket, "approve_basket", user="U0BOB")
    world.run_lazies(fresh_process=True)
    assert "Approved by <@U0BOB> · 1 of 2 needed" in context_text(shown(world))
    world.click(shown(world), "approve_basket", user="U0CAROL")
    world.run_lazies(fresh_process=True)

    assert thread_texts(world, basket) == ["Ordered 10 items."]
    assert "Approved by <@U0BOB> and <@U0CAROL>" in context_text(shown(world))
    assert len(world.fresh) == 3


@pytest.mark.parametrize("point", ["between-saves", "checkpoint-written", "posted"])
def test_an_approval_killed_before_slack_heard_is_kept_and_shown_by_lambdas_retry(
    served: World, point: str
) -> None:
    """A first approval counts in two supersteps (counted, then the basket asked again): killed
    after the first, or before Slack was told, Lambda's retry of the same click finishes it and
    shows it, counting it once; the second approver then orders."""
    world = served
    world.boot(APPROVALS_NEEDED="2", LOCK_TTL_SECONDS=str(LEASE))
    basket = start_basket(world)
    session = session_of(world, basket)
    world.click(basket, "approve_basket", user="U0BOB")
    (lost,) = world.lam.take()
    world.in_fresh_process(lost.payload, crash_at=point)
    time.sleep(LEASE + 0.2)  # the dead run's lease passes
    world.in_fresh_process(lost.payload)  # Lambda's retry

    now = shown(world)
    assert "Approved by <@U0BOB> · 1 of 2 needed" in context_text(now)
    assert {live_request(world)} == pending_ids(s3_of(world), "bot-bucket", session)
    assert ephemeral_texts(world, "U0BOB") in ([], [counted_text(1, 2)])
    world.click(now, "approve_basket", user="U0CAROL")
    world.run_lazies(fresh_process=True)
    assert orders(world) == ["Ordered 10 items."]
    assert "Approved by <@U0BOB> and <@U0CAROL>" in context_text(shown(world))
    assert lock_keys(s3_of(world), "bot-bucket") == []


def test_two_approvers_pressing_at_once_in_two_fresh_processes_order_once(
    served: World,
) -> None:
    """The last approval a quorum needs, pressed by two people at the same moment: both lazy
    runs start together (a barrier) in two fresh interpreters, each slow once it holds the
    lock (3 s, longer than a fresh interpreter's start varies), so that the other meets it held;
    the session lock lets one order, and the other waits for it (LOCK_WAIT_SECONDS, 8 s) and
    then answers the basket as the first left it: told who answered, never a second order.
    Pressed again, the same."""
    world = served
    world.boot(APPROVALS_NEEDED="2")
    world.shop()
    world.run_lazies(fresh_process=True)
    (basket,) = world.baskets()
    world.click(basket, "approve_basket", user="U0BOB")
    world.run_lazies(fresh_process=True)

    now = shown(world)
    world.click(now, "approve_basket", user="U0CAROL")
    world.click(now, "approve_basket", user="U0DAVE")
    lazies = world.lam.take()
    assert len(lazies) == 2
    barrier = threading.Barrier(len(lazies), timeout=30)

    def deliver(payload: dict[str, Any]) -> dict[str, Any]:
        barrier.wait()
        return world.in_fresh_process(payload, hold_lock=3.0)

    with ThreadPoolExecutor(len(lazies)) as pool:
        list(pool.map(deliver, [i.payload for i in lazies]))

    assert orders(world) == ["Ordered 10 items."]
    (loser,) = [u for u in ("U0CAROL", "U0DAVE") if ephemeral_texts(world, u)]
    (winner,) = {"U0CAROL", "U0DAVE"} - {loser}
    already = f"This basket was already answered by <@{winner}>."
    assert ephemeral_texts(world, loser) == [already] and ephemeral_texts(world, winner) == []
    assert BUSY not in ephemeral_texts(world, loser)
    assert f"Approved by <@U0BOB> and <@{winner}> · " in context_text(shown(world))
    assert lock_keys(s3_of(world), "bot-bucket") == []

    world.click(now, "approve_basket", user=loser)  # pressed again
    world.run_lazies(fresh_process=True)
    assert ephemeral_texts(world, loser)[-1] == f"This basket was already answered by <@{winner}>."
    assert orders(world) == ["Ordered 10 items."]


def test_approvals_needed_is_checked_at_start_up() -> None:
    base = {"SLACK_SIGNING_SECRET": "s", "CHECKPOINT_BUCKET": "bucket", "SLACK_BOT_TOKEN": "t"}
    assert Settings.from_env(base).approvals_needed == 1
    assert Settings.from_env({**base, "APPROVALS_NEEDED": "2"}).approvals_needed == 2
    with pytest.raises(SettingsError, match="APPROVALS_NEEDED is invalid"):
        Settings.from_env({**base, "APPROVALS_NEEDED": "0"})
    with pytest.raises(SettingsError, match="APPROVALS_NEEDED is invalid: must be at most the 2"):
        Settings.from_env({**base, "APPROVER_IDS": "U0A,U0B", "APPROVALS_NEEDED": "3"})
    rules = Runtime.from_settings(Settings.from_env({**base, "APPROVALS_NEEDED": "2"})).rules
    assert rules.approvals_needed == 2


def test_a_quorum_never_asks_for_more_approvals_than_there_are_approvers() -> None:
    assert Rules().quorum == 1
    assert Rules(approvals_needed=3).quorum == 3  # anyone in the channel: three people
    assert Rules(frozenset({"U0A", "U0B"}), approvals_needed=3).quorum == 2
    assert Rules(approvals_needed=0).quorum == 1
