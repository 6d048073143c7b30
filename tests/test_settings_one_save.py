"""One Settings save does all it was given (issue 33, items 7 and 8): every problem of a
submission is shown at once, a save with a key arranges the weekly basket too, the Home tab
shows the new settings right after, and the key travels to no lazy run, log or lost-runs
record.

Through the real handler (signed ``view_submission`` events), moto (S3, SSM, KMS, Scheduler)
and the fake Web API. Slack facts this relies on:

- A ``view_submission`` is answered in the ack, within 3 seconds; an ack of
  ``{"response_action": "errors", "errors": {<block_id>: <message>, ...}}`` keeps the modal open
  with each message under its block, all of them at once (docs.slack.dev, "Handling and
  responding to interactions"; bolt-js ``ViewErrorsResponseAction``: ``errors`` is an object
  keyed by block ID).
- Bolt's Lambda lazy runner invokes the function again, asynchronously, with the whole request
  event as the payload (``LambdaLazyListenerRunner.start``: ``Payload=json.dumps(event)``), and
  Lambda's on-failure destination puts that payload in the lost-runs record
  (``requestPayload``): a key left in the submission would travel to both.
- ``views.publish`` replaces a person's Home tab (a view of ``type: home``, at most 100 blocks,
  ``private_metadata`` at most 3,000 characters).
"""

from __future__ import annotations

import io
import json
import logging
from typing import Any

import boto3
import pytest

from bot.sandbox.aws_events import lost_run_record, sqs_event
from tests.bot_kit import CHANNEL, World
from tests.settings_kit import open_settings, option, text
from tests.test_reminders import GROUP, ROLE, TARGET
from tests.test_settings import saved

TENANT = "T0TEAM"
PATH = "/weekly-shop/test/workspaces"
KEY = "ic-dev-one-save-0123456789"
PARAMETER = f"{PATH}/{TENANT}/instacart-api-key"
WEEKLY = {
    "weekly_day": option("sat"),
    "weekly_time": {"selected_time": "09:30"},
    "weekly_timezone": text("Europe/London"),
    "weekly_channel": {"selected_conversation": CHANNEL},
    "weekly_request": text("dinners for four, we have rice"),
}


@pytest.fixture
def carol(world: World) -> World:
    """Carol, a workspace admin; the workspaces' keys kept in SSM (moto's KMS); the weekly
    run's schedule group in moto's Scheduler."""
    world.slack.set_person("U0CAROL", is_admin=True, tz="Europe/London")
    arn = str(boto3.client("kms").create_key(Description="weekly-shop keys")["KeyMetadata"]["Arn"])
    boto3.client("scheduler", region_name="us-east-1").create_schedule_group(Name=GROUP)
    world.boot(
        WORKSPACE_SECRETS_PATH=PATH,
        WORKSPACE_SECRETS_KEY=arn,
        TIMER_GROUP=GROUP,
        TIMER_TARGET_ARN=TARGET,
        TIMER_ROLE_ARN=ROLE,
    )
    return world


def weekly_schedules() -> list[dict[str, Any]]:
    client = boto3.client("scheduler", region_name="us-east-1")
    listed = client.list_schedules(GroupName=GROUP)["Schedules"]
    return [client.get_schedule(Name=s["Name"], GroupName=GROUP) for s in listed]


def submit(world: World, user: str, view: dict[str, Any], **changes: Any) -> dict[str, Any]:
    """:func:`tests.settings_kit.save`, keeping the lazy invocations for the test to read."""
    from bot.sandbox.slack_requests import view_submission
    from bot.slack.settings_form import SETTINGS_MODAL
    from tests.bot_kit import SECRET
    from tests.settings_kit import submitted

    ack = world.send(
        view_submission(
            SECRET,
            callback_id=SETTINGS_MODAL,
            private_metadata=view["private_metadata"],
            values=submitted(view, **changes),
            user_id=user,
        )
    )
    assert ack["statusCode"] == 200, ack
    return json.loads(ack["body"]) if ack.get("body") else {}


def test_one_save_keeps_the_key_arranges_the_weekly_basket_and_shows_it_on_home(
    carol: World, s3: Any, bucket: str
) -> None:
    """Instacart chosen, its key typed and a weekly basket set, in one save: the key is in
    SSM, the weekly schedule is armed, and Carol's Home tab (published by the save's lazy run,
    through the fake ``views.publish``) shows the new settings without being opened again. The
    lazy run's payload, and so the lost-runs record Lambda would write of it, has no key; its
    body is signed again, so the lazy run and the lost-runs queue both still verify it."""
    out = io.StringIO()
    handler = logging.StreamHandler(out)
    root = logging.getLogger()
    root.addHandler(handler)
    level, root.level = root.level, logging.DEBUG
    try:
        carol.open_home("U0CAROL")  # the tab as it was: the deploy's settings
        form = open_settings(carol, "U0CAROL")
        assert form is not None
        answer = submit(
            carol,
            "U0CAROL",
            form,
            destination=option("instacart"),
            instacart_key=text(KEY),
            **WEEKLY,
        )
        assert answer == {}  # saved: the modal closes
        lazies = carol.lam.take()
        assert [i.payload["headers"]["x-slack-bolt-lazy-function-name"] for i in lazies] == [
            "settle_settings"
        ]
        for lazy in lazies:
            assert KEY not in json.dumps(lazy.payload)
            assert KEY not in json.dumps(lost_run_record(lazy.payload))
        responses = [carol.send(i.payload) for i in lazies]
    finally:
        root.removeHandler(handler)
        root.level = level
    assert [r["statusCode"] for r in responses] == [200]  # the re-signed body verified
    # Had it failed every retry, its record in the lost-runs queue (which checks the signature
    # as Slack's, bot.steps.lost) verifies too.
    from slack_sdk.signature import SignatureVerifier

    from tests.bot_kit import SECRET

    headers = lazies[0].payload["headers"]
    assert SignatureVerifier(SECRET).is_valid(
        lazies[0].payload["body"],
        headers["x-slack-request-timestamp"],
        headers["x-slack-signature"],
    )
    assert carol.send(sqs_event(lost_run_record(lazies[0].payload))) == {"batchItemFailures": []}
    assert KEY not in out.getvalue() and "settle_settings" in out.getvalue()
    stored = boto3.client("ssm").get_parameter(Name=PARAMETER, WithDecryption=True)
    assert stored["Parameter"]["Value"] == KEY
    doc = saved(s3, bucket)
    assert doc is not None and doc["settings"]["weekly"]["day"] == "sat"
    assert doc["settings"]["orders"]["destination"] == "instacart"
    (schedule,) = weekly_schedules()
    assert schedule["ScheduleExpression"] == "cron(30 9 ? * SAT *)"
    assert schedule["ScheduleExpressionTimezone"] == "Europe/London"
    home = json.dumps(carol.slack.home("U0CAROL"))  # what views.publish last put there
    assert "Saturdays at 09:30 (Europe/London)" in home
    assert "an Instacart shopping-list page" in home
    assert KEY not in home


def test_every_problem_of_a_save_with_a_key_and_a_weekly_basket_is_said_at_once(
    carol: World, s3: Any, bucket: str
) -> None:
    """The issue's save: a key and a weekly basket with several fields wrong. One ack says all
    of it (the form's own checks, the weekly run's every field, the key's shape, and what Slack
    says of a person named), nothing is saved; the same form put right saves all of it."""
    from bot.steps.settings_checks import NOT_HERE
    from tests.settings_kit import number, users

    form = open_settings(carol, "U0CAROL")
    assert form is not None
    answer = submit(
        carol,
        "U0CAROL",
        form,
        destination=option("instacart"),
        instacart_key=text("a key"),
        approvals=number(2),
        admins=users("U0GHOST"),
        weekly_day=option("sat"),
        weekly_time={"selected_time": None},
        weekly_timezone=text("Mars/Olympus"),
        weekly_channel={"selected_conversation": None},
        weekly_request=text("  "),
    )
    assert answer["response_action"] == "errors"
    assert sorted(answer["errors"]) == [
        "admins",
        "approvals",
        "instacart_key",
        "weekly_channel",
        "weekly_request",
        "weekly_time",
        "weekly_timezone",
    ]
    assert answer["errors"]["admins"] == f"U0GHOST: {NOT_HERE}"
    assert "'Mars/Olympus' is not one" in answer["errors"]["weekly_timezone"]
    assert saved(s3, bucket) is None and weekly_schedules() == []
    carol.lam.take()

    answer = submit(
        carol,
        "U0CAROL",
        form,
        destination=option("instacart"),
        instacart_key=text(KEY),
        admins=users("U0CAROL"),
        **WEEKLY,
    )
    assert answer == {}
    carol.run_lazies()
    stored = boto3.client("ssm").get_parameter(Name=PARAMETER, WithDecryption=True)
    assert stored["Parameter"]["Value"] == KEY
    (schedule,) = weekly_schedules()
    assert schedule["ScheduleExpression"] == "cron(30 9 ? * SAT *)"
    doc = saved(s3, bucket)
    assert doc is not None and doc["settings"]["admins"] == ["U0CAROL"]


def test_a_channel_the_bot_is_not_in_is_said_with_the_forms_own_problems(carol: World) -> None:
    """Slack is asked about the weekly channel even when another field is wrong."""
    from bot.steps.settings_checks import INVITE

    form = open_settings(carol, "U0CAROL")
    assert form is not None
    answer = submit(
        carol,
        "U0CAROL",
        form,
        **{
            **WEEKLY,
            "weekly_channel": {"selected_conversation": "C0ELSEWHERE"},
            "weekly_timezone": text("Nowhere"),
        },
    )
    assert answer["errors"]["weekly_channel"] == INVITE
    assert "weekly_timezone" in answer["errors"]


def test_no_weekly_basket_keeps_its_time_zone_channel_and_request_for_later(
    carol: World, s3: Any, bucket: str
) -> None:
    """Choosing "No weekly basket" switches the run off (its schedule is deleted) and keeps what its
    fields held: the form opened again shows them, and choosing a day is all it takes to
    switch it on again."""
    form = open_settings(carol, "U0CAROL")
    assert form is not None
    assert submit(carol, "U0CAROL", form, **WEEKLY) == {}
    carol.run_lazies()
    assert len(weekly_schedules()) == 1
    form = open_settings(carol, "U0CAROL")
    assert form is not None
    assert submit(carol, "U0CAROL", form, weekly_day=option("off")) == {}
    carol.run_lazies()
    assert weekly_schedules() == []
    doc = saved(s3, bucket)
    assert doc is not None and doc["settings"]["weekly"] is None
    assert doc["settings"]["changes"][0]["what"] == "weekly basket"
    # (beside the body, under a MAC of its own: older code reads the document as before)
    assert doc["kept"] == {
        "channel": CHANNEL,
        "time": "09:30",
        "timezone": "Europe/London",
        "request": "dinners for four, we have rice",
    }
    again = open_settings(carol, "U0CAROL")
    assert again is not None
    by_id = {b["block_id"]: b["element"] for b in again["blocks"] if b["type"] == "input"}
    assert by_id["weekly_day"]["initial_option"]["value"] == "off"
    assert by_id["weekly_time"]["initial_time"] == "09:30"
    assert by_id["weekly_timezone"]["initial_value"] == "Europe/London"
    assert by_id["weekly_channel"]["initial_conversation"] == CHANNEL
    assert by_id["weekly_request"]["initial_value"] == "dinners for four, we have rice"
    assert "Weekly basket:* off" in json.dumps(carol.slack.home("U0CAROL"))
    assert submit(carol, "U0CAROL", again, weekly_day=option("sun")) == {}
    carol.run_lazies()
    (schedule,) = weekly_schedules()
    assert schedule["ScheduleExpression"] == "cron(30 9 ? * SUN *)"
    doc = saved(s3, bucket)
    assert doc is not None and "kept" not in doc
    assert doc["settings"]["weekly"]["request"] == "dinners for four, we have rice"


def test_who_can_change_the_settings_is_said_truly_and_each_change_has_its_line(
    carol: World,
) -> None:
    """With no household admins named, the Home tab does not say "none" as if nobody could
    save (Carol, a workspace admin, can); a member's read-only view says whom to ask; the form's
    hint places the admins where they are (it sits under their own input); the change log
    keeps one change a line (a section keeps its line breaks; the context it replaced ran
    them together where drawn without them)."""
    form = open_settings(carol, "U0CAROL")
    assert form is not None
    home = json.dumps(carol.open_home("U0BOB"))
    assert "Household admins:* none named, so the workspace's owners and admins" in home
    (admins,) = [b for b in form["blocks"] if b.get("block_id") == "admins"]
    assert "named below" not in admins["hint"]["text"]
    assert admins["hint"]["text"].startswith("The people chosen here can change these settings")
    seen = open_settings(carol, "U0BOB")
    assert seen is not None and "submit" not in seen
    said = json.dumps(seen["blocks"])
    assert "only the workspace's owners and admins can change these" in said
    assert "ask one of them" in said
    assert submit(carol, "U0CAROL", form, admins={"selected_users": ["U0CAROL"]}) == {}
    carol.lam.take()
    form = open_settings(carol, "U0CAROL")
    assert form is not None
    assert submit(carol, "U0CAROL", form, people={"value": "4"}) == {}
    carol.run_lazies()
    seen = open_settings(carol, "U0BOB")
    assert seen is not None
    assert "<@U0CAROL> (household admins), the workspace's owners and admins" in json.dumps(
        seen["blocks"]
    )
    blocks = (carol.slack.home("U0CAROL") or {})["blocks"]
    (log,) = [b for b in blocks if "changed" in json.dumps(b)]
    assert log["type"] == "section"
    lines = log["text"]["text"].split("\n")
    assert len(lines) == 2
    assert lines[0].endswith("<@U0CAROL> changed household")
    assert lines[1].endswith("<@U0CAROL> changed household admins")


def test_a_submission_only_bolt_can_read_starts_no_lazy_run_with_the_key(
    carol: World, s3: Any, bucket: str
) -> None:
    """Cold review: the keys were taken out only when the strict reader took the body, and a
    body Bolt's lenient ``parse_qs`` reads and ``parse_qsl(strict_parsing=True)`` refuses (a
    trailing ``&``) went to the lazy run whole, key included. Now the lazy run is started only
    without the key: such a body saves (the ack stores the key) and starts no lazy run."""
    import base64

    from slack_sdk.signature import SignatureVerifier

    from bot.sandbox.slack_requests import view_submission
    from bot.slack.settings_form import SETTINGS_MODAL
    from tests.bot_kit import SECRET
    from tests.settings_kit import submitted

    form = open_settings(carol, "U0CAROL")
    assert form is not None
    event = view_submission(
        SECRET,
        callback_id=SETTINGS_MODAL,
        private_metadata=form["private_metadata"],
        values=submitted(form, destination=option("instacart"), instacart_key=text(KEY)),
        user_id="U0CAROL",
    )
    body = base64.b64decode(event["body"]).decode() + "&"
    headers = dict(event["headers"])
    stamp = headers["x-slack-request-timestamp"]
    headers["x-slack-signature"] = SignatureVerifier(SECRET).generate_signature(
        timestamp=stamp, body=body
    )
    ack = carol.send({**event, "headers": headers, "body": body, "isBase64Encoded": False})
    assert ack["statusCode"] == 200 and not ack.get("body")  # saved: the modal closes
    assert carol.lam.take() == []  # no lazy run: none could be sent without the key
    stored = boto3.client("ssm").get_parameter(Name=PARAMETER, WithDecryption=True)
    assert stored["Parameter"]["Value"] == KEY
