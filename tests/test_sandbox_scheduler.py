"""The sandbox's EventBridge Scheduler (``bot.sandbox.scheduler_player``): the schedules the real
bot arms in moto are delivered when the played clock passes their time, with no Fast-forward.

What Scheduler does, as played here (its user guide, and Lambda's developer guide):

- "Schedule types": a one-time schedule is ``at(yyyy-mm-ddThh:mm:ss)`` in its
  ``ScheduleExpressionTimezone``; a cron one ``cron(minutes hours day-of-month month day-of-week
  year)`` read in that zone; daylight saving time keeps the wall-clock time (a time in the spring
  gap is skipped, one the autumn repeats runs once: re:Post, "EventBridge Scheduler and DST").
- "Deleting a schedule": with ``ActionAfterCompletion: DELETE``, a one-time schedule is deleted
  after it has invoked its target once.
- "Invoke a Lambda function on a schedule": Scheduler invokes the function asynchronously, with
  the target's ``Input`` as the event; "Adding context attributes": ``<aws.scheduler.scheduled-
  time>`` and the other keywords in it are replaced with the firing's values.
"""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Iterator
from datetime import UTC, datetime
from typing import Any
from zoneinfo import ZoneInfo

import boto3
import pytest
from botocore.exceptions import ClientError

from bot.records.weekly import WeeklyRun
from bot.sandbox.lambda_async import invoke_async
from bot.sandbox.schedule_times import at_time, cron_after
from bot.sandbox.scheduler_player import SchedulePlayer
from bot.sandbox.world import CHANNEL, context_text
from tests.bot_kit import World, header, start_basket
from tests.fault_kit import thread_texts
from tests.test_reminders import GROUP, ROLE, TARGET, schedules
from tests.test_weekly_runs import WEEKLY, saved_and_arranged


@pytest.fixture
def held(world: World) -> World:
    """Timers on, the default undo window (2 minutes)."""
    boto3.client("scheduler", region_name="us-east-1").create_schedule_group(Name=GROUP)
    world.boot(TIMER_GROUP=GROUP, TIMER_TARGET_ARN=TARGET, TIMER_ROLE_ARN=ROLE)
    return world


class Delivered:
    """The events the player delivered, each run through the real handler as an async
    invocation (``invoke_async``), with its lazy self-invocations after it."""

    def __init__(self, world: World) -> None:
        self.world = world
        self.events: list[dict[str, Any]] = []
        self.lock = threading.Lock()

    def __call__(self, event: dict[str, Any]) -> None:
        with self.lock:
            self.events.append(event)
            invoke_async(self.world.send, event)
            self.world.run_lazies()


def player_of(world: World, delivered: Delivered) -> SchedulePlayer:
    client = boto3.client("scheduler", region_name="us-east-1")
    return SchedulePlayer(client, GROUP, world.clock, delivered, target_arn=TARGET, interval=0.05)


@pytest.fixture
def playing(held: World) -> Iterator[tuple[World, Delivered, SchedulePlayer]]:
    delivered = Delivered(held)
    player = player_of(held, delivered).start()
    yield held, delivered, player
    player.stop()


def wait_until(check: Any, limit: float = 20.0) -> Any:
    """Poll ``check`` until it holds (a bound on waiting, not a timed assertion)."""
    deadline = time.monotonic() + limit
    while not (found := check()):
        assert time.monotonic() < deadline, "the condition never held"
        time.sleep(0.05)
    return found


def approve_and_hold(world: World) -> tuple[dict[str, Any], float]:
    """Basket 1 approved by Bob and held: the basket, and when its order schedule is due."""
    basket = start_basket(world)
    world.click(basket, "approve_basket", user="U0BOB")
    world.run_lazies()
    (schedule,) = schedules()
    assert schedule["ActionAfterCompletion"] == "DELETE"
    return basket, at_time(schedule["ScheduleExpression"], schedule["ScheduleExpressionTimezone"])


def now_of(world: World, basket: dict[str, Any]) -> dict[str, Any]:
    found = world.slack.message(CHANNEL, basket["ts"])
    assert found is not None
    return found


def test_a_held_order_is_delivered_once_the_played_clock_passes_it_then_deleted(
    playing: tuple[World, Delivered, SchedulePlayer],
) -> None:
    """No Fast-forward: the clock passes the order's time and the player delivers it."""
    world, delivered, player = playing
    basket, due = approve_and_hold(world)
    assert list(world.buttons(now_of(world, basket))) == ["undo_order"]

    world.clock.reach(due + 1)  # the undo window's two minutes pass
    # The player's thread says the order first and takes the Undo off after (the outbox's
    # order: new messages first, the basket's update last): wait for both.
    wait_until(
        lambda: (
            thread_texts(world, basket) == ["Ordered 10 items."]
            and world.buttons(now_of(world, basket)) == {}
        )  # the Undo is gone
    )
    assert "Approved by <@U0BOB>" in context_text(now_of(world, basket))
    assert schedules() == []  # ActionAfterCompletion: DELETE
    assert len(delivered.events) == 1 and "weekly_shop_timer" in delivered.events[0]
    player.wake()
    assert player.tick() == [] and len(delivered.events) == 1


def test_nothing_is_delivered_before_its_time(held: World) -> None:
    delivered = Delivered(held)
    player = player_of(held, delivered)  # not started: each pass is this test's
    basket, due = approve_and_hold(held)
    held.clock.reach(due - 30)
    assert player.tick() == []
    assert delivered.events == [] and len(schedules()) == 1
    assert list(held.buttons(now_of(held, basket))) == ["undo_order"]
    (upcoming,) = player.upcoming()
    assert (upcoming.at, upcoming.once) == (due, True)


def test_the_player_and_fast_forward_racing_deliver_it_once(held: World) -> None:
    """Fast-forward is a pass of its own after moving the clock: both run at once, from a
    barrier, beside the player's thread, and the order is delivered once."""
    delivered = Delivered(held)
    player = player_of(held, delivered)
    basket, due = approve_and_hold(held)
    held.clock.reach(due)
    start = threading.Barrier(4)
    results: list[list[str]] = []

    def one_pass() -> None:
        start.wait()
        results.append(player.tick())

    racers = [threading.Thread(target=one_pass) for _ in range(3)]
    for racer in racers:
        racer.start()
    player.start()
    start.wait()
    for racer in racers:
        racer.join()
    wait_until(lambda: thread_texts(held, basket))
    player.stop()
    assert len(delivered.events) == 1
    assert sum(len(r) for r in results) <= 1
    assert thread_texts(held, basket) == ["Ordered 10 items."]


def test_the_weekly_run_is_delivered_at_its_cron_time_and_next_week_after(held: World) -> None:
    """``cron(30 9 ? * SAT *)`` in Europe/London: the next Saturday 09:30 there; delivered then
    with its scheduled time filled in, the bot starts basket 1 in the run's channel; the
    schedule stays (recurring) and its next time is a week later."""
    run = WeeklyRun(WEEKLY, "sat", "09:30", "Europe/London", "dinners for four, we have rice")
    saved_and_arranged("T0TEAM", run)
    delivered = Delivered(held)
    player = player_of(held, delivered)
    (weekly,) = player.upcoming()
    first = weekly.at
    local = datetime.fromtimestamp(first, ZoneInfo("Europe/London"))
    assert (local.strftime("%a %H:%M"), weekly.once) == ("Sat 09:30", False)
    assert held.clock() < first <= held.clock() + 7 * 86400

    held.clock.reach(first - 60)
    assert player.tick() == []
    held.clock.reach(first + 5)
    assert player.tick() == ["weekly-T0TEAM"]
    (event,) = delivered.events
    assert event["scheduled_time"] == datetime.fromtimestamp(first, UTC).strftime(
        "%Y-%m-%dT%H:%M:%SZ"
    )
    (basket,) = [m for m in held.slack.messages(WEEKLY) if header(m)]
    assert header(basket) == "Basket 1 of 3"
    assert player.tick() == []  # once
    (again,) = [u for u in player.upcoming() if u.name == "weekly-T0TEAM"]
    assert again.at == cron_after("cron(30 9 ? * SAT *)", "Europe/London", first)
    assert again.at - first in (7 * 86400, 7 * 86400 - 3600, 7 * 86400 + 3600)
    assert "weekly-T0TEAM" in [s["Name"] for s in schedules()]  # beside basket 1's reminder


def test_cron_times_keep_the_wall_clock_across_daylight_saving() -> None:
    """09:30 in London on the Saturdays around the last Sunday of October (BST -> GMT); a time
    in the spring gap is skipped, a time the autumn repeats runs once."""
    london = ZoneInfo("Europe/London")

    def after(expression: str, when: datetime) -> datetime:
        found = cron_after(expression, "Europe/London", when.timestamp())
        assert found is not None
        return datetime.fromtimestamp(found, london)

    saturday = after("cron(30 9 ? * SAT *)", datetime(2027, 10, 20, tzinfo=UTC))
    assert saturday.isoformat() == "2027-10-23T09:30:00+01:00"
    assert after("cron(30 9 ? * SAT *)", saturday).isoformat() == "2027-10-30T09:30:00+01:00"
    assert after("cron(30 9 ? * 7 *)", saturday).isoformat() == "2027-10-30T09:30:00+01:00"
    gap = after("cron(30 1 * * ? *)", datetime(2027, 3, 27, 12, tzinfo=UTC))
    assert gap.isoformat() == "2027-03-29T01:30:00+01:00"  # 28 March 01:30 never happened
    repeated = after("cron(30 1 * * ? *)", datetime(2027, 10, 30, 12, tzinfo=UTC))
    assert after("cron(30 1 * * ? *)", repeated).date().isoformat() == "2027-11-01"


def test_a_schedule_for_another_target_is_not_delivered(held: World) -> None:
    client = boto3.client("scheduler", region_name="us-east-1")
    client.create_schedule(
        Name="someone-else",
        GroupName=GROUP,
        ScheduleExpression="at(2020-01-01T00:00:00)",
        FlexibleTimeWindow={"Mode": "OFF"},
        Target={"Arn": TARGET + "-other", "RoleArn": ROLE, "Input": json.dumps({"x": 1})},
    )
    delivered = Delivered(held)
    assert player_of(held, delivered).tick() == [] and delivered.events == []


class ThrottledOnce:
    """Scheduler's client, whose first DeleteSchedule is throttled (a ThrottlingException,
    which Scheduler answers when a caller goes past its request rate)."""

    def __init__(self) -> None:
        self.client = boto3.client("scheduler", region_name="us-east-1")
        self.throttled = False

    def __getattr__(self, name: str) -> Any:
        return getattr(self.client, name)

    def delete_schedule(self, **kwargs: Any) -> Any:
        if not self.throttled:
            self.throttled = True
            error = {"Error": {"Code": "ThrottlingException", "Message": "Rate exceeded"}}
            raise ClientError(error, "DeleteSchedule")  # type: ignore[arg-type]
        return self.client.delete_schedule(**kwargs)


def test_a_firing_whose_delete_failed_is_delivered_by_the_next_pass(held: World) -> None:
    """Cold review: the firing was claimed before its schedule was deleted, so a delete that
    failed left it claimed and never delivered (and Fast-forward waiting on it for ever)."""
    delivered = Delivered(held)
    client = ThrottledOnce()
    player = SchedulePlayer(client, GROUP, held.clock, delivered, target_arn=TARGET, interval=0.05)
    basket, due = approve_and_hold(held)
    held.clock.reach(due + 1)
    with pytest.raises(ClientError):
        player.tick()
    assert delivered.events == [] and len(schedules()) == 1
    assert len(player.tick()) == 1
    assert thread_texts(held, basket) == ["Ordered 10 items."] and schedules() == []
