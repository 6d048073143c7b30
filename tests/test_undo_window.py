"""The undo window (issue 22): the approval that completes a basket is held for ``ORDER_DELAY``
(2 minutes by default) with an Undo button; its order goes when its one-time Scheduler schedule
fires, unless an approver's Undo comes first and the approvals start again.

Through the real handler, moto's Scheduler (which never fires: each test delivers the schedule's
Input itself, as Scheduler would at its time, ``tests.test_reminders.fire``) and the fake Slack.
"""

from __future__ import annotations

import json
import time
from typing import Any

import boto3
import pytest

from bot.sandbox.world import CHANNEL, context_text
from tests.bot_kit import World, start_basket
from tests.fault_kit import ephemeral_texts, lock_keys, thread_texts
from tests.test_reminders import (
    GROUP,
    ROLE,
    TARGET,
    at,
    due_at,
    fire,
    scheduler_deletes,
    schedules,
    the_timer,
)

LEASE = 1.0


@pytest.fixture
def held(world: World) -> World:
    """Timers on, the default undo window (ORDER_DELAY unset: 2 minutes)."""
    boto3.client("scheduler", region_name="us-east-1").create_schedule_group(Name=GROUP)
    world.boot(TIMER_GROUP=GROUP, TIMER_TARGET_ARN=TARGET, TIMER_ROLE_ARN=ROLE)
    return world


def basket_now(world: World, basket: dict[str, Any]) -> dict[str, Any]:
    found = world.slack.message(CHANNEL, basket["ts"])
    assert found is not None
    return found


def approve_and_hold(world: World) -> tuple[dict[str, Any], dict[str, Any]]:
    """Basket 1, approved by Bob: held. (The basket as it shows now, the order timer's Input.)"""
    basket = start_basket(world)
    world.click(basket, "approve_basket", user="U0BOB")
    world.run_lazies()
    payload, timer = the_timer()
    assert timer["kind"] == "order"
    return basket_now(world, basket), payload


def test_an_approval_is_held_for_two_minutes_with_undo_then_ordered_when_its_timer_fires(
    held: World,
) -> None:
    """One-time schedule at the approval + ORDER_DELAY (default 120 s): the basket says when it
    will be ordered and offers Undo only; nothing is ordered until the schedule fires."""
    before = int(time.time())
    basket, payload = approve_and_hold(held)
    (schedule,) = schedules()
    due = json.loads(payload["weekly_shop_timer"])["at"]
    assert before + 120 <= due <= int(time.time()) + 120
    assert schedule["ScheduleExpression"] == at(due)
    assert "Approved by <@U0BOB> · ordering <!date^" in context_text(basket)
    assert list(held.buttons(basket)) == ["undo_order"]
    assert thread_texts(held, basket) == [] and held.slack.canvases == {}

    assert fire(held, payload) == {"fired": True, "kind": "order"}
    assert thread_texts(held, basket) == ["Ordered 10 items."]
    assert len(held.slack.canvases) == 1
    assert "Approved by <@U0BOB>" in context_text(basket_now(held, basket))
    assert held.buttons(basket_now(held, basket)) == {}
    assert schedules() == []
    fire(held, payload)  # Scheduler delivers at least once: a second firing orders nothing
    assert thread_texts(held, basket) == ["Ordered 10 items."] and len(held.slack.canvases) == 1


def test_undo_returns_the_basket_to_waiting_and_the_approvals_start_again(held: World) -> None:
    basket, payload = approve_and_hold(held)
    held.click(basket, "undo_order", user="U0CAROL")
    held.run_lazies()
    now = basket_now(held, basket)
    assert set(held.buttons(now)) == {
        "approve_basket",
        "reject_basket",
        "change_basket",
        "edit_basket",
    }
    assert "Approved by" not in context_text(now)
    (said,) = thread_texts(held, basket)
    assert said == (
        "Undo pressed by <@U0CAROL>: nothing was ordered, and the basket waits for approval again."
    )
    _, timer = the_timer()  # the order timer went; the basket's first reminder is armed
    assert timer["kind"] == "remind"
    fire(held, payload)  # the order timer, had Scheduler already fired it: nothing
    assert held.slack.canvases == {} and len(thread_texts(held, basket)) == 1
    held.click(now, "approve_basket", user="U0DAVE")  # approved afresh: held again
    held.run_lazies()
    assert list(held.buttons(basket_now(held, basket))) == ["undo_order"]


def test_clicks_on_a_held_basket_are_told_when_it_will_be_ordered(held: World) -> None:
    """A screen not yet updated still shows Approve, Reject and Change…: each is told the
    order's time and that Undo stops it, and nothing changes."""
    start = start_basket(held)
    basket, _ = approve_and_hold_from(held, start)
    for action in ("approve_basket", "reject_basket"):
        held.click(start, action, user="U0CAROL")
        held.run_lazies()
    told = ephemeral_texts(held, "U0CAROL")
    assert len(told) == 2 and all("will be ordered <!date^" in t for t in told)
    assert list(held.buttons(basket_now(held, basket))) == ["undo_order"]


def approve_and_hold_from(world: World, basket: dict[str, Any]) -> tuple[dict[str, Any], Any]:
    world.click(basket, "approve_basket", user="U0BOB")
    world.run_lazies()
    payload, _ = the_timer()
    return basket_now(world, basket), payload


def test_undo_after_the_order_went_says_so_and_changes_nothing(held: World) -> None:
    basket, payload = approve_and_hold(held)
    fire(held, payload)
    held.click(basket, "undo_order", user="U0CAROL")
    held.run_lazies()
    assert ephemeral_texts(held, "U0CAROL") == ["Too late to undo: this basket was ordered."]
    assert thread_texts(held, basket) == ["Ordered 10 items."] and len(held.slack.canvases) == 1


def test_only_an_approver_may_undo(held: World) -> None:
    held.boot(APPROVER_IDS="U0BOB,U0CAROL")
    basket, _ = approve_and_hold(held)
    held.click(basket, "undo_order", user="U0DAVE")
    held.run_lazies()
    assert ephemeral_texts(held, "U0DAVE")[-1].startswith("Only ")
    assert list(held.buttons(basket_now(held, basket))) == ["undo_order"]


def test_no_timers_configured_orders_at_once(world: World) -> None:
    """Where nothing could release a held order (no TIMER_GROUP: the console, a deploy without
    the timers' group), an approval orders at once, as before the undo window."""
    basket = start_basket(world)
    world.click(basket, "approve_basket", user="U0BOB")
    world.run_lazies()
    assert thread_texts(world, basket) == ["Ordered 10 items."]


def test_order_delay_zero_orders_at_once(held: World) -> None:
    held.boot(ORDER_DELAY="0")
    basket = start_basket(held)
    held.click(basket, "approve_basket", user="U0BOB")
    held.run_lazies()
    assert thread_texts(held, basket) == ["Ordered 10 items."]
    assert schedules() == []


def test_a_quorum_is_held_once_complete(held: World) -> None:
    held.boot(APPROVALS_NEEDED="2")
    basket = start_basket(held)
    held.click(basket, "approve_basket", user="U0BOB")
    held.run_lazies()
    assert "1 of 2 needed" in context_text(basket_now(held, basket))
    held.click(basket_now(held, basket), "approve_basket", user="U0CAROL")
    held.run_lazies()
    now = basket_now(held, basket)
    assert "Approved by <@U0BOB> and <@U0CAROL> · ordering" in context_text(now)
    payload, _ = the_timer()
    fire(held, payload)
    assert thread_texts(held, basket) == ["Ordered 10 items."]
    assert "Approved by <@U0BOB> and <@U0CAROL>" in context_text(basket_now(held, basket))
    assert lock_keys(held.s3, held.env["CHECKPOINT_BUCKET"]) == []


@pytest.mark.parametrize("point", ["order-before-call", "order-after-call", "order-recorded"])
def test_an_order_timer_killed_around_the_canvas_ends_with_one_canvas(
    served: World, point: str
) -> None:
    """New process, new process: the approval is held by one interpreter, the order timer's
    firing dies in another at each point of placing the order, and Lambda's retry of the same
    timer (a third) ends with one canvas and one "Ordered" reply."""
    world = served
    client = boto3.client(
        "scheduler", endpoint_url=world.env["AWS_ENDPOINT_URL"], region_name="us-east-1"
    )
    client.create_schedule_group(Name=GROUP)
    world.boot(
        TIMER_GROUP=GROUP, TIMER_TARGET_ARN=TARGET, TIMER_ROLE_ARN=ROLE, LOCK_TTL_SECONDS=str(LEASE)
    )
    world.shop()
    world.run_lazies(fresh_process=True)
    (basket,) = world.baskets()
    world.click(basket, "approve_basket", user="U0BOB")
    world.run_lazies(fresh_process=True)
    (listed,) = client.list_schedules(GroupName=GROUP)["Schedules"]
    payload = json.loads(
        client.get_schedule(Name=listed["Name"], GroupName=GROUP)["Target"]["Input"]
    )
    assert json.loads(payload["weekly_shop_timer"])["kind"] == "order"

    world.clock.reach(due_at(payload))  # the undo window is over
    world.in_fresh_process(payload, crash_at=point)
    time.sleep(LEASE + 0.2)
    assert world.in_fresh_process(payload)["response"] == {"fired": True, "kind": "order"}
    assert len(world.slack.canvases) == 1
    assert len(world.slack.calls_to("canvases.create")) == 1
    assert thread_texts(world, basket) == ["Ordered 10 items."]
    world.in_fresh_process(payload)  # Scheduler's at-least-once: a third delivery, nothing
    assert len(world.slack.canvases) == 1 and thread_texts(world, basket) == ["Ordered 10 items."]


def test_the_household_sets_its_undo_window_in_the_settings(held: World) -> None:
    """The Settings modal's "Undo window before ordering (minutes)": saved by the workspace's
    admin, the next approval is held that long (and 0 orders at once)."""
    from tests.settings_kit import number, open_settings, save

    held.slack.set_person("U0CAROL", is_admin=True)
    form = open_settings(held, "U0CAROL")
    assert form is not None
    (field,) = [b for b in form["blocks"] if b.get("block_id") == "order_delay"]
    assert field["element"]["initial_value"] == "2"  # the deploy's 2 minutes
    assert save(held, "U0CAROL", form, order_delay=number(10)) == {}
    before = int(time.time())
    approve_and_hold(held)
    _, timer = the_timer()
    assert before + 600 <= timer["at"] <= int(time.time()) + 600
    home = held.open_home("U0CAROL")
    assert home is not None and "*ordered* after a 10-minute undo window" in json.dumps(home)

    form = open_settings(held, "U0CAROL")
    assert form is not None and save(held, "U0CAROL", form, order_delay=number(0)) == {}
    basket = start_basket_again(held)
    held.click(basket, "approve_basket", user="U0BOB")
    held.run_lazies()
    assert thread_texts(held, basket) == ["Ordered 10 items."]


def start_basket_again(world: World) -> dict[str, Any]:
    world.shop("another week")
    world.run_lazies()
    return world.baskets()[-1]


def test_an_order_timer_delivered_before_its_time_orders_nothing_and_is_armed_again(
    held: World,
) -> None:
    """The order timer's payload is signed, but a signed payload can come early (a replay, or
    one sent by hand): two minutes before the undo window ends it orders nothing, the basket
    still offers Undo, and the schedule is there again for its time. At its time, it orders."""
    basket, payload = approve_and_hold(held)
    scheduler_deletes(payload)  # (as if this delivery were the schedule's own)
    response = held.send(payload)
    assert response["fired"] is False and 100 <= response["early_by"] <= 120
    assert thread_texts(held, basket) == [] and held.slack.canvases == {}
    assert list(held.buttons(basket_now(held, basket))) == ["undo_order"]
    (schedule,) = schedules()
    assert schedule["ScheduleExpression"] == at(due_at(payload))
    assert fire(held, payload) == {"fired": True, "kind": "order"}
    assert thread_texts(held, basket) == ["Ordered 10 items."]


def test_a_held_basket_says_approved_and_keeps_its_approval_time_once_ordered(
    held: World,
) -> None:
    """Issue 33, 5: the held basket says who approved it and when it is ordered, never
    "waiting for an answer" beside it; once its order goes (the bot's clock two minutes on),
    the answered basket shows when it was approved, not when the order went."""
    before = int(held.clock())
    basket, payload = approve_and_hold(held)
    after = int(held.clock())
    due = due_at(payload)
    shown = json.dumps(basket["blocks"])
    assert "waiting for an answer" not in shown
    assert f"Approved by <@U0BOB> · ordering <!date^{due}^" in context_text(basket)
    assert list(held.buttons(basket)) == ["undo_order"]
    approved_at = json.loads(payload["weekly_shop_timer"])["posted_at"]
    assert before <= approved_at <= after < due

    fire(held, payload)
    answered = context_text(basket_now(held, basket))
    assert f"Approved by <@U0BOB> · <!date^{approved_at}^" in answered
    assert f"<!date^{due}^" not in answered


def test_an_order_timer_armed_by_older_code_still_orders(held: World) -> None:
    """An order timer signed before it carried the approval time (its ``posted_at`` was its
    ``at``) still orders; the answered basket shows the time the order went, as it did."""
    from dataclasses import replace

    from bot.records.timers import from_payload, to_payload

    basket, payload = approve_and_hold(held)
    key = held_timer_key()
    timer = from_payload(payload, key)
    older = to_payload(replace(timer, posted_at=timer.at), key)
    assert fire(held, older) == {"fired": True, "kind": "order"}
    assert thread_texts(held, basket) == ["Ordered 10 items."]
    assert f"<!date^{timer.at}^" in context_text(basket_now(held, basket))


def held_timer_key() -> bytes:
    """The key the bot signs its timers with (the runtime's, as the handler built it)."""
    from bot.handler import cold_start

    rt, _ = cold_start()
    return rt.records.lasting_key(b"weekly-shop timer v1")
