"""The Lambda entry point as AWS runs it: each lazy invocation in a fresh Python process, with
nothing in memory from the process that acked the click or posted the basket."""

from __future__ import annotations

import json
import uuid

import pytest

from bot.sandbox.anthropic_api import week_of
from bot.sandbox.aws_events import scheduled_event
from bot.settings import Settings, SettingsError
from tests.bot_kit import (
    CHANNEL,
    SECRET,
    TOKEN,
    World,
    ack_in_fresh_process,
    context_text,
    header,
)


def test_every_lazy_step_runs_in_a_fresh_process(served: World) -> None:
    world = served
    world.shop()
    (started,) = world.run_lazies(fresh_process=True)
    assert started["response"]["statusCode"] == 200
    assert started["anthropic_imported"]  # writing basket 1 is the shopper's job
    (basket,) = world.baskets()
    assert header(basket) == "Basket 1 of 3"

    world.click(basket, "change_basket")
    world.submit_change("no pizza")
    (revised,) = world.run_lazies(fresh_process=True)
    assert revised["response"]["statusCode"] == 200
    assert revised["pydantic_imported"]  # the model SDK's: revising is the shopper's job too
    first, second = world.baskets()
    assert "Change asked by <@U0BOB>: no pizza" in context_text(first)

    world.click(second, "approve_basket")
    (approved,) = world.run_lazies(fresh_process=True)
    assert not approved["anthropic_imported"]  # an approve never loads the model SDK
    assert not approved["pydantic_imported"]  # nor pydantic: checkpoint values are plain classes
    assert [m["text"] for m in world.slack.thread(CHANNEL, second["ts"])] == ["Ordered 7 items."]
    assert world.claude.message_calls == 2
    for result in world.fresh:
        for line in result["logs"].splitlines():
            record = json.loads(line)  # JSON lines only
            assert TOKEN not in line and SECRET not in line and "test-key-not-real" not in line
            assert {"level", "message", "lambda_request_id"} <= set(record)


@pytest.mark.parametrize("action", ["approve_basket", "reject_basket"])
def test_an_answer_in_a_fresh_process_never_imports_pydantic(served: World, action: str) -> None:
    """Approve and Reject resume the run from its checkpoint (the basket, the request, the
    decision: plain classes, ``workflow.persistence.values``) and finish it with no model call:
    pydantic, whose models would cost a large share of the click's cold start, is never imported."""
    served.shop()
    served.run_lazies()
    (basket,) = served.baskets()
    served.click(basket, action)
    (answered,) = served.run_lazies(fresh_process=True)
    assert answered["response"]["statusCode"] == 200
    assert not answered["pydantic_imported"] and not answered["anthropic_imported"]
    verdict = "Approved" if action == "approve_basket" else "Rejected"
    assert f"{verdict} by <@U0BOB>" in context_text(served.baskets()[0])
    (said,) = served.slack.thread(CHANNEL, basket["ts"])
    assert said["text"].startswith("Ordered" if verdict == "Approved" else "No order placed")


def test_an_edit_in_a_fresh_process_never_imports_pydantic(served: World) -> None:
    """Edit items reads the basket (to fill its form in) and answers with the edited basket,
    each in a fresh process and with no model call: neither imports pydantic nor the SDK."""
    from tests.test_edit_items import quantity, submit

    served.shop()
    served.run_lazies()
    (basket,) = served.baskets()
    served.click(basket, "edit_basket")
    (filled,) = served.run_lazies(fresh_process=True)
    view = served.slack.open_view("U0BOB")
    assert view is not None and view["callback_id"] == "edit_basket_modal"
    submit(served, view, **quantity(view, "carrots", "4"))
    (edited,) = served.run_lazies(fresh_process=True)
    for result in (filled, edited):
        assert result["response"]["statusCode"] == 200
        assert not result["pydantic_imported"] and not result["anthropic_imported"]
    assert "edited by <@U0BOB>" in context_text(served.baskets()[0])


LAZY_ONLY = [
    "anthropic",
    "pydantic",
    "workflow.engine.runner",
    "workflow.shop.basket",
    "bot.steps.turn",
    "bot.steps.reminders",
    "bot.steps.home",
    "bot.records.history",
]
SETTINGS_ONLY = ["bot.records.workspace_settings", "bot.slack.settings_form", "zoneinfo"]


@pytest.mark.parametrize(
    "action",
    [
        "/shop",
        "approve_basket",
        "change_basket",
        "edit_basket",
        "home",
        "settings",
        "save_settings",
    ],
)
def test_the_ack_path_imports_only_what_it_needs(served: World, action: str) -> None:
    """An ack in a fresh process loads neither the model SDK nor the workflow engine nor
    pydantic: at a small Lambda's CPU share their import alone would cost seconds of Slack's 3
    (bench/coldstart.py). Only the lazy runs import them. (Saving the settings is the one ack
    that reads and writes S3, to answer in the modal: its store, not the engine.)"""
    if action == "/shop":
        event = f"slash_command({SECRET!r}, text='dinners')"
    elif action == "home":
        event = f"app_home_opened({SECRET!r}, 'U0ALICE')"
    elif action == "settings":
        trigger = served.slack.issue_trigger("U0ALICE")
        event = (
            f"home_action({SECRET!r}, action_id='open_settings', value='open', "
            f"user_id='U0ALICE', trigger_id={trigger!r})"
        )
    elif action == "save_settings":
        values = {"rounds": {"value": {"type": "static_select", "selected_option": {"value": "2"}}}}
        event = (
            f"view_submission({SECRET!r}, callback_id='workspace_settings_modal', "
            f"private_metadata='', values={values!r}, user_id='U0ALICE')"
        )
    else:
        served.shop()
        served.run_lazies()
        (basket,) = served.baskets()
        value = served.buttons(basket)[action]
        trigger = served.slack.issue_trigger("U0BOB")
        event = (
            f"block_action({SECRET!r}, action_id={action!r}, value={value!r}, "
            f"message_ts={basket['ts']!r}, trigger_id={trigger!r})"
        )
    # Only the settings' save reads them in its ack; every other ack imports nothing of them.
    light = LAZY_ONLY + ([] if action == "save_settings" else SETTINGS_ONLY)
    assert ack_in_fresh_process(served, event, light) == (200, [])
    if action == "change_basket":  # and the modal did open, in the ack
        assert served.slack.calls_to("views.open")[-1].error is None


def test_a_scheduled_event_starts_the_weekly_shop(served: World) -> None:
    served.boot(SHOP_CHANNEL="C0WEEKLY", SHOP_REQUEST="the usual week")
    event = scheduled_event()
    result = served.send(event)
    assert result["started"] is True
    (basket,) = [m for m in served.slack.messages("C0WEEKLY") if header(m)]
    assert header(basket) == "Basket 1 of 3"
    assert week_of(served.claude.requests[0]) == "the usual week"
    assert "For the weekly shop: the usual week" in context_text(basket)
    # EventBridge delivers at least once: the same scheduled run again, under a new event ID.
    again = served.send({**event, "id": str(uuid.uuid4())})
    assert again["session"] == result["session"]
    assert len([m for m in served.slack.messages("C0WEEKLY") if header(m)]) == 1


def test_missing_settings_fail_naming_the_variable() -> None:
    with pytest.raises(SettingsError, match="SLACK_SIGNING_SECRET is not set"):
        Settings.from_env({"SLACK_BOT_TOKEN": "x", "CHECKPOINT_BUCKET": "bucket"})
    with pytest.raises(SettingsError, match="MAX_ROUNDS is invalid"):
        Settings.from_env(
            {
                "SLACK_BOT_TOKEN": "x",
                "SLACK_SIGNING_SECRET": "y",
                "CHECKPOINT_BUCKET": "bucket",
                "MAX_ROUNDS": "lots",
            }
        )
    settings = Settings.from_env(
        {"SLACK_BOT_TOKEN": "xoxb-1", "SLACK_SIGNING_SECRET": "s", "CHECKPOINT_BUCKET": "bkt"}
    )
    assert settings.checkpoint_prefix == "weekly-shop/" and settings.max_rounds == 3
    assert settings.lock_ttl_seconds == 60 and settings.slack_api_url == "https://slack.com/api/"
    assert "xoxb-1" not in repr(settings)


BASE = {"SLACK_BOT_TOKEN": "xoxb-1", "SLACK_SIGNING_SECRET": "s", "CHECKPOINT_BUCKET": "bkt"}


@pytest.mark.parametrize(
    ("raw", "seconds"),
    [("6h", 6 * 3600), ("45m", 2700), ("3d", 3 * 86400), ("90s", 90), ("7200", 7200), ("0", 0)],
)
def test_a_baskets_timers_take_durations(raw: str, seconds: int) -> None:
    settings = Settings.from_env({**BASE, "REMIND_AFTER": raw})
    assert settings.remind_after == seconds


def test_timer_settings_default_to_six_hours_two_reminders_and_three_days() -> None:
    settings = Settings.from_env(BASE)
    assert (settings.remind_after, settings.max_reminders) == (6 * 3600, 2)
    assert settings.expire_after == 72 * 3600
    assert not settings.has_timers  # no schedule group, target or role: no timers armed


@pytest.mark.parametrize(
    ("name", "raw"),
    [
        ("REMIND_AFTER", "soon"),
        ("REMIND_AFTER", "10s"),  # under the one-minute minimum
        ("EXPIRE_AFTER", "30d"),  # the bucket's 30-day lifecycle would delete the basket first
        ("MAX_REMINDERS", "11"),
    ],
)
def test_a_bad_timer_setting_fails_naming_it(name: str, raw: str) -> None:
    with pytest.raises(SettingsError, match=f"{name} is invalid"):
        Settings.from_env({**BASE, name: raw})
