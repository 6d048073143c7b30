"""A basket approved and held for its undo window, on the Home tab (issue 33, 5): listed as
approved and about to be ordered (who approved it, when, when its order goes, Undo), never as
waiting with a next reminder; its Undo there is the basket's own Undo, one turn of the session
under its lock, and refused as on the basket once the order went.

Through the real handler (the Home tab's ``block_actions`` carry the view as their container:
no channel, no message), moto's Scheduler (each test fires the order timer itself,
``tests.test_reminders.fire``) and the fake Slack, whose ``views.publish`` the tests read.
"""

from __future__ import annotations

import json
import re
from typing import Any

import boto3
import pytest

from bot.slack.home_view import HOME_UNDO
from bot.steps.click_said import TOO_LATE
from bot.steps.clicks import undone_text
from bot.steps.home import GONE_FROM_HOME
from tests.bot_kit import CHANNEL, World, context_text, start_basket
from tests.fault_kit import ephemeral_texts, lock_keys, thread_texts
from tests.test_home import buttons, texts
from tests.test_reminders import GROUP, ROLE, TARGET, due_at, fire, the_timer
from tests.test_undo_window import approve_and_hold, basket_now


@pytest.fixture
def held(world: World) -> World:
    """Timers on, the default undo window (``tests.test_undo_window.held``)."""
    boto3.client("scheduler", region_name="us-east-1").create_schedule_group(Name=GROUP)
    world.boot(TIMER_GROUP=GROUP, TIMER_TARGET_ARN=TARGET, TIMER_ROLE_ARN=ROLE)
    return world


def baskets_shown(view: dict[str, Any] | None) -> str:
    """The tab's text above its last outcomes: the baskets held or waiting."""
    return texts(view).split("*Last outcomes*")[0]


def undo_button(view: dict[str, Any] | None) -> dict[str, Any]:
    (undo,) = [b for b in buttons(view) if b["action_id"] == HOME_UNDO]
    return undo


def test_a_held_basket_is_listed_as_approved_with_its_order_time_and_undo(
    held: World,
) -> None:
    basket, payload = approve_and_hold(held)
    approved_at = json.loads(payload["weekly_shop_timer"])["posted_at"]
    view = held.open_home("U0ALICE")
    shown = baskets_shown(view)
    assert "*Approved, about to be ordered*" in shown
    assert (
        f"*Approved* by <@U0BOB> <!date^{approved_at}^" in shown
        and f"ordering <!date^{due_at(payload)}^" in shown
    )
    assert "next reminder" not in shown and "expires" not in shown
    assert "Nothing else is waiting for an answer." in shown
    assert undo_button(view)["style"] == "danger"
    assert held.slack.violations == []


def test_undo_on_the_home_tab_undoes_the_basket_and_says_who_pressed_it(held: World) -> None:
    """The same turn as the basket's own Undo: the thread says who pressed it, the basket has
    its buttons again, the order timer went (the first reminder is armed), and the tab,
    published again, says so and lists the basket as waiting."""
    basket, payload = approve_and_hold(held)
    view = held.open_home("U0CAROL")
    after = held.home_click(HOME_UNDO, undo_button(view)["value"], user="U0CAROL")
    assert thread_texts(held, basket) == [undone_text("U0CAROL")]
    assert undone_text("U0CAROL").startswith("Undo pressed by <@U0CAROL>")
    now = basket_now(held, basket)
    assert "approve_basket" in held.buttons(now) and "Approved by" not in context_text(now)
    _, timer = the_timer()
    assert timer["kind"] == "remind"
    shown = baskets_shown(after)
    assert (
        f"Undone: nothing was ordered, and the basket waits for approval again in <#{CHANNEL}>."
        in shown
    )
    assert "Approved, about to be ordered" not in shown and "next reminder" in shown
    assert ephemeral_texts(held, "U0CAROL") == []  # said on the tab, where she pressed
    fire(held, payload)  # the order timer, had Scheduler already fired it: nothing
    assert held.slack.canvases == {} and lock_keys(held.s3, held.env["CHECKPOINT_BUCKET"]) == []


def test_undo_on_a_home_tab_shown_before_the_order_went_is_refused(held: World) -> None:
    basket, payload = approve_and_hold(held)
    view = held.open_home("U0CAROL")
    fire(held, payload)
    after = held.home_click(HOME_UNDO, undo_button(view)["value"], user="U0CAROL")
    assert TOO_LATE in texts(after)
    assert thread_texts(held, basket) == ["Ordered 10 items."] and len(held.slack.canvases) == 1
    assert "*Ordered*" in texts(after) and "Approved, about to be ordered" not in texts(after)
    approved_at = json.loads(payload["weekly_shop_timer"])["posted_at"]
    assert f"by <@U0BOB> · <!date^{approved_at}^" in texts(after)  # approved then, not ordered


def test_undo_from_the_home_tab_is_only_for_an_approver(held: World) -> None:
    """Who may undo is who may answer (the workspace's approvers), as on the basket; a button
    value naming a session whose receipt shows nothing held changes nothing either."""
    held.boot(APPROVER_IDS="U0BOB,U0CAROL")
    basket, _ = approve_and_hold(held)
    value = undo_button(held.open_home("U0DAVE"))["value"]
    after = held.home_click(HOME_UNDO, value, user="U0DAVE")
    assert "Only <@U0BOB>, <@U0CAROL> can answer baskets here." in texts(after)
    assert list(held.buttons(basket_now(held, basket))) == ["undo_order"]
    forged = json.dumps({"s": "0" * 24, "r": json.loads(value)["r"]}, separators=(",", ":"))
    assert GONE_FROM_HOME in texts(held.home_click(HOME_UNDO, forged, user="U0BOB"))
    assert list(held.buttons(basket_now(held, basket))) == ["undo_order"]
    assert thread_texts(held, basket) == []


def test_a_held_basket_in_a_private_channel_is_undone_only_by_its_members(held: World) -> None:
    """Its Undo button is on its members' tabs only; pressed by someone else (the value copied
    from a member's tab), it is as if there were no such basket: the channel and message come
    from the receipt, never from the button, and the person must be in that channel."""
    held.slack.add_channel("G0PRIV", "family", members=["U0ALICE", "U0BOB"], private=True)
    held.shop("birthday dinner", user="U0ALICE", channel_id="G0PRIV")
    held.run_lazies()
    (basket,) = held.baskets("G0PRIV")
    held.click(basket, "approve_basket", user="U0BOB", channel_id="G0PRIV")
    held.run_lazies()
    value = undo_button(held.open_home("U0ALICE"))["value"]
    assert HOME_UNDO not in json.dumps(held.open_home("U0CAROL"))
    after = held.home_click(HOME_UNDO, value, user="U0CAROL")
    assert GONE_FROM_HOME in texts(after)
    now = held.slack.message("G0PRIV", basket["ts"])
    assert now is not None and list(held.buttons(now)) == ["undo_order"]
    assert held.slack.thread("G0PRIV", basket["ts"]) == []


def test_a_quorum_held_names_everyone_who_approved(held: World) -> None:
    """Two approvals needed: the Home tab names both, as the basket does."""
    from tests.bot_kit import start_basket

    held.boot(APPROVALS_NEEDED="2")
    basket = start_basket(held)
    held.click(basket, "approve_basket", user="U0BOB")
    held.run_lazies()
    assert "Approved, about to be ordered" not in baskets_shown(held.open_home("U0ALICE"))
    held.click(basket_now(held, basket), "approve_basket", user="U0CAROL")
    held.run_lazies()
    shown = baskets_shown(held.open_home("U0ALICE"))
    assert "*Approved* by <@U0BOB> and <@U0CAROL> <!date^" in shown
    assert "Approved by <@U0BOB> and <@U0CAROL> · ordering" in context_text(
        basket_now(held, basket)
    )


def test_the_next_reminder_shown_is_after_the_bots_now(held: World) -> None:
    """The tab's times are the bot's clock's, as the timers' are: in the sandbox, after its played
    clock passed reminder 1 (Fast-forward), the tab listed reminder 1's time as the next one
    while the Timers panel said reminder 2 (a time already gone, shown as to come)."""
    start_basket(held)
    _, first = the_timer()
    held.clock.reach(first["at"] + 60)  # reminder 1 due and gone by the bot's clock
    shown = baskets_shown(held.open_home("U0ALICE"))
    (remind,) = re.findall(r"next reminder <!date\^(\d+)\^", shown)
    assert int(remind) > first["at"] + 60


def test_a_lost_undo_from_the_home_tab_is_said_in_the_baskets_thread(held: World) -> None:
    """Cold review: an Undo pressed on the Home tab carries no channel, so when Lambda gave up
    on its lazy run the lost-runs queue dropped it as "not ours" and nobody was told, while the
    order went ahead. Now the basket's receipt says where: its thread, naming who pressed it."""
    from bot.handler import handler
    from bot.sandbox.aws_events import lambda_context, lost_run_record, sqs_event
    from bot.sandbox.slack_events import home_action
    from bot.slack.lost_said import HOME_UNDO_LOST
    from tests.bot_kit import SECRET

    basket, _ = approve_and_hold(held)
    value = undo_button(held.open_home("U0CAROL"))["value"]
    ack = held.send(home_action(SECRET, action_id=HOME_UNDO, value=value, user_id="U0CAROL"))
    assert ack["statusCode"] == 200
    (lost,) = held.lam.take()  # the lazy run that never finished
    event = sqs_event(lost_run_record(lost.payload, condition="RetriesExhausted"))
    assert handler(json.loads(json.dumps(event)), lambda_context()) == {"batchItemFailures": []}
    assert thread_texts(held, basket) == [f"<@U0CAROL> {HOME_UNDO_LOST}"]
