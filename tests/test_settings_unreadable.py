"""A workspace whose settings document cannot be read fails closed.

Before: a document whose MAC failed, or whose bytes were garbled, was read as "no settings", so
the deploy's defaults (anyone in the channel, one approval) stood in for the household's rules,
and Alice ordered alone where two of Bob and Dave were needed. Now nothing that orders, or that
depends on who may approve, goes on until an admin saves the settings again; the person is told
why, nothing is written and no lock is left; the Home tab says so and its Settings still opens.

Through the real handler (signed requests), moto's S3 and Scheduler, and the fake Web API. The
document is damaged the way S3 lets anyone with write access do it: ``PutObject`` over its key.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

import boto3
import botocore.retries.standard
import pytest

from bot.records.workspace_settings_store import settings_key, settings_prefix
from bot.sandbox.aws_events import scheduled_event
from bot.sandbox.slack_requests import block_action
from bot.slack.blocks import RETRY_ORDER, START_AGAIN
from bot.slack.home_view import REPEAT
from bot.slack.outcome import STORE_DOWN
from bot.slack.settings_summary import TAMPERED
from bot.steps.rules import NEWER_SETTINGS, UNREADABLE
from tests.bot_kit import CHANNEL, SECRET, World, context_text, objects, start_basket
from tests.fault_kit import (
    S3Faults,
    ephemeral_texts,
    lock_keys,
    moto_skips_refused,
    op,
    thread_texts,
)
from tests.settings_kit import number, open_settings, save, settle, users
from tests.test_bot_channels import replies_to_commands
from tests.test_edit_items import open_edit
from tests.test_reminders import GROUP, ROLE, TARGET, at, fire, schedules, the_timer
from workflow.shop.records import SHOP_PREFIX

KEY = settings_key(settings_prefix(SHOP_PREFIX), "T0TEAM")
ORDERED = "Ordered 10 items."


@pytest.fixture
def carol(world: World) -> World:
    """Carol is a workspace admin: she saves the Settings. Bob and Dave are members."""
    world.slack.set_person("U0CAROL", is_admin=True, tz="Europe/London")
    return world


def raw(s3: Any, bucket: str) -> bytes:
    body: bytes = s3.get_object(Bucket=bucket, Key=KEY)["Body"].read()
    return body


def with_doc(change: Callable[[dict[str, Any]], None]) -> Callable[[bytes], bytes]:
    def damage(body: bytes) -> bytes:
        doc = json.loads(body)
        change(doc)
        return json.dumps(doc).encode()

    return damage


DAMAGES: dict[str, Callable[[bytes], bytes]] = {
    "its MAC broken": with_doc(lambda d: d.update(mac="0" * 64)),
    "its bytes garbled": lambda body: body[:20] + bytes(b ^ 0x5A for b in body[20:60]) + body[60:],
    "cut short": lambda body: body[: len(body) // 2],
    "approvers edited in S3": with_doc(
        lambda d: d["settings"].update(approvers=["U0ALICE"], approvals_needed=1)
    ),
    "its generation edited": with_doc(lambda d: d.update(generation=99)),
}


def damaged(world: World, s3: Any, bucket: str, how: str = "its MAC broken") -> None:
    s3.put_object(Bucket=bucket, Key=KEY, Body=DAMAGES[how](raw(s3, bucket)))


def approve(world: World, user: str) -> dict[str, Any]:
    world.click(world.baskets()[0], "approve_basket", user=user)
    world.run_lazies()
    return world.baskets()[0]


@pytest.mark.parametrize("how", list(DAMAGES))
def test_a_damaged_document_orders_nothing_and_each_approver_is_told_why(
    carol: World, s3: Any, bucket: str, how: str
) -> None:
    """2 of Bob and Dave needed; the document damaged: Alice's approve (anyone, under the
    deploy's defaults) orders nothing, nor Bob's and Dave's together. Each is told, ephemerally,
    that nothing can be ordered until an admin saves the settings; no S3 object is written or
    left (no checkpoint, no lock) and the basket keeps its buttons."""
    settle(carol, "U0BOB", "U0DAVE", needed=2)
    basket = start_basket(carol)
    damaged(carol, s3, bucket, how)
    before = objects(s3, bucket)
    for user in ("U0ALICE", "U0BOB", "U0DAVE"):
        now = approve(carol, user)
        assert ephemeral_texts(carol, user) == [UNREADABLE]
    assert thread_texts(carol, basket) == [] and carol.slack.canvases == {}
    assert objects(s3, bucket) == before and lock_keys(s3, bucket) == []
    assert "approve_basket" in carol.buttons(now) and "Approved by" not in context_text(now)


def test_reject_change_edit_start_again_and_retry_are_refused_alike(
    carol: World, s3: Any, bucket: str
) -> None:
    """Every click that answers a basket, or that would start or place one again, is told the
    same and changes nothing: Reject and a submitted change (each a turn of the basket), Edit
    items (its form says it instead of the items), Start again and Retry (whose rules are the
    same approvers')."""
    settle(carol, "U0BOB", "U0DAVE", needed=2)
    basket = start_basket(carol)
    damaged(carol, s3, bucket)
    before = objects(s3, bucket)
    carol.click(basket, "reject_basket", user="U0BOB")
    carol.run_lazies()
    carol.click(basket, "change_basket", user="U0DAVE")
    carol.submit_change("no fish", user="U0DAVE")
    carol.run_lazies()
    form = open_edit(carol, basket, user="U0BOB")
    assert UNREADABLE in json.dumps(form["blocks"]) and "submit" not in form
    value = carol.buttons(basket)["approve_basket"]
    for action in (START_AGAIN, RETRY_ORDER):
        carol.send(
            block_action(
                SECRET, action_id=action, value=value, user_id="U0DAVE", message_ts=basket["ts"]
            )
        )
        carol.run_lazies()
    assert ephemeral_texts(carol, "U0BOB") == [UNREADABLE]
    assert ephemeral_texts(carol, "U0DAVE") == [UNREADABLE] * 3
    assert thread_texts(carol, basket) == [] and len(carol.claude.requests) == 1
    assert objects(s3, bucket) == before and lock_keys(s3, bucket) == []


def test_a_new_shop_or_repeat_starts_no_basket_nobody_could_approve(
    carol: World, s3: Any, bucket: str
) -> None:
    """/shop is acked as usual (the ack reads no S3), then its lazy run says why through the
    command's response_url: no model call, no session. Repeat this order on the Home tab says
    it in the tab."""
    settle(carol, "U0BOB", needed=1)
    start_basket(carol)
    assert thread_texts(carol, approve(carol, "U0BOB")) == [ORDERED]
    damaged(carol, s3, bucket)
    before = objects(s3, bucket)
    ack = carol.shop("tacos on Friday")
    assert "Writing your basket" in ack["body"]
    carol.run_lazies()
    assert replies_to_commands(carol) == [UNREADABLE]
    assert len(carol.baskets()) == 1 and len(carol.claude.requests) == 1
    home = carol.open_home("U0BOB") or {}
    (repeat,) = [
        e["value"]
        for b in home["blocks"]
        for e in b.get("elements", [])
        if e.get("action_id") == REPEAT
    ]
    after = carol.home_click(REPEAT, repeat, user="U0BOB") or {}
    said = f":warning: *{UNREADABLE}*\n\n{UNREADABLE}"  # the tab's warning, then Repeat's answer
    assert after["blocks"][1]["text"]["text"] == said
    assert len(carol.baskets()) == 1 and len(carol.claude.requests) == 1
    assert objects(s3, bucket) == before


def test_the_home_tab_warns_the_modal_still_opens_and_a_save_repairs_it(
    carol: World, s3: Any, bucket: str
) -> None:
    """The Home tab says it first, and its Settings section shows the warning and the button
    but no values (the defaults are not in force either). The modal opens for an admin, with
    the warning and a Save button, filled in with the deploy's defaults; her save writes a fresh
    document, and the next approvals are counted under it: Alice is no approver, Bob's is 1 of
    2, Dave's orders."""
    settle(carol, "U0BOB", "U0DAVE", needed=2)
    start_basket(carol)
    damaged(carol, s3, bucket, "its bytes garbled")
    home = carol.open_home("U0CAROL") or {}
    texts = [json.dumps(b) for b in home["blocks"]]
    assert UNREADABLE in texts[1]  # right under the header
    assert any(TAMPERED[:60] in t for t in texts) and not any("*Approvers:*" in t for t in texts)
    form = open_settings(carol, "U0CAROL")
    assert form is not None and form["submit"]["text"] == "Save"
    assert form["blocks"][0]["text"]["text"] == TAMPERED
    answer = save(carol, "U0CAROL", form, approvers=users("U0BOB", "U0DAVE"), approvals=number(2))
    assert answer == {}
    assert UNREADABLE not in json.dumps(carol.open_home("U0CAROL"))
    approve(carol, "U0ALICE")
    assert ephemeral_texts(carol, "U0ALICE") == [
        "Only <@U0BOB>, <@U0DAVE> can answer baskets here."
    ]
    assert "Approved by <@U0BOB> · 1 of 2 needed" in context_text(approve(carol, "U0BOB"))
    assert thread_texts(carol, approve(carol, "U0DAVE")) == [ORDERED]


def test_settings_of_a_newer_version_order_nothing_either(
    carol: World, s3: Any, bucket: str
) -> None:
    """A document a newer schema wrote (a deploy rolled back after it saved) is not used, and
    cannot be saved over here (tests.test_settings): until that version is back, an approve
    is told so and orders nothing."""
    from bot.handler import cold_start
    from bot.records import workspace_settings_store as ws
    from bot.records.workspace_settings import WorkspaceSettings

    settle(carol, "U0BOB", needed=1)
    basket = start_basket(carol)
    rt, _ = cold_start()
    body = WorkspaceSettings(approvers=("U0BOB",)).to_json()
    mac = ws._mac(rt.records.settings_store.key, "T0TEAM", 99, body)
    s3.put_object(Bucket=bucket, Key=KEY, Body=json.dumps({"v": 99, "settings": body, "mac": mac}))
    approve(carol, "U0BOB")
    assert ephemeral_texts(carol, "U0BOB") == [NEWER_SETTINGS]
    assert thread_texts(carol, basket) == [] and lock_keys(s3, bucket) == []


def test_s3_down_reading_the_settings_orders_nothing_under_the_defaults(
    carol: World, s3: Any, bucket: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """S3 failing to answer for the settings (503 on every retry) is not a damaged document:
    the thread says S3 could not be reached, as for any turn, and Alice's approve (which the
    defaults would let order) orders nothing. Once S3 answers, the saved rules hold."""
    settle(carol, "U0BOB", "U0DAVE", needed=2)
    basket = start_basket(carol)
    monkeypatch.setattr(
        botocore.retries.standard.ExponentialBackoff, "delay_amount", lambda self, ctx: 0.0
    )
    moto_skips_refused(monkeypatch)
    faults = S3Faults().install(s3)
    faults.add(op("GetObject", "-settings/"), 503, "SlowDown", times=1000)
    approve(carol, "U0ALICE")
    assert thread_texts(carol, basket) == [STORE_DOWN]
    faults.uninstall(s3)
    approve(carol, "U0ALICE")
    assert ephemeral_texts(carol, "U0ALICE") == [
        "Only <@U0BOB>, <@U0DAVE> can answer baskets here."
    ]
    assert thread_texts(carol, basket) == [STORE_DOWN]


def test_a_held_order_waits_for_readable_settings_then_goes(
    carol: World, s3: Any, bucket: str
) -> None:
    """Timers on, the 2-minute undo window: Bob's approval is held; the document is damaged
    before its order timer fires. Undo is refused like any answer (who may press it is in the
    settings); the timer orders nothing (where orders go is in the settings too) and is armed
    again an hour later; once Carol saves, that firing orders."""
    boto3.client("scheduler", region_name="us-east-1").create_schedule_group(Name=GROUP)
    carol.boot(TIMER_GROUP=GROUP, TIMER_TARGET_ARN=TARGET, TIMER_ROLE_ARN=ROLE)
    settle(carol, "U0BOB", needed=1)
    basket = start_basket(carol)
    approve(carol, "U0BOB")
    payload, timer = the_timer()
    assert timer["kind"] == "order"
    damaged(carol, s3, bucket)
    carol.click(carol.baskets()[0], "undo_order", user="U0BOB")
    carol.run_lazies()
    assert ephemeral_texts(carol, "U0BOB") == [UNREADABLE]
    assert fire(carol, payload) == {"fired": False, "held": True}
    assert thread_texts(carol, basket) == [] and carol.slack.canvases == {}
    (again,) = schedules()
    assert json.loads(again["Target"]["Input"]) == payload  # the same timer, an hour on
    hour_on = int(carol.clock()) + 3600
    assert again["ScheduleExpression"] in {at(hour_on - 1), at(hour_on)}
    settle(carol, "U0BOB", needed=1)
    assert fire(carol, payload) == {"fired": True, "kind": "order"}
    assert thread_texts(carol, basket) == [ORDERED]


def test_a_weekly_run_says_why_no_basket_came_and_keeps_its_schedule(
    carol: World, s3: Any, bucket: str
) -> None:
    """The workspace's weekly run fires while its settings cannot be read: no basket, the
    sentence in its channel, and its schedule kept (the settings that would say otherwise
    cannot be read). The deploy's own schedule (SHOP_CHANNEL) starts nothing either: the
    workspace saved settings of its own."""
    from tests.test_weekly_runs import RUN, WEEKLY, delivered, saved_and_arranged
    from tests.test_weekly_runs import schedules as weekly_schedules

    boto3.client("scheduler", region_name="us-east-1").create_schedule_group(Name=GROUP)
    carol.boot(TIMER_GROUP=GROUP, TIMER_TARGET_ARN=TARGET, TIMER_ROLE_ARN=ROLE)
    saved_and_arranged("T0TEAM", RUN)
    damaged(carol, s3, bucket)
    (schedule,) = weekly_schedules()
    assert carol.send(delivered(schedule)) == {"started": False}
    assert [m["text"] for m in carol.slack.messages(WEEKLY)] == [UNREADABLE]
    assert [(s["Name"], s["ScheduleExpression"]) for s in weekly_schedules()] == [
        (schedule["Name"], schedule["ScheduleExpression"])
    ]
    carol.boot(SHOP_CHANNEL=CHANNEL, SHOP_REQUEST="the usual week")
    assert carol.send(scheduled_event()) == {"started": False}
    assert carol.baskets() == [] and carol.claude.requests == []
