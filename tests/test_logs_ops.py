"""Logs an operator can debug from (issue 35, 3), through the real handler.

Every line is one JSON object with its own ``time`` (ISO 8601 UTC, milliseconds); a logged
exception carries its ``stack`` (redacted like every line); the lines of a process's first
invocation say ``"cold_start": true``; and a failure the bot tells the person about (S3, Slack,
the model or a destination down) is still logged at WARNING or above with its cause.
"""

from __future__ import annotations

import io
import json
import logging
import re
from collections.abc import Iterator
from typing import Any

import pytest

from bot.logs import JsonFormatter
from bot.sandbox.anthropic_api import Reply
from bot.slack.outcome import STORE_DOWN
from tests.bot_kit import CHANNEL, World, start_basket
from tests.fault_kit import S3Faults, thread_texts

TIME = re.compile(r"^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$")


@pytest.fixture
def logged() -> Iterator[io.StringIO]:
    """Every log line the bot writes while the test runs, as the Lambda runtime would see it
    (attached after the world's cold start, which replaces the root logger's handlers)."""
    out = io.StringIO()
    handler = logging.StreamHandler(out)
    handler.setFormatter(JsonFormatter())
    root = logging.getLogger()
    root.addHandler(handler)
    try:
        yield out
    finally:
        root.removeHandler(handler)


def lines(out: io.StringIO | str) -> list[dict[str, Any]]:
    text = out if isinstance(out, str) else out.getvalue()
    return [json.loads(line) for line in text.splitlines() if line.startswith("{")]


def warned(out: io.StringIO) -> list[dict[str, Any]]:
    return [line for line in lines(out) if line["level"] in ("WARNING", "ERROR", "CRITICAL")]


def test_an_approve_while_s3_is_down_is_told_and_logged_at_warning_with_its_cause(
    world: World, faults: S3Faults, logged: io.StringIO
) -> None:
    basket = start_basket(world)
    logged.truncate(0)
    faults.add(lambda operation, request: True, 503, "SlowDown", times=1000)
    world.click(basket, "approve_basket", user="U0BOB")
    world.run_lazies()
    assert thread_texts(world, basket) == [STORE_DOWN]
    bad = warned(logged)
    assert bad, lines(logged)
    assert any("SlowDown" in (b.get("error", "") + b["message"]) for b in bad), bad
    assert all(b["lambda_request_id"] for b in bad)


def test_a_shop_while_s3_is_down_is_told_and_logged_at_warning_with_its_cause(
    world: World, faults: S3Faults, logged: io.StringIO
) -> None:
    faults.add(lambda operation, request: True, 503, "SlowDown", times=1000)
    world.shop()
    world.run_lazies()
    assert (
        world.slack.messages(CHANNEL)[-1]["text"]
        == "I couldn't start a basket just now. Try /shop again."
    )
    assert any("SlowDown" in json.dumps(b) for b in warned(logged)), lines(logged)


def test_a_start_while_the_model_stays_unavailable_is_logged_at_warning_with_its_cause(
    world: World, logged: io.StringIO
) -> None:
    world.claude.script(*[Reply(status=529)] * 3)
    world.shop()
    world.run_lazies()
    assert "No basket this time" in world.slack.messages(CHANNEL)[-1]["text"]
    assert any("529" in json.dumps(b) or "Overloaded" in json.dumps(b) for b in warned(logged))


def test_a_basket_slack_would_not_take_is_logged_at_warning_with_its_cause(
    world: World, logged: io.StringIO
) -> None:
    world.slack.fail_next("chat.postMessage", status=500, times=10)
    world.shop()
    world.run_lazies()
    assert world.baskets() == []
    assert any("chat.postMessage" in json.dumps(b) for b in warned(logged)), warned(logged)


def test_an_order_the_destination_refused_is_logged_at_warning_with_its_cause(
    world: World, logged: io.StringIO
) -> None:
    world.slack.canvases_enabled = False
    basket = start_basket(world)
    world.click(basket, "approve_basket", user="U0BOB")
    world.run_lazies()
    assert "did not go through" in thread_texts(world, basket)[-1]
    assert any("canvas" in json.dumps(b).lower() for b in warned(logged)), warned(logged)


def test_a_logged_exception_carries_its_traceback_redacted(
    world: World, logged: io.StringIO, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A bug inside a turn (here: placing the order raises) is logged by ``log.exception`` with
    its whole traceback, the cause it was raised from included; a Slack token or an
    Authorization header in any message of the chain is masked."""
    basket = start_basket(world)

    async def broken(*args: Any, **kwargs: Any) -> Any:
        try:
            {}["k"]  # noqa: B018 - the cause
        except KeyError as exc:
            raise RuntimeError(
                "token xoxb-1234-5678-abcdef leaked, headers {'Authorization': 'Bearer s3cr3t'}"
            ) from exc

    monkeypatch.setattr("bot.steps.turn.place_order", broken)
    world.click(basket, "approve_basket", user="U0BOB")
    world.run_lazies()
    (line,) = [b for b in lines(logged) if "stack" in b]
    assert line["level"] == "ERROR" and line["message"] == "the turn failed"
    assert line["error"].startswith("RuntimeError: token [redacted]")
    stack = line["stack"]
    assert stack.startswith("Traceback (most recent call last):")
    assert "KeyError: 'k'" in stack and "direct cause of the following exception" in stack
    assert "in broken\n" in stack and "bot/steps/turn.py" in stack
    assert "xoxb-1234" not in stack and "s3cr3t" not in stack and "s3cr3t" not in logged.getvalue()
    assert line["tenant"] and line["session"] and line["lambda_request_id"]


def test_every_line_has_its_own_utc_time_in_milliseconds(world: World, logged: io.StringIO) -> None:
    start_basket(world)
    assert lines(logged)
    assert all(TIME.match(line["time"]) for line in lines(logged))


def test_the_lines_of_a_process_s_first_invocation_say_cold_start(served: World) -> None:
    """A fresh interpreter (as a new Lambda environment) writes the basket: every line of that
    first invocation says ``"cold_start": true``; the lines of a process whose runtime was built
    before (this test process, warm) do not say it."""
    with_logs = io.StringIO()
    handler = logging.StreamHandler(with_logs)
    handler.setFormatter(JsonFormatter())
    logging.getLogger().addHandler(handler)
    try:
        start_basket(served)
    finally:
        logging.getLogger().removeHandler(handler)
    warm = lines(with_logs)
    assert warm and not any("cold_start" in line for line in warm)
    served.shop()
    (fresh,) = served.run_lazies(fresh_process=True)
    cold = lines(fresh["logs"])
    assert any(line["message"].startswith("posting basket") for line in cold), fresh["logs"]
    assert all(line.get("cold_start") is True for line in cold), fresh["logs"]
