"""The metrics a click emits (issue 35, 2), read from the function's stdout as CloudWatch reads
them, through the real handler.

What the embedded metric format specification says, and these tests check of every line
(docs.aws.amazon.com/AmazonCloudWatch/latest/monitoring/CloudWatch_Embedded_Metric_Format_Specification.html):

- a log event is one JSON object, nothing before or after it; its root holds ``_aws``, an object
  with ``Timestamp`` (a number: milliseconds since the epoch) and ``CloudWatchMetrics``, an
  array of metric directives;
- a directive has ``Namespace`` (a string), ``Dimensions`` (an array of dimension sets, each
  an array of at most 30 dimension keys) and ``Metrics`` (at most 100 metric definitions, each
  a ``Name`` and optionally a ``Unit``, one of CloudWatch's units: ``Count``, ``Seconds``,
  ``None`` among them);
- every dimension key and every metric name a directive refers to MUST be a member of the
  root node (a dimension's value a string; a metric's a number, or an array of at most 100
  numbers); other root members are kept as log fields.

The metric names, namespace and dimensions are the contract the stack's dashboard and alarms
(serverless.yml) read: ``bot.metrics``'s docstring lists them.
"""

from __future__ import annotations

import io
import json
from typing import Any

import pytest

from bot import metrics
from tests.bot_kit import World, change, start_basket
from tests.fault_kit import S3Faults, op, thread_texts
from tests.test_reminders import fire, the_timer, timed

__all__ = ["timed"]  # a fixture, used by name

FUNCTION = "weekly-shop-test-slack"  # the sandbox's Lambda context's function name
UNITS = {"Count", "Seconds", "None"}


@pytest.fixture(autouse=True)
def nothing_pending() -> None:
    """What an earlier test counted outside an invocation is not this test's."""
    metrics.flush(out=io.StringIO())


def documents(out: str) -> list[dict[str, Any]]:
    """The EMF documents among the function's stdout lines, each checked as CloudWatch does."""
    found = []
    for line in out.splitlines():
        if '"_aws"' not in line:
            continue
        document = json.loads(line)  # the whole line, nothing around it
        valid(document)
        found.append(document)
    return found


def valid(document: dict[str, Any]) -> None:
    meta = document["_aws"]
    assert isinstance(meta["Timestamp"], int) and meta["Timestamp"] > 1_700_000_000_000
    for directive in meta["CloudWatchMetrics"]:
        assert directive["Namespace"] == "weekly-shop"
        assert directive["Dimensions"][0] == ["FunctionName"]
        for dimension_set in directive["Dimensions"]:
            assert 1 <= len(dimension_set) <= 30
            assert all(isinstance(document[key], str) for key in dimension_set)
        assert 1 <= len(directive["Metrics"]) <= 100
        for metric in directive["Metrics"]:
            assert metric["Unit"] in UNITS
            value = document[metric["Name"]]
            values = value if isinstance(value, list) else [value]
            assert 1 <= len(values) <= 100
            assert all(isinstance(v, int | float) for v in values)


def totals(docs: list[dict[str, Any]], destination: str = "") -> dict[str, float]:
    """Each metric's sum over the documents (of ``destination``, or the function-wide ones)."""
    summed: dict[str, float] = {}
    for document in docs:
        if document.get("Destination", "") != destination:
            continue
        for directive in document["_aws"]["CloudWatchMetrics"]:
            for metric in directive["Metrics"]:
                value = document[metric["Name"]]
                summed[metric["Name"]] = summed.get(metric["Name"], 0) + (
                    sum(value) if isinstance(value, list) else value
                )
    return summed


def answer_seconds(docs: list[dict[str, Any]]) -> list[float]:
    found: list[float] = []
    for document in docs:
        value = document.get("AnswerSeconds")
        if value is not None:
            found += value if isinstance(value, list) else [value]
    return found


def test_a_shop_and_its_approve_emit_the_baskets_the_model_s_tokens_and_the_order(
    world: World, capsys: pytest.CaptureFixture[str]
) -> None:
    """``AnswerSeconds`` is read from the basket message's ``ts``, which Slack makes from when
    it was posted (epoch seconds and microseconds): the fake's are made so here too."""
    world.slack.workspace("T0TEAM").ts_base = None  # a ts is when it was posted, as Slack's
    basket = start_basket(world)
    started = documents(capsys.readouterr().out)
    assert all(d["FunctionName"] == FUNCTION for d in started)
    shop = totals(started)
    assert shop["BasketsStarted"] == 1
    usage = world.claude.usages[-1]  # what the fake Messages API answered
    assert shop["ModelInputTokens"] == usage["input_tokens"]
    assert shop["ModelCachedTokens"] == usage.get("cache_read_input_tokens", 0)
    assert shop["ModelOutputTokens"] == usage["output_tokens"] > 0
    assert 0 < shop["ModelCostUSD"] < 0.01  # Haiku 5.5: cents per thousand baskets
    assert "AnswerSeconds" not in shop

    world.clock.reach(world.clock() + 90)  # the basket waited a minute and a half
    world.click(basket, "approve_basket", user="U0BOB")
    world.run_lazies()
    assert thread_texts(world, basket)[-1] == "Ordered 10 items."
    docs = documents(capsys.readouterr().out)
    approve = totals(docs)
    assert approve["BasketsApproved"] == 1
    assert "BasketsStarted" not in approve and "ModelInputTokens" not in approve
    (waited,) = answer_seconds(docs)
    assert 90 <= waited < 150
    assert totals(docs, "canvas") == {"OrdersPlaced": 1}
    (order,) = [d for d in docs if d.get("Destination")]
    assert order["_aws"]["CloudWatchMetrics"][0]["Dimensions"] == [
        ["FunctionName"],
        ["FunctionName", "Destination"],
    ]

    world.click(basket, "approve_basket", user="U0CAROL")  # answered already: nothing counted
    world.run_lazies()
    again = documents(capsys.readouterr().out)
    assert "BasketsApproved" not in totals(again) and totals(again, "canvas") == {}


def test_a_reject_and_a_change_are_counted_with_their_wait(
    world: World, capsys: pytest.CaptureFixture[str]
) -> None:
    world.slack.workspace("T0TEAM").ts_base = None  # a ts is when it was posted, as Slack's
    first = start_basket(world)
    capsys.readouterr()
    world.clock.reach(world.clock() + 30)
    change(world, first, "no pizza")
    changed = documents(capsys.readouterr().out)
    assert totals(changed)["BasketsChanged"] == 1
    (waited,) = answer_seconds(changed)
    assert 30 <= waited < 90
    assert "BasketsStarted" not in totals(changed)  # basket 2 is the same shop's
    assert totals(changed)["ModelOutputTokens"] > 0  # the model wrote basket 2
    second = world.baskets()[-1]
    world.click(second, "reject_basket", user="U0BOB")
    world.run_lazies()
    rejected = documents(capsys.readouterr().out)
    assert totals(rejected)["BasketsRejected"] == 1
    assert "BasketsApproved" not in totals(rejected)


def test_an_order_the_destination_refused_is_counted_failed_at_its_destination(
    world: World, capsys: pytest.CaptureFixture[str]
) -> None:
    world.slack.canvases_enabled = False
    basket = start_basket(world)
    capsys.readouterr()
    world.click(basket, "approve_basket", user="U0BOB")
    world.run_lazies()
    docs = documents(capsys.readouterr().out)
    assert totals(docs, "canvas") == {"OrdersFailed": 1}


def test_a_basket_nobody_answered_is_counted_expired_once(
    timed: World, capsys: pytest.CaptureFixture[str]
) -> None:
    start_basket(timed)
    capsys.readouterr()
    for kind in ("remind", "remind", "expire"):
        payload, timer = the_timer()
        assert timer["kind"] == kind
        fire(timed, payload)
    docs = documents(capsys.readouterr().out)
    assert totals(docs) == {"BasketsExpired": 1}
    assert answer_seconds(docs) == []  # nobody answered


def test_slack_and_s3_retries_are_counted(
    world: World, faults: S3Faults, capsys: pytest.CaptureFixture[str]
) -> None:
    """slack_sdk's rate-limit handler retries a 429 (twice here); botocore's standard mode
    retries a 503 SlowDown (twice here, on the lock's PUT)."""
    basket = start_basket(world)
    capsys.readouterr()
    world.slack.fail_next("chat.update", status=429, retry_after=0, times=2)
    faults.add(op("PutObject", "/lock"), 503, "SlowDown", times=2)
    world.click(basket, "approve_basket", user="U0BOB")
    world.run_lazies()
    assert thread_texts(world, basket)[-1] == "Ordered 10 items."
    counted = totals(documents(capsys.readouterr().out))
    assert counted["SlackRetries"] == 2
    assert counted["S3Retries"] == 2


def test_a_flush_writes_at_most_100_metrics_a_document() -> None:
    for n in range(150):
        metrics.count(f"M{n:03d}")
    out = io.StringIO()
    metrics.flush("f", out=out)
    docs = documents(out.getvalue())
    assert [len(d["_aws"]["CloudWatchMetrics"][0]["Metrics"]) for d in docs] == [100, 50]
    assert sum(totals(docs).values()) == 150
