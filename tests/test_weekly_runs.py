"""A workspace's weekly run: its one recurring EventBridge Scheduler schedule (moto), and its
firings through the real handler against the fake Slack.

moto implements CreateSchedule, UpdateSchedule, GetSchedule and DeleteSchedule but never fires a
schedule: a test reads the schedule the bot arranged and delivers its ``Input`` to the handler as
Scheduler would, with Scheduler's context attributes (``<aws.scheduler.scheduled-time>`` …)
replaced by the firing's values ("Adding context attributes in EventBridge Scheduler": e.g.
``2022-03-22T18:59:43Z``). Scheduler delivers at least once, and every delivery of one firing
carries the same scheduled time.
"""

from __future__ import annotations

import json
import secrets
import time
from datetime import UTC, datetime, timedelta
from typing import Any

import boto3
import pytest

from bot.records.weekly import (
    InvalidWeeklyRun,
    WeeklyRun,
    WeeklyScheduleError,
    WeeklySchedules,
    from_payload,
)
from bot.sandbox.anthropic_api import week_of
from bot.sandbox.aws_events import lost_run_record, sqs_event
from bot.sandbox.slack_events import event_callback
from bot.slack.payloads import session_id_for
from tests.bot_kit import SECRET, World, header, objects
from tests.test_installs import CLIENT_ID, CLIENT_SECRET, install
from tests.test_reminders import GROUP, ROLE, TARGET

WEEKLY = "C0WEEKLY"  # a channel the bot is in (the world's fake Slack)
RUN = WeeklyRun(WEEKLY, "sat", "09:30", "Europe/London", "dinners for four, we have rice")


@pytest.fixture
def weekly(world: World) -> World:
    """The world with the timers' schedule group in moto, and the bot told where it is."""
    boto3.client("scheduler", region_name="us-east-1").create_schedule_group(Name=GROUP)
    world.boot(TIMER_GROUP=GROUP, TIMER_TARGET_ARN=TARGET, TIMER_ROLE_ARN=ROLE)
    return world


@pytest.fixture
def many_weekly(world: World) -> World:
    """Many workspaces (Add to Slack), with the timers' group."""
    boto3.client("scheduler", region_name="us-east-1").create_schedule_group(Name=GROUP)
    world.slack.oauth.register_app(CLIENT_ID, CLIENT_SECRET)
    world.boot(
        SLACK_CLIENT_ID=CLIENT_ID,
        SLACK_CLIENT_SECRET=CLIENT_SECRET,
        SLACK_BOT_TOKEN="",
        TIMER_GROUP=GROUP,
        TIMER_TARGET_ARN=TARGET,
        TIMER_ROLE_ARN=ROLE,
    )
    return world


def schedules_of() -> WeeklySchedules:
    from bot.handler import cold_start

    rt, _ = cold_start()
    assert rt.schedules.weekly is not None
    return rt.schedules.weekly


def saved_and_arranged(team: str, run: WeeklyRun) -> None:
    """What saving a weekly run in the Settings modal leaves: the workspace's settings saying
    it (a firing the settings no longer ask for starts nothing), and its schedule."""
    from bot.handler import cold_start
    from bot.records.workspace_settings import WorkspaceSettings

    rt, _ = cold_start()
    store = rt.records.settings_store
    store.save(team, WorkspaceSettings(weekly=run), store.read(team).etag)
    schedules_of().arrange(team, run)


def schedules(client: Any = None) -> list[dict[str, Any]]:
    """Every schedule in the group, as Scheduler holds it."""
    client = client or boto3.client("scheduler", region_name="us-east-1")
    listed = client.list_schedules(GroupName=GROUP)["Schedules"]
    return [client.get_schedule(Name=s["Name"], GroupName=GROUP) for s in listed]


def scheduled_time(at: datetime) -> str:
    return at.strftime("%Y-%m-%dT%H:%M:%SZ")


def this_minute() -> datetime:
    return datetime.now(UTC).replace(second=0, microsecond=0)


def delivered(schedule: dict[str, Any], at: datetime | None = None) -> dict[str, Any]:
    """The schedule's Input as Scheduler invokes the function with it: each context attribute
    replaced by this firing's value (one execution ID per attempt; the same scheduled time)."""
    text = str(schedule["Target"]["Input"])
    for keyword, value in {
        "<aws.scheduler.schedule-arn>": str(schedule["Arn"]),
        "<aws.scheduler.scheduled-time>": scheduled_time(at or this_minute()),
        "<aws.scheduler.execution-id>": secrets.token_hex(8),
        "<aws.scheduler.attempt-number>": "1",
    }.items():
        text = text.replace(keyword, value)
    return dict(json.loads(text))


def baskets_in(world: World, channel: str = WEEKLY) -> list[dict[str, Any]]:
    return [m for m in world.slack.messages(channel) if header(m)]


# -- the schedule -------------------------------------------------------------------------------


def test_arrange_creates_the_workspaces_one_recurring_schedule(weekly: World) -> None:
    """Recurring: cron(minute hour ? * DAY *) read in the run's IANA zone (Scheduler keeps the
    wall-clock time across daylight saving), flexible window off, enabled; the target is this
    function through the timers' role, with a signed payload naming the workspace and asking
    Scheduler for the firing's scheduled time."""
    schedules_of().arrange("T0TEAM", RUN)

    (schedule,) = schedules()
    assert schedule["Name"] == "weekly-T0TEAM"
    assert schedule["ScheduleExpression"] == "cron(30 9 ? * SAT *)"
    assert schedule["ScheduleExpressionTimezone"] == "Europe/London"
    assert schedule["FlexibleTimeWindow"] == {"Mode": "OFF"}
    assert schedule["State"] == "ENABLED"
    assert schedule["Target"]["Arn"] == TARGET and schedule["Target"]["RoleArn"] == ROLE
    payload = json.loads(schedule["Target"]["Input"])
    assert payload["scheduled_time"] == "<aws.scheduler.scheduled-time>"
    assert json.loads(payload["weekly_shop_run"]) == {"team": "T0TEAM", **RUN.to_json()}
    firing = from_payload(delivered(schedule), schedules_of().key)
    assert (firing.team, firing.run) == ("T0TEAM", RUN)


def test_a_saved_change_updates_the_one_schedule(weekly: World) -> None:
    changed = WeeklyRun("C0SHOP", "sun", "18:05", "America/New_York", "tacos")
    schedules_of().arrange("T0TEAM", RUN)
    schedules_of().arrange("T0TEAM", changed)

    (schedule,) = schedules()
    assert schedule["ScheduleExpression"] == "cron(5 18 ? * SUN *)"
    assert schedule["ScheduleExpressionTimezone"] == "America/New_York"
    assert schedule["State"] == "ENABLED"  # UpdateSchedule replaces every field: said again
    assert from_payload(delivered(schedule), schedules_of().key).run == changed


def test_off_deletes_the_schedule_and_deleting_none_is_fine(weekly: World) -> None:
    schedules_of().arrange("T0TEAM", RUN)
    schedules_of().arrange("T0OTHER", RUN)
    schedules_of().arrange("T0TEAM", None)
    assert [s["Name"] for s in schedules()] == ["weekly-T0OTHER"]
    schedules_of().arrange("T0TEAM", None)  # already off
    assert schedules_of().delete("T0TEAM") is False
    assert [s["Name"] for s in schedules()] == ["weekly-T0OTHER"]


def test_a_scheduler_failure_is_a_weekly_schedule_error(weekly: World) -> None:
    """Scheduler answers 500 (after botocore's retries): the caller hears WeeklyScheduleError,
    and the schedule there is left as it was."""
    from botocore.exceptions import ClientError

    weekly_schedules = schedules_of()
    weekly_schedules.arrange("T0TEAM", RUN)

    def fail(**_: Any) -> None:
        raise ClientError(
            {"Error": {"Code": "InternalServerException"}, "ResponseMetadata": {}},
            "UpdateSchedule",
        )

    client = weekly_schedules.client
    client.meta.events.register("before-call.scheduler.UpdateSchedule", fail)
    try:
        with pytest.raises(WeeklyScheduleError, match="arrange schedule"):
            weekly_schedules.arrange("T0TEAM", WeeklyRun(WEEKLY, "mon", "07:00", "UTC", "x"))
    finally:
        client.meta.events.unregister("before-call.scheduler.UpdateSchedule", fail)
    (schedule,) = schedules()
    assert schedule["ScheduleExpression"] == "cron(30 9 ? * SAT *)"


def test_without_the_timer_settings_there_are_no_weekly_runs(world: World) -> None:
    from bot.handler import cold_start

    rt, _ = cold_start()
    assert rt.schedules.weekly is None
    payload = {"weekly_shop_run": "{}", "mac": "0" * 64, "scheduled_time": "x"}
    assert world.send(payload) == {"started": False}


# -- a firing -----------------------------------------------------------------------------------


def test_a_firing_starts_one_basket_in_its_channel_however_often_delivered(
    weekly: World,
) -> None:
    """Basket 1 of the standing request, in the run's channel, nobody's request; Scheduler's
    second delivery of the same firing (same scheduled time, another execution ID) starts
    nothing, and next week's firing starts next week's basket."""
    saved_and_arranged("T0TEAM", RUN)
    (schedule,) = schedules()
    at = this_minute()

    first = weekly.send(delivered(schedule, at))
    assert first == {
        "started": True,
        "session": session_id_for("weekly", "T0TEAM", str(int(at.timestamp()))),
    }
    (basket,) = baskets_in(weekly)
    assert header(basket) == "Basket 1 of 3"
    assert week_of(weekly.claude.requests[0]) == RUN.request
    assert baskets_in(weekly, "C0SHOP") == []

    again = weekly.send(delivered(schedule, at))
    assert again["session"] == first["session"]
    assert len(baskets_in(weekly)) == 1 and len(weekly.claude.requests) == 1

    next_week = weekly.send(delivered(schedule, at - timedelta(minutes=1)))
    assert next_week["session"] != first["session"]
    assert len(baskets_in(weekly)) == 2


def _forge_body(payload: dict[str, Any], **changes: str) -> dict[str, Any]:
    body = {**json.loads(payload["weekly_shop_run"]), **changes}
    return {**payload, "weekly_shop_run": json.dumps(body, sort_keys=True, separators=(",", ":"))}


@pytest.mark.parametrize(
    "forge",
    [
        pytest.param(lambda p: {**p, "mac": "0" * 64}, id="another MAC"),
        pytest.param(lambda p: _forge_body(p, request="champagne"), id="request altered"),
        pytest.param(lambda p: _forge_body(p, team="T0OTHER"), id="team altered"),
        pytest.param(lambda p: _forge_body(p, channel="C0SHOP"), id="channel altered"),
        pytest.param(lambda p: {**p, "extra": "1"}, id="a field added"),
        pytest.param(lambda p: {**p, "mac": "é" * 64}, id="a MAC not ASCII"),
        pytest.param(
            lambda p: {**p, "scheduled_time": "<aws.scheduler.scheduled-time>"},
            id="time not filled in",
        ),
        pytest.param(lambda p: {**p, "scheduled_time": "next saturday"}, id="time not a time"),
        pytest.param(
            lambda p: {**p, "scheduled_time": scheduled_time(this_minute() - timedelta(hours=3))},
            id="time past Scheduler's retries",
        ),
        pytest.param(
            lambda p: {**p, "scheduled_time": scheduled_time(this_minute() + timedelta(days=1))},
            id="time to come",
        ),
    ],
)
def test_a_forged_altered_or_stale_firing_starts_nothing(
    weekly: World, bucket: str, forge: Any
) -> None:
    """Dropped (logged), not raised: Lambda does not retry it; nothing is written or said."""
    saved_and_arranged("T0TEAM", RUN)
    (schedule,) = schedules()
    before = objects(weekly.s3, bucket)

    assert weekly.send(forge(delivered(schedule))) == {"started": False}

    assert objects(weekly.s3, bucket) == before
    assert weekly.slack.calls_to("chat.postMessage") == [] and weekly.claude.requests == []


def test_a_request_naming_a_context_attribute_is_not_rewritten_by_scheduler(
    weekly: World,
) -> None:
    """Scheduler replaces its keywords wherever they are in the Input; the signed run never
    holds a ``<``, so the request is started as it was saved."""
    odd = WeeklyRun(WEEKLY, "sat", "09:30", "UTC", "tacos <aws.scheduler.scheduled-time> <b>")
    saved_and_arranged("T0TEAM", odd)
    (schedule,) = schedules()
    assert "<" not in json.loads(schedule["Target"]["Input"])["weekly_shop_run"]

    assert weekly.send(delivered(schedule))["started"] is True
    assert week_of(weekly.claude.requests[0]) == odd.request


def test_the_longest_request_fits_lambdas_async_payload() -> None:
    """Scheduler's API sets no maximum on Target.Input (botocore's model: min 1); Lambda takes
    an asynchronous invocation's payload up to 256 KB. 3,000 characters that each escape to
    six stay far under it."""
    from bot.records.weekly import to_payload

    run = WeeklyRun(WEEKLY, "sat", "09:30", "UTC", '\u4e00\\"' * 1000)
    payload = json.dumps(to_payload("T0TEAM", run, b"k" * 32))
    assert len(payload.encode()) < 32 * 1024
    assert from_payload(json.loads(payload) | {"scheduled_time": "2026-01-03T09:30:00Z"}, b"k" * 32)


def test_a_firing_runs_in_a_fresh_process_as_scheduler_invokes_the_function(
    served: World,
) -> None:
    """The schedule arranged by one process, fired into a new interpreter that reads only the
    payload and S3; a second delivery, in another new one, starts nothing."""
    endpoint = served.env["AWS_ENDPOINT_URL"]
    client = boto3.client("scheduler", endpoint_url=endpoint, region_name="us-east-1")
    client.create_schedule_group(Name=GROUP)
    served.boot(TIMER_GROUP=GROUP, TIMER_TARGET_ARN=TARGET, TIMER_ROLE_ARN=ROLE)
    saved_and_arranged("T0TEAM", RUN)
    (schedule,) = schedules(client)
    at = this_minute()

    first = served.in_fresh_process(delivered(schedule, at))["response"]
    second = served.in_fresh_process(delivered(schedule, at))["response"]

    assert first["started"] is True and second["session"] == first["session"]
    assert len(baskets_in(served)) == 1


def test_a_weekly_run_lambda_gave_up_on_is_said_in_its_channel(weekly: World) -> None:
    saved_and_arranged("T0TEAM", RUN)
    (schedule,) = schedules()
    lost = sqs_event(lost_run_record(delivered(schedule), condition="RetriesExhausted"))

    assert weekly.send(lost) == {"batchItemFailures": []}
    said = [m["text"] for m in weekly.slack.messages(WEEKLY)]
    assert said == ["The weekly basket couldn't be written this time. Try /shop."]

    forged = _forge_body(delivered(schedule), channel="C0SHOP")
    weekly.send(sqs_event(lost_run_record(forged)))
    assert weekly.slack.messages("C0SHOP") == []


# -- many workspaces: a removed app ------------------------------------------------------------


def test_removing_the_app_deletes_its_weekly_run_and_a_late_firing_starts_nothing(
    many_weekly: World,
) -> None:
    world = many_weekly
    install(world, "T0TEAM")
    install(world, "T0OTHER")
    saved_and_arranged("T0TEAM", RUN)
    saved_and_arranged("T0OTHER", RUN)
    (theirs,) = [s for s in schedules() if s["Name"] == "weekly-T0OTHER"]

    world.send(event_callback(SECRET, {"type": "app_uninstalled"}, team_id="T0OTHER"))
    world.run_lazies()

    assert [s["Name"] for s in schedules()] == ["weekly-T0TEAM"]
    assert world.send(delivered(theirs)) == {"started": False}  # fired just before: dropped
    assert baskets_in(world) == []


def test_a_firing_for_a_workspace_without_the_app_starts_nothing(many_weekly: World) -> None:
    saved_and_arranged("T0NEVER", RUN)
    (schedule,) = schedules()
    assert many_weekly.send(delivered(schedule)) == {"started": False}
    assert many_weekly.slack.calls_to("chat.postMessage") == []


def test_a_late_removal_keeps_a_weekly_run_saved_after_the_reinstall(many_weekly: World) -> None:
    """Lambda retries a removal a minute or two later; the workspace installed the app again
    and saved a weekly run in between: the retry (an older event_time) keeps it."""
    world = many_weekly
    install(world, "T0TEAM")
    saved_and_arranged("T0TEAM", RUN)
    said = int(time.time()) - 120
    world.send(
        event_callback(SECRET, {"type": "app_uninstalled"}, team_id="T0TEAM", event_time=said)
    )
    world.run_lazies()
    assert [s["Name"] for s in schedules()] == ["weekly-T0TEAM"]


# -- the value ----------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("changes", "field", "says"),
    [
        ({"time": "25:00"}, "time", "HH:mm"),
        ({"time": "7pm"}, "time", "HH:mm"),
        ({"time": "9:30"}, "time", "HH:mm"),
        ({"timezone": "Mars/Olympus_Mons"}, "timezone", "IANA"),
        ({"timezone": "localtime"}, "timezone", "IANA"),
        ({"timezone": "../../etc/passwd"}, "timezone", "IANA"),
        ({"day": "funday"}, "day", "mon, tue"),
        ({"day": "Saturday"}, "day", "mon, tue"),
        ({"request": "x" * 5000}, "request", "5,000 characters; at most 3,000"),
        ({"request": "  \n "}, "request", "Write what"),
        ({"channel": ""}, "channel", "Choose a channel"),
        ({"channel": "#general"}, "channel", "not a channel ID"),
        ({"channel": 42}, "channel", "must be text"),
    ],
)
def test_a_bad_weekly_run_is_refused_naming_its_field(
    changes: dict[str, Any], field: str, says: str
) -> None:
    with pytest.raises(InvalidWeeklyRun, match=says) as refused:
        WeeklyRun(**{**RUN.to_json(), **changes})
    assert refused.value.field == field
    assert isinstance(refused.value, ValueError)


def test_a_weekly_run_survives_its_json_and_a_bad_one_is_refused() -> None:
    assert WeeklyRun.from_json(json.loads(json.dumps(RUN.to_json()))) == RUN
    assert WeeklyRun("C0WEEKLY", "mon", "00:00", "UTC", "x").cron() == "cron(0 0 ? * MON *)"
    assert WeeklyRun("C0WEEKLY", "sun", "23:59", "Etc/GMT+5", "x").cron() == (
        "cron(59 23 ? * SUN *)"
    )
    for bad, field in (
        ([], "weekly"),
        ({k: v for k, v in RUN.to_json().items() if k != "time"}, "time"),
        ({**RUN.to_json(), "when": "soon"}, "weekly"),
        ({**RUN.to_json(), "day": None}, "day"),
    ):
        with pytest.raises(InvalidWeeklyRun) as refused:
            WeeklyRun.from_json(bad)
        assert refused.value.field == field


def test_a_team_id_that_cannot_name_a_schedule_is_refused(weekly: World) -> None:
    with pytest.raises(ValueError, match="cannot name a schedule"):
        schedules_of().arrange("T0/../x", RUN)
    assert schedules() == []


def test_the_basket_timers_listed_are_not_the_weekly_runs_beside_them(weekly: World) -> None:
    """The sandbox's panel lists armed basket timers (ListSchedules with NamePrefix basket-):
    a weekly run in the same group is not one, and is never read as one."""
    from bot.handler import cold_start
    from tests.bot_kit import start_basket

    saved_and_arranged("T0TEAM", RUN)
    start_basket(weekly)
    rt, _ = cold_start()
    assert rt.schedules.timers is not None
    (timer,) = rt.schedules.timers.pending()
    assert timer.kind == "remind" and len(schedules()) == 2


def test_a_weekly_run_saved_in_the_settings_modal_is_scheduled_and_turned_off(
    weekly: World,
) -> None:
    """The Home tab's Settings: saving a weekly run creates the workspace's schedule (its day,
    time and time zone), its firing shops for the saved household; "No weekly basket" deletes
    it. The save's lazy run arranges it, after the ack."""
    from tests.settings_kit import number, open_settings, option, save, text

    weekly.slack.set_person("U0CAROL", is_admin=True)
    form = open_settings(weekly, "U0CAROL")
    assert form is not None
    answer = save(
        weekly,
        "U0CAROL",
        form,
        weekly_day=option("sat"),
        weekly_time={"selected_time": "09:30"},
        weekly_timezone=text("Europe/Paris"),
        weekly_channel={"selected_conversation": WEEKLY},
        weekly_request=text("dinners for the week"),
        people=number(3),
    )
    assert answer == {}
    (schedule,) = schedules()
    assert schedule["ScheduleExpression"] == "cron(30 9 ? * SAT *)"
    assert schedule["ScheduleExpressionTimezone"] == "Europe/Paris"
    weekly.send(delivered(schedule))
    (basket,) = baskets_in(weekly)
    (basket_timer,) = [s for s in schedules() if s["Name"].startswith("basket-")]
    assert "We are 3." in json.dumps(weekly.claude.requests[-1])

    again = open_settings(weekly, "U0CAROL")
    assert again is not None
    assert save(weekly, "U0CAROL", again, weekly_day=option("off")) == {}
    assert [s["Name"] for s in schedules() if s["Name"].startswith("weekly-")] == []
    assert [s["Name"] for s in schedules()] == [basket_timer["Name"]]  # the basket's own timer


def test_a_firing_the_saved_settings_no_longer_ask_for_starts_nothing(weekly: World) -> None:
    """Off was saved, but deleting the schedule failed (every retry of the save's lazy run):
    its next firing finds the settings say no weekly basket, starts nothing, and deletes it."""
    from botocore.exceptions import ClientError

    saved_and_arranged("T0TEAM", RUN)
    (schedule,) = schedules()
    weekly.slack.set_person("U0CAROL", is_admin=True)
    from tests.settings_kit import open_settings, option, save

    form = open_settings(weekly, "U0CAROL")
    assert form is not None

    def fail(**_: Any) -> None:
        raise ClientError(
            {"Error": {"Code": "InternalServerException"}, "ResponseMetadata": {}},
            "DeleteSchedule",
        )

    client = schedules_of().client
    client.meta.events.register("before-call.scheduler.DeleteSchedule", fail)
    try:
        assert save(weekly, "U0CAROL", form, weekly_day=option("off")) == {}
    finally:
        client.meta.events.unregister("before-call.scheduler.DeleteSchedule", fail)
    assert [s["Name"] for s in schedules()] == [schedule["Name"]]  # left behind
    assert weekly.send(delivered(schedule)) == {"started": False}
    assert baskets_in(weekly) == [] and schedules() == []
