"""The basket's feedback buttons through the real handler (issue 36, 4): a ``context_actions``
block with ``feedback_buttons`` on every basket message (Slack's Block Kit reference on
docs.slack.dev: context-actions-block, at most 5 elements; feedback-buttons-element, each button a
plain_text ``text`` ≤ 75 and a ``value`` ≤ 2,000, checked by the fake Web API); a press as Slack
sends it (type ``feedback_buttons``, the pressed button's ``value``: bolt-js
``FeedbackButtonsAction``) acked at once and kept in a lazy run, one S3 object per person and
basket beside the outcome records, counted in the metrics, shown on the Home tab."""

from __future__ import annotations

import io
import json
from typing import Any

import pytest

from bot import metrics
from bot.records.feedback import FOLDER
from bot.records.history import history_prefix
from bot.sandbox.block_kit import block_errors
from bot.slack.basket_message import answered_blocks, basket_blocks
from bot.slack.blocks import Ref
from bot.slack.feedback_buttons import FEEDBACK, FeedbackValue
from tests.bot_kit import CHANNEL, SECRET, World, ack_in_fresh_process
from tests.test_bot_lambda import LAZY_ONLY, SETTINGS_ONLY
from tests.test_home import ordered, texts
from tests.test_metrics import documents
from workflow.shop.basket import Item
from workflow.shop.records import SHOP_PREFIX

FOLDER_KEY = f"{history_prefix(SHOP_PREFIX)}T0TEAM/{FOLDER}"


@pytest.fixture(autouse=True)
def nothing_pending() -> None:
    """What an earlier test counted outside an invocation is not this test's."""
    metrics.flush(out=io.StringIO())


def feedback_of(message: dict[str, Any]) -> dict[str, Any]:
    """The feedback_buttons element of a basket message (exactly one block holds it)."""
    (block,) = [b for b in message["blocks"] if b["type"] == "context_actions"]
    (element,) = block["elements"]
    assert element["type"] == "feedback_buttons" and element["action_id"] == FEEDBACK
    return dict(element)


def press(
    world: World, message: dict[str, Any], verdict: str, user: str = "U0BOB", **kw: Any
) -> list[dict[str, Any]]:
    """``user`` presses "Good basket" (good) or "Not good" (bad) under ``message``."""
    element = feedback_of(message)
    button = element["positive_button" if verdict == "good" else "negative_button"]
    value = kw.pop("value", button["value"])
    ack = world.click(
        message, FEEDBACK, user=user, value=value, action_type="feedback_buttons", **kw
    )
    assert ack["statusCode"] == 200 and not ack.get("body")
    return world.run_lazies()


def kept(s3: Any, bucket: str) -> dict[str, dict[str, Any]]:
    listed = s3.list_objects_v2(Bucket=bucket, Prefix=FOLDER_KEY).get("Contents", [])
    found = {}
    for obj in listed:
        body = s3.get_object(Bucket=bucket, Key=obj["Key"])["Body"].read()
        found[obj["Key"][len(FOLDER_KEY) :]] = json.loads(body)
    return found


def counted(out: str) -> dict[str, float]:
    totals: dict[str, float] = {}
    for document in documents(out):
        for directive in document["_aws"]["CloudWatchMetrics"]:
            for metric in directive["Metrics"]:
                if metric["Name"].startswith("BasketFeedback"):
                    totals[metric["Name"]] = (
                        totals.get(metric["Name"], 0) + document[metric["Name"]]
                    )
    return totals


def test_every_basket_message_has_its_feedback_buttons(world: World) -> None:
    """Waiting: "Good basket" / "Not good", each value naming the session, the round and the
    verdict, compact, valid Block Kit in the fake (no violation recorded)."""
    world.shop()
    world.run_lazies()
    (basket,) = world.baskets()
    element = feedback_of(basket)
    good, bad = element["positive_button"], element["negative_button"]
    assert good["text"]["type"] == bad["text"]["type"] == "plain_text"
    assert (good["text"]["text"], bad["text"]["text"]) == ("Good basket", "Not good")
    session = Ref.from_value(world.buttons(basket)["approve_basket"])
    assert session is not None
    assert FeedbackValue.from_value(good["value"]) == FeedbackValue(session.session_id, 1, "good")
    assert FeedbackValue.from_value(bad["value"]) == FeedbackValue(session.session_id, 1, "bad")
    assert len(good["value"]) < 200
    assert world.slack.violations == []


def test_the_answered_blocks_keep_them_when_told_the_session() -> None:
    """An answered basket keeps its feedback buttons (``session_id``), and a basket at its most
    blocks still fits Slack's 50 with them."""
    items = [Item(name=f"item {i}", quantity=1, unit="each") for i in range(400)]
    answered = answered_blocks(
        round=2, max_rounds=3, items=items, verdict="Approved", user="U0BOB", at=1, session_id="s1"
    )
    assert feedback_of({"blocks": answered})["positive_button"]["value"] == (
        '{"s":"s1","n":2,"v":"good"}'
    )
    assert block_errors(answered) == []
    waiting = basket_blocks(
        round=1,
        max_rounds=3,
        items=items,
        requested_by="U0ALICE",
        progress="",
        ref=Ref("s1", "r1"),
        approvals=["U0BOB"],
        needed=2,
        edited=("U0BOB", "−milk"),
    )
    assert len(waiting) <= 50 and block_errors(waiting) == []
    assert feedback_of({"blocks": waiting})


def test_a_press_is_kept_counted_and_acknowledged(
    world: World, s3: Any, bucket: str, capsys: pytest.CaptureFixture[str]
) -> None:
    world.shop()
    world.run_lazies()
    (basket,) = world.baskets()
    capsys.readouterr()
    press(world, basket, "good")
    session = FeedbackValue.from_value(feedback_of(basket)["positive_button"]["value"])
    assert session is not None
    records = kept(s3, bucket)
    assert list(records) == [f"{session.session_id}/1-U0BOB"]
    said = records[f"{session.session_id}/1-U0BOB"]["feedback"]
    assert said["verdict"] == "good" and said["user"] == "U0BOB" and said["round"] == 1
    assert (said["channel"], said["ts"]) == (CHANNEL, basket["ts"])
    assert counted(capsys.readouterr().out) == {"BasketFeedbackGood": 1}
    (told,) = world.slack.ephemerals("U0BOB")
    assert told["text"].startswith("Thanks: noted that basket 1 was a good basket")


def test_pressing_the_other_button_replaces_the_verdict(
    world: World, s3: Any, bucket: str, capsys: pytest.CaptureFixture[str]
) -> None:
    """Slack's buttons are a toggle that sends each press: the last one is the person's
    verdict, in the same object (one per session, round and person). A verdict is counted
    when it is new or changed: the same press again (or its lazy run retried) counts nothing."""
    world.shop()
    world.run_lazies()
    (basket,) = world.baskets()
    capsys.readouterr()
    press(world, basket, "good")
    press(world, basket, "good")  # again: the same verdict
    press(world, basket, "bad")
    records = kept(s3, bucket)
    assert len(records) == 1
    (record,) = records.values()
    assert record["feedback"]["verdict"] == "bad"
    assert counted(capsys.readouterr().out) == {"BasketFeedbackGood": 1, "BasketFeedbackBad": 1}


def test_an_ended_basket_s_feedback_is_kept_too(world: World, s3: Any, bucket: str) -> None:
    """Once approved and ordered, the session's outcome record (not its receipt) says where
    its last basket was shown: a press on it is kept, beside that record."""
    basket = ordered(world)
    press(world, basket, "good")
    (name,) = kept(s3, bucket)
    assert name.endswith("/1-U0BOB")


def test_the_ack_imports_nothing_heavy(served: World) -> None:
    """The press is acked in a fresh process without the engine, the model SDK, pydantic, the
    history records or the Home tab's step (``tests.test_bot_lambda``'s list): parsing only."""
    served.shop()
    served.run_lazies()
    (basket,) = served.baskets()
    value = feedback_of(basket)["positive_button"]["value"]
    event = (
        f"block_action({SECRET!r}, action_id={FEEDBACK!r}, value={value!r}, "
        f"message_ts={basket['ts']!r}, action_type='feedback_buttons')"
    )
    heavy = [*LAZY_ONLY, *SETTINGS_ONLY, "bot.records.feedback", "bot.steps.feedback"]
    assert ack_in_fresh_process(served, event, heavy) == (200, [])


def test_a_forged_or_malformed_value_records_nothing(
    world: World, s3: Any, bucket: str, capsys: pytest.CaptureFixture[str]
) -> None:
    """Not JSON, a field of the wrong type, an unknown verdict, a session this channel never
    showed, a round the basket is not: nothing written, nothing counted, the person told."""
    world.shop()
    world.run_lazies()
    (basket,) = world.baskets()
    real = FeedbackValue.from_value(feedback_of(basket)["positive_button"]["value"])
    assert real is not None
    capsys.readouterr()
    forged = [
        "not json",
        '{"s":"x","n":"1","v":"good"}',
        json.dumps({"s": real.session_id, "n": 1, "v": "great"}),
        FeedbackValue("0" * 24, 1, "good").to_value(),  # another session
        FeedbackValue(real.session_id, 2, "good").to_value(),  # a basket it has not shown
    ]
    for value in forged:
        press(world, basket, "good", value=value)
    assert kept(s3, bucket) == {}
    assert counted(capsys.readouterr().out) == {}
    told = world.slack.ephemerals("U0BOB")
    assert len(told) == len(forged)
    assert all("nothing was noted" in t["text"] for t in told)
    # the same session's button pressed on another message of the channel is refused too
    press(world, {**basket, "ts": "1700000001.000100"}, "good")
    assert kept(s3, bucket) == {}


def test_the_home_tab_shows_the_last_weeks_feedback(world: World) -> None:
    world.shop()
    world.run_lazies()
    (basket,) = world.baskets()
    press(world, basket, "good", user="U0BOB")
    press(world, basket, "bad", user="U0CAROL")
    press(world, basket, "good", user="U0ALICE")
    shown = texts(world.open_home("U0ALICE"))
    assert "*Feedback, last 4 weeks:* 2 good, 1 not good" in shown
    assert f"<@U0CAROL>: not good · basket 1 in <#{CHANNEL}>" in shown
    assert world.slack.violations == []


def test_an_empty_home_tab_says_there_is_no_feedback_yet(world: World) -> None:
    assert "*Feedback, last 4 weeks:* none yet" in texts(world.open_home("U0ALICE"))


def test_a_basket_one_block_over_shares_a_context_block() -> None:
    """Every item block, prices, edited, approvals so far and the feedback buttons: 51, one
    over Slack's 50, so what was asked and what the rounds mean share one context block."""
    from bot.slack.basket_message import _fit

    blocks = [
        {"type": "header"},
        *[{"type": "section"}] * 44,
        *[{"type": "context", "elements": [{"type": "mrkdwn", "text": str(i)}]} for i in range(4)],
        {"type": "actions"},
        {"type": "context_actions"},
    ]
    fitted = _fit(blocks)
    assert len(blocks) == 51 and len(fitted) == 50
    contexts = [b for b in fitted if b["type"] == "context"]
    assert [e["text"] for b in contexts for e in b["elements"]] == ["0", "1", "2", "3"]
    assert len(contexts[0]["elements"]) == 2


def test_an_answered_basket_keeps_its_feedback_buttons(world: World) -> None:
    """Approved, its buttons replaced by who approved it: the feedback buttons stay under it,
    bound to the same session and round (``bot.slack.outbox`` passes ``where.session_id``
    through ``basket_said.answered_message`` to ``answered_blocks``)."""
    basket = ordered(world)
    (answered,) = [m for m in world.baskets() if m["ts"] == basket["ts"]]
    assert "approve_basket" not in world.buttons(answered)
    assert feedback_of(answered) == feedback_of(basket)
    assert world.slack.violations == []
