"""``python -m bot.sandbox.invoke`` for tests: one invocation in this fresh process, which
``--crash-at POINT`` makes the process die (``os._exit``, no cleanup, like a killed Lambda) at
one point of a resume, to prove that the next invocation recovers:

    lock-taken          right after the session lock is taken
    checkpoint-read     right after the latest checkpoint is read
    model-call          when the shopper is asked for a basket
    between-saves       after the first of a resume's checkpoints, before the second
    checkpoint-written  after the run wrote its checkpoints, before anything is posted to Slack
    posted              after posting to Slack, before the lock is released
    lost-claimed        a lost run's marker claimed, before the person is told (``bot.steps.lost``)
    order-before-call   the order record written (placing), before the destination is called
    order-after-call    the destination answered (the canvas made, the webhook delivered), before
                        the record says so
    order-recorded      the order record says placed, before Slack is told
    draft-posted        a /shop's draft message posted, before its ts is recorded
    mid-draft           the draft showing its first items, the model still writing

``--deploy NAME`` runs it as the next deploy would (``tests.shop_next_deploy``): a changed graph.
``--hold-lock SECONDS`` keeps a session lock that long once taken (a slow invocation), so that
another process started at the same moment meets it held. ``--ahead SECONDS`` starts the bot's
clock that far ahead (the parent's played clock: ``bot.sandbox.clock``).
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from collections.abc import Callable
from typing import Any

from bot.sandbox.invoke import invoke_once

CRASH_EXIT = 70


def _die_after(owner: Any, name: str) -> None:
    original: Callable[..., Any] = getattr(owner, name)

    def wrapper(*args: Any, **kwargs: Any) -> Any:
        result = original(*args, **kwargs)
        os._exit(CRASH_EXIT)
        return result

    setattr(owner, name, wrapper)


def _die_async_after(owner: Any, name: str) -> None:
    original: Callable[..., Any] = getattr(owner, name)

    async def wrapper(*args: Any, **kwargs: Any) -> Any:
        result = await original(*args, **kwargs)
        os._exit(CRASH_EXIT)
        return result

    setattr(owner, name, wrapper)


def _die_at(owner: Any, name: str) -> None:
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        os._exit(CRASH_EXIT)

    setattr(owner, name, wrapper)


def _die_at_second(owner: Any, name: str) -> None:
    original: Callable[..., Any] = getattr(owner, name)
    calls = []

    async def wrapper(*args: Any, **kwargs: Any) -> Any:
        calls.append(1)
        if len(calls) == 2:
            os._exit(CRASH_EXIT)
        return await original(*args, **kwargs)

    setattr(owner, name, wrapper)


def _die_at_call(owner: Any, name: str, n: int) -> None:
    original: Callable[..., Any] = getattr(owner, name)
    calls = []

    def wrapper(*args: Any, **kwargs: Any) -> Any:
        calls.append(1)
        if len(calls) == n:
            os._exit(CRASH_EXIT)
        return original(*args, **kwargs)

    setattr(owner, name, wrapper)


def _die_at_report(owner: Any, name: str) -> None:
    from bot.slack.outcome import Report

    original: Callable[..., Any] = getattr(owner, name)

    def wrapper(self: Any, where: Any, outcome: Any) -> Any:
        if isinstance(outcome, Report):
            os._exit(CRASH_EXIT)
        return original(self, where, outcome)

    setattr(owner, name, wrapper)


def _hold_after(owner: Any, name: str, seconds: float) -> None:
    import time

    original: Callable[..., Any] = getattr(owner, name)

    def wrapper(*args: Any, **kwargs: Any) -> Any:
        result = original(*args, **kwargs)
        time.sleep(seconds)
        return result

    setattr(owner, name, wrapper)


def arm(point: str) -> None:
    from bot.orders.canvas import CanvasDestination
    from bot.orders.instacart import InstacartDestination
    from bot.orders.kroger_order import KrogerCartDestination
    from bot.orders.place import OrderDesk
    from bot.orders.webhook import WebhookDestination
    from bot.records.lost_markers import LostMarkers
    from bot.slack.outbox import Outbox
    from workflow.persistence.s3_lock import S3SessionLock
    from workflow.persistence.session import SessionCheckpoints
    from workflow.shop.shopper import ClaudeShopper

    if point == "lock-taken":
        _die_after(S3SessionLock, "acquire")
    elif point == "checkpoint-read":
        _die_async_after(SessionCheckpoints, "load")
    elif point == "model-call":
        _die_at(ClaudeShopper, "write")
    elif point == "between-saves":
        _die_at_second(SessionCheckpoints, "save")
    elif point == "checkpoint-written":
        _die_at_report(Outbox, "deliver")
    elif point == "posted":
        _die_at(S3SessionLock, "release")
    elif point == "lost-claimed":
        _die_after(LostMarkers, "claim")
    elif point == "order-before-call":
        _die_at(CanvasDestination, "place")
        _die_at(WebhookDestination, "place")
        _die_at(InstacartDestination, "place")
        _die_at(KrogerCartDestination, "place")
    elif point == "order-after-call":
        _die_after(CanvasDestination, "place")
        _die_after(WebhookDestination, "place")
        _die_after(InstacartDestination, "place")
        _die_after(KrogerCartDestination, "place")
    elif point == "order-recorded":
        _die_after(OrderDesk, "_done")
    elif point == "draft-posted":
        from bot.records.drafts import S3Drafts

        _die_at(S3Drafts, "record")
    elif point == "mid-draft":
        import bot.slack.draft

        bot.slack.draft.EVERY = 0.0  # each item shown at once: the fake answers in milliseconds
        _die_at_call(bot.slack.draft.Draft, "update", 3)  # two updates shown, the third never
    else:
        raise SystemExit(f"unknown crash point {point!r}")


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--crash-at")
    parser.add_argument("--deploy")
    parser.add_argument("--hold-lock", type=float, default=0.0)
    parser.add_argument("--ahead", type=float, default=0.0)
    args = parser.parse_args()
    event = json.load(sys.stdin)
    if args.ahead:  # the parent's played clock: the hours it made pass (bot.sandbox.clock)
        from bot.handler import cold_start
        from bot.runtime import Runtime
        from bot.sandbox.clock import PlayedClock
        from bot.settings import Settings

        clock = PlayedClock()
        clock.ahead = args.ahead
        cold_start(Runtime.from_settings(Settings.from_env(), clock=clock))
    if args.deploy:
        from tests.shop_next_deploy import install

        install(args.deploy)
    if args.crash_at:
        arm(args.crash_at)
    if args.hold_lock:
        from workflow.persistence.s3_lock import S3SessionLock

        _hold_after(S3SessionLock, "acquire", args.hold_lock)
    print(json.dumps(invoke_once(event)))


if __name__ == "__main__":
    main()
