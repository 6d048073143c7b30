"""A waiting basket's reminders and expiry, on EventBridge Scheduler (moto), through the handler.

moto implements the Scheduler API but never fires a schedule: each test reads the schedule the
bot created and delivers its ``Input`` to the handler itself, as Scheduler would at its time.
Scheduler delivers at least once (docs: "EventBridge Scheduler ... at-least-once delivery"), and a
Lambda target is invoked asynchronously, so Lambda's own retries follow a function error.
"""

from __future__ import annotations

import contextlib
import json
import time
from datetime import UTC, datetime
from typing import Any

import boto3
import pytest

from bot.records.timers import schedule_name
from bot.sandbox.aws_events import lost_run_record, sqs_event
from bot.sandbox.world import context_text
from bot.steps.reminders import BOT, TryLater
from tests.bot_kit import World, change, objects, start_basket
from tests.fault_kit import TENANT, ephemeral_texts, session_of, thread_texts
from workflow.persistence.s3_lock import S3SessionLock
from workflow.persistence.s3_store import S3CheckpointStore
from workflow.shop.records import SHOP_PREFIX, SHOP_RECORDS

GROUP = "weekly-shop-timers"
TARGET = "arn:aws:lambda:us-east-1:123456789012:function:weekly-shop-bot"
ROLE = "arn:aws:iam::123456789012:role/weekly-shop-scheduler"
HOUR = 3600


@pytest.fixture
def timed(world: World) -> World:
    """The world with timers: a schedule group in moto, and the bot told where it is; an
    approval orders at once (the undo window, ORDER_DELAY, is tests/test_undo_window.py's)."""
    boto3.client("scheduler", region_name="us-east-1").create_schedule_group(Name=GROUP)
    world.boot(TIMER_GROUP=GROUP, TIMER_TARGET_ARN=TARGET, TIMER_ROLE_ARN=ROLE, ORDER_DELAY="0")
    return world


def schedules() -> list[dict[str, Any]]:
    """Every schedule in the group, as Scheduler holds it."""
    client = boto3.client("scheduler", region_name="us-east-1")
    listed = client.list_schedules(GroupName=GROUP)["Schedules"]
    return [client.get_schedule(Name=s["Name"], GroupName=GROUP) for s in listed]


def the_timer() -> tuple[dict[str, Any], dict[str, Any]]:
    """The one armed schedule, and its payload's timer fields."""
    (schedule,) = schedules()
    payload = json.loads(schedule["Target"]["Input"])
    return payload, json.loads(payload["weekly_shop_timer"])


def at(epoch: int) -> str:
    return f"at({datetime.fromtimestamp(epoch, UTC).strftime('%Y-%m-%dT%H:%M:%S')})"


def posted_at() -> int:
    """When the bot posted the basket (its clock; the fake Slack's ts are not real times)."""
    return int(json.loads(the_timer()[0]["weekly_shop_timer"])["posted_at"])


def scheduler_deletes(payload: dict[str, Any]) -> None:
    """What ``ActionAfterCompletion: DELETE`` does once a schedule has fired (moto never fires,
    so never deletes): its schedule goes."""
    fields = json.loads(payload["weekly_shop_timer"])
    name = schedule_name(fields["tenant"], fields["session"], fields["request"], fields["slot"])
    client = boto3.client("scheduler", region_name="us-east-1")
    with contextlib.suppress(client.exceptions.ResourceNotFoundException):
        client.delete_schedule(Name=name, GroupName=GROUP)


def due_at(payload: dict[str, Any]) -> int:
    """When a timer's payload says it is due (its signed ``at``)."""
    return int(json.loads(payload["weekly_shop_timer"])["at"])


def fire(world: World, payload: dict[str, Any]) -> dict[str, Any]:
    """Scheduler's invocation at the schedule's time: the bot's clock moved there (as if the
    hours had passed), the schedule's Input, verbatim, as the event (and then the schedule is
    deleted)."""
    world.clock.reach(due_at(payload))
    scheduler_deletes(payload)
    return world.send(payload)


def latest_answer(world: World, bucket: str, session: str) -> dict[str, Any]:
    store = S3CheckpointStore(bucket, SHOP_PREFIX, s3_client=world.s3, codec=SHOP_RECORDS)
    record = store.latest(TENANT, session)
    assert record is not None
    answered = json.loads(record.state)["answered"]
    return dict(list(answered.values())[-1])


def test_a_posted_basket_arms_one_schedule_and_answering_it_deletes_it(timed: World) -> None:
    """One-time schedule: at(...) in UTC, flexible window off, deleted after it fires; the
    target is this function, through the scheduler's own role."""
    basket = start_basket(timed)
    (schedule,) = schedules()
    _, timer = the_timer()
    posted = posted_at()

    assert schedule["ScheduleExpression"] == at(posted + 6 * HOUR)
    assert schedule["FlexibleTimeWindow"] == {"Mode": "OFF"}
    assert schedule["ActionAfterCompletion"] == "DELETE"
    assert schedule["Target"]["Arn"] == TARGET and schedule["Target"]["RoleArn"] == ROLE
    assert (timer["kind"], timer["n"], timer["thread_ts"]) == ("remind", 1, basket["ts"])
    assert timer["session"] == session_of(timed, basket)

    timed.click(basket, "approve_basket")
    timed.run_lazies()
    assert thread_texts(timed, basket) == ["Ordered 10 items."]
    assert schedules() == []


def test_two_reminders_then_the_expiry_which_orders_nothing(timed: World, bucket: str) -> None:
    basket = start_basket(timed)
    posted = posted_at()
    value, session = timed.buttons(basket)["approve_basket"], session_of(timed, basket)

    first, timer = the_timer()
    assert fire(timed, first) == {"fired": True, "kind": "remind"}
    (reminder,) = thread_texts(timed, basket)
    assert reminder.startswith("<@U0ALICE> Basket 1 of 3 is still waiting for an answer.")
    assert f"<!date^{posted + 72 * HOUR}^" in reminder  # when it expires
    second, timer = the_timer()
    assert (timer["kind"], timer["n"]) == ("remind", 2)
    assert schedules()[0]["ScheduleExpression"] == at(posted + 12 * HOUR)

    fire(timed, second)
    assert len(thread_texts(timed, basket)) == 2
    expiry, timer = the_timer()
    assert (timer["kind"], timer["at"]) == ("expire", posted + 72 * HOUR)

    assert fire(timed, expiry) == {"fired": True, "kind": "expire"}
    (expired,) = timed.baskets()
    assert timed.buttons(expired) == {}
    assert "Expired — nothing ordered" in context_text(expired)
    assert thread_texts(timed, basket)[-1] == "No order placed: nobody answered in time"
    assert schedules() == []
    answered = latest_answer(timed, bucket, session)
    assert answered["by"] == BOT and answered["response"]["v"]["expired_at"] == posted + 72 * HOUR

    timed.click(basket, "approve_basket", value=value)  # from a screen not yet updated
    timed.run_lazies()
    (told,) = ephemeral_texts(timed, "U0BOB")
    assert told.startswith("This basket expired <!date^") and "nothing was ordered" in told
    assert thread_texts(timed, basket)[-1] == "No order placed: nobody answered in time"


def test_a_timer_delivered_twice_acts_once(timed: World) -> None:
    basket = start_basket(timed)
    reminder, _ = the_timer()
    fire(timed, reminder)
    fire(timed, reminder)  # at least once: the same payload again
    assert len(thread_texts(timed, basket)) == 1

    fire(timed, the_timer()[0])  # reminder 2
    expiry, _ = the_timer()
    fire(timed, expiry)
    fire(timed, expiry)
    said = thread_texts(timed, basket)
    assert said.count("No order placed: nobody answered in time") == 1 and len(said) == 3


def test_a_timer_after_the_basket_was_answered_does_nothing(timed: World, bucket: str) -> None:
    basket = start_basket(timed)
    reminder, _ = the_timer()
    timed.click(basket, "approve_basket")
    timed.run_lazies()
    before = objects(timed.s3, bucket)

    assert fire(timed, reminder) == {"fired": True, "kind": "remind"}

    assert thread_texts(timed, basket) == ["Ordered 10 items."]
    assert objects(timed.s3, bucket) == before and schedules() == []


def test_a_change_moves_the_timer_to_the_new_basket(timed: World) -> None:
    basket = start_basket(timed)
    old, _ = the_timer()
    change(timed, basket, "no fish")
    second = timed.baskets()[-1]
    _, timer = the_timer()
    assert timer["thread_ts"] == second["ts"] and timer["n"] == 1

    fire(timed, old)  # basket 1's reminder, delivered late: basket 1 is answered
    assert thread_texts(timed, basket) == [] and thread_texts(timed, second) == []


def test_reminders_mention_the_approvers_when_there_are_some(timed: World) -> None:
    timed.boot(APPROVER_IDS="U0CAROL,U0BOB")
    basket = start_basket(timed)
    fire(timed, the_timer()[0])
    (reminder,) = thread_texts(timed, basket)
    assert reminder.startswith("<@U0BOB> <@U0CAROL> Basket 1 of 3 is still waiting")


def test_a_reminder_of_a_quorum_names_the_approvers_who_have_not_approved_yet(
    timed: World,
) -> None:
    """A quorum of 2 of three approvers: once Bob approved, the basket is asked again (its
    timers re-armed for the request now pending), and its reminder mentions only Carol and
    Dave, and says how many more approvals it needs."""
    timed.boot(APPROVER_IDS="U0CAROL,U0BOB,U0DAVE", APPROVALS_NEEDED="2")
    basket = start_basket(timed)
    first, _ = the_timer()
    timed.click(basket, "approve_basket", user="U0BOB")
    timed.run_lazies()
    payload, timer = the_timer()
    assert timer["request"] != json.loads(first["weekly_shop_timer"])["request"]
    assert timer["request"] == json.loads(timed.buttons(timed.baskets()[0])["approve_basket"])["r"]

    assert fire(timed, payload) == {"fired": True, "kind": "remind"}
    (reminder,) = thread_texts(timed, basket)
    assert reminder.startswith(
        "<@U0CAROL> <@U0DAVE> Basket 1 of 3 is still waiting for 1 more approval "
        "(approved by <@U0BOB> so far). It expires "
    )


def test_a_reminder_of_a_quorum_with_no_approvers_says_how_many_more_it_needs(
    timed: World,
) -> None:
    timed.boot(APPROVALS_NEEDED="3")  # anyone in the channel: three different people
    basket = start_basket(timed)
    fire(timed, the_timer()[0])
    timed.click(timed.baskets()[0], "approve_basket", user="U0BOB")
    timed.run_lazies()
    fire(timed, the_timer()[0])
    first, second = thread_texts(timed, basket)
    assert first.startswith("<@U0ALICE> Basket 1 of 3 is still waiting for 3 more approvals.")
    assert second.startswith(
        "<@U0ALICE> Basket 1 of 3 is still waiting for 2 more approvals "
        "(approved by <@U0BOB> so far)."
    )


@pytest.mark.parametrize(
    "forge",
    [
        lambda p: {**p, "mac": "0" * 64},
        lambda p: {**p, "weekly_shop_timer": p["weekly_shop_timer"].replace("remind", "expire")},
        lambda p: {"weekly_shop_timer": "{}", "mac": p["mac"]},
        lambda p: {**p, "extra": 1},
    ],
)
def test_a_forged_timer_changes_nothing(timed: World, bucket: str, forge: Any) -> None:
    basket = start_basket(timed)
    payload, _ = the_timer()
    before = objects(timed.s3, bucket)

    assert timed.send(forge(payload)) == {"fired": False}

    assert thread_texts(timed, basket) == [] and objects(timed.s3, bucket) == before
    assert len(schedules()) == 1


def test_a_timer_that_finds_the_session_busy_fails_so_lambda_retries_it(
    timed: World, bucket: str
) -> None:
    """Someone is answering the basket right now: the reminder raises (Lambda's async retry
    delivers it again later), leaves the other holder's lock, and works on its retry. (A
    reminder a minute after posting: the played clock moves the bot's time, not S3's, and a
    lock's lease is read against when S3 wrote it, so the hours of the default would expire it.)"""
    timed.boot(REMIND_AFTER="1m")
    basket = start_basket(timed)
    reminder, timer = the_timer()
    timed.clock.reach(due_at(reminder))  # the reminder's time: Bob is answering then
    lock = S3SessionLock(bucket, SHOP_PREFIX, timed.s3, clock=timed.clock)
    lease = lock.acquire(TENANT, timer["session"], owner="U0BOB", ttl_seconds=30)

    with pytest.raises(TryLater, match="busy"):
        fire(timed, reminder)
    assert thread_texts(timed, basket) == []

    lock.release(lease)
    fire(timed, reminder)
    assert len(thread_texts(timed, basket)) == 1


def test_each_timer_runs_in_a_fresh_process_as_scheduler_invokes_the_function(
    served: World,
) -> None:
    """New process, new process: basket 1 is written, reminded and expired by three fresh
    interpreters, each reading only S3 and the schedule's payload."""
    world = served
    endpoint = world.env["AWS_ENDPOINT_URL"]
    client = boto3.client("scheduler", endpoint_url=endpoint, region_name="us-east-1")
    client.create_schedule_group(Name=GROUP)
    world.boot(TIMER_GROUP=GROUP, TIMER_TARGET_ARN=TARGET, TIMER_ROLE_ARN=ROLE)
    world.shop()
    world.run_lazies(fresh_process=True)
    (basket,) = world.baskets()

    def armed() -> dict[str, Any]:
        """The armed schedule's Input; then, as once it fired, the schedule goes."""
        (listed,) = client.list_schedules(GroupName=GROUP)["Schedules"]
        got = client.get_schedule(Name=listed["Name"], GroupName=GROUP)
        client.delete_schedule(Name=listed["Name"], GroupName=GROUP)
        return dict(json.loads(got["Target"]["Input"]))

    def at_its_time() -> dict[str, Any]:
        payload = armed()
        world.clock.reach(due_at(payload))
        return payload

    for _ in range(2):
        assert world.in_fresh_process(at_its_time())["response"] == {
            "fired": True,
            "kind": "remind",
        }
    assert world.in_fresh_process(at_its_time())["response"] == {"fired": True, "kind": "expire"}

    said = thread_texts(world, basket)
    assert len(said) == 3 and said[-1] == "No order placed: nobody answered in time"
    assert client.list_schedules(GroupName=GROUP)["Schedules"] == []


def test_a_timer_lambda_gave_up_on_is_armed_again_not_lost(timed: World) -> None:
    """Busy through every retry (or S3 down): Lambda's on-failure destination puts the timer in
    the lost-runs queue, and the function arms it again five minutes out; it then works."""

    basket = start_basket(timed)
    payload, timer = the_timer()
    scheduler_deletes(payload)  # it fired; Lambda failed it through every retry
    lost = sqs_event(lost_run_record(payload, condition="RetriesExhausted"))

    assert timed.send(lost) == {"batchItemFailures": []}

    again, rearmed = the_timer()
    assert (rearmed["kind"], rearmed["n"], rearmed["attempt"]) == ("remind", 1, 1)
    assert rearmed["at"] == timer["at"]  # still due when it was due...
    (schedule,) = schedules()
    soon = datetime.fromtimestamp(time.time() + 300, UTC).strftime("%Y-%m-%dT%H:%M")
    assert schedule["ScheduleExpression"].startswith(f"at({soon[:-1]}")  # ...fired 5 min out
    fire(timed, again)
    assert len(thread_texts(timed, basket)) == 1


def test_a_timer_lost_again_and_again_is_given_up_after_three_attempts(timed: World) -> None:

    start_basket(timed)
    payload, _ = the_timer()
    for attempt in (1, 2, 3):
        scheduler_deletes(payload)
        timed.send(sqs_event(lost_run_record(payload)))
        payload, fields = the_timer()
        assert fields["attempt"] == attempt
    scheduler_deletes(payload)
    timed.send(sqs_event(lost_run_record(payload)))
    assert schedules() == []  # logged and counted in LostLazyRuns, not armed forever


def test_a_lost_timer_that_is_not_ours_is_dropped(timed: World) -> None:

    start_basket(timed)
    payload, _ = the_timer()
    forged = {**payload, "mac": "0" * 64}
    assert timed.send(sqs_event(lost_run_record(forged))) == {"batchItemFailures": []}
    assert the_timer()[0] == payload  # the basket's own timer, untouched


def _failing(operation: str, when: Any = None) -> Any:
    """A botocore before-call hook that fails ``operation`` as AWS would with a 500."""
    from botocore.exceptions import ClientError

    def fail(params: dict[str, Any], **_: Any) -> None:
        if when is None or when(params):
            raise ClientError(
                {"Error": {"Code": "InternalError"}, "ResponseMetadata": {"HTTPStatusCode": 500}},
                operation,
            )

    return fail


def test_an_expiry_that_cannot_be_saved_fails_so_lambda_retries_it(timed: World) -> None:
    """S3 refuses the expiry's checkpoint: nothing is said, the basket still waits, and the
    invocation fails (Lambda retries it; its schedule is gone) — and the retry expires it."""
    basket = start_basket(timed)
    for _ in range(2):
        fire(timed, the_timer()[0])
    expiry, _ = the_timer()
    hook = _failing("PutObject", lambda p: "/cp/" in p.get("url_path", ""))
    timed.s3.meta.events.register("before-call.s3.PutObject", hook)
    try:
        with pytest.raises(TryLater, match="the expiry failed"):
            fire(timed, expiry)
    finally:
        timed.s3.meta.events.unregister("before-call.s3.PutObject", hook)
    assert timed.buttons(timed.baskets()[0])  # still waiting

    timed.send(expiry)  # Lambda's retry of the same event
    assert thread_texts(timed, basket)[-1] == "No order placed: nobody answered in time"


def test_a_change_whose_timer_could_not_be_deleted_still_arms_the_next_baskets(
    timed: World,
) -> None:
    """Each basket's schedules have names of their own: a stale one left behind by a failed
    delete fires for an answered basket and does nothing, and the new basket keeps its own."""
    from bot.handler import cold_start

    rt, _ = cold_start()
    assert rt.schedules.timers is not None
    client = rt.schedules.timers.client
    hook = _failing("DeleteSchedule")
    client.meta.events.register("before-call.scheduler.DeleteSchedule", hook)
    basket = start_basket(timed)
    try:
        change(timed, basket, "no fish")
    finally:
        client.meta.events.unregister("before-call.scheduler.DeleteSchedule", hook)
    second = timed.baskets()[-1]

    payloads = [json.loads(s["Target"]["Input"]) for s in schedules()]
    threads = sorted(json.loads(p["weekly_shop_timer"])["thread_ts"] for p in payloads)
    assert threads == sorted([basket["ts"], second["ts"]])
    for payload in payloads:
        fire(timed, payload)
    assert thread_texts(timed, basket) == []  # the stale one: nothing
    assert len(thread_texts(timed, second)) == 1  # basket 2's own reminder


def test_an_expiry_delivered_six_hours_early_expires_nothing_and_is_armed_again(
    timed: World, bucket: str
) -> None:
    """Scheduler delivers a one-time schedule at its time or after (flexible window off); an
    expiry that arrives 6 hours before its signed ``at`` (a replay, a payload sent by hand)
    changes no checkpoint, says nothing, and is armed again for its time."""
    basket = start_basket(timed)
    fire(timed, the_timer()[0])
    fire(timed, the_timer()[0])  # the two reminders; the expiry is next, at 72 h
    expiry, _ = the_timer()
    scheduler_deletes(expiry)
    timed.clock.reach(due_at(expiry) - 6 * HOUR)
    before, said = objects(timed.s3, bucket), thread_texts(timed, basket)
    response = timed.send(expiry)
    assert response["fired"] is False and 6 * HOUR - 60 <= response["early_by"] <= 6 * HOUR
    assert objects(timed.s3, bucket) == before and thread_texts(timed, basket) == said
    (schedule,) = schedules()
    assert schedule["ScheduleExpression"] == at(due_at(expiry))
    assert "approve_basket" in timed.buttons(timed.baskets()[0])
    assert fire(timed, expiry) == {"fired": True, "kind": "expire"}
    assert thread_texts(timed, basket)[-1] == "No order placed: nobody answered in time"
