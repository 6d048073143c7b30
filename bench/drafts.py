"""What a household sees while the model writes (issue 36): ``/shop`` to the first item on the
channel and to the whole basket, with the basket shown as it is written (a draft, one message
updated in place: ``bot.slack.draft``) against the same ``/shop`` without a draft (the basket
posted once whole, as before), in the same run; the same for Change… (its submit to the first
change shown, and to basket 2 whole); and the Slack calls each costs.

The model's speed is the stated model of ``bench.revisions`` (the fake Messages API answers
``BASE`` + output tokens ÷ ``SPEED`` seconds, streamed piece by piece on that schedule:
``bot.sandbox.anthropic_stream``); everything else is real: the bot's handler in this process,
its lazy run, moto's S3, the fake Slack. What is "visible" is what the fake Slack holds, read
every few milliseconds by a watcher thread while the lazy run runs.

    python -m bench.drafts
"""

from __future__ import annotations

import math
import threading
import time
from typing import Any

from bench.common import Loopback, loopback
from bench.revisions import BASE, CHANGE, SPEED, _responder
from bench.table import Row, ratio, render

RUNS = 3
UPDATE_PER_MINUTE = 50  # chat.update: Tier 3, "50+ per minute" (docs.slack.dev, rate limits)


def _one(lb: Loopback, channel: str, drafts: bool) -> tuple[float, float, int]:
    """One /shop: seconds to the first item visible, to the whole basket; Slack calls made."""
    from bot.records.drafts import S3Drafts
    from workflow.errors import StoreError

    world = lb.world
    lb.open_channel(channel)
    original = S3Drafts.claim
    if not drafts:

        def refused(*_: Any) -> Any:
            raise StoreError("drafts off: the basket posted once whole, as before")

        S3Drafts.claim = refused  # type: ignore[method-assign]
    calls = len(world.slack.calls)
    try:
        seen = _watched(
            lb,
            channel,
            lambda: (
                world.shop(text="dinners for four this week", channel_id=channel),
                world.run_lazies(),
            ),
            first=("item so far", "items so far", "Basket 1 of"),
            whole="Basket 1 of",
        )
    finally:
        S3Drafts.claim = original  # type: ignore[method-assign]
    made = [c for c in world.slack.calls[calls:] if c.method.startswith("chat.")]
    return seen[0], seen[1], len(made)


def _one_change(lb: Loopback, channel: str, drafts: bool) -> tuple[float, float, int]:
    """Basket 1 in ``channel``, then Change… ("no pizza, add oat milk", answered as the
    difference): seconds from the submit to the first change visible, to basket 2 whole; the
    change's Slack chat.* calls."""
    from bot.records.drafts import S3Drafts
    from workflow.errors import StoreError

    world = lb.world
    lb.open_channel(channel)
    world.shop(text="dinners for four this week", channel_id=channel)
    world.run_lazies()
    basket = world.baskets(channel)[-1]
    world.click(basket, "change_basket", channel_id=channel)
    world.run_lazies()
    original = S3Drafts.claim
    if not drafts:

        def refused(*_: Any) -> Any:
            raise StoreError("drafts off: basket 2 posted once whole, as before")

        S3Drafts.claim = refused  # type: ignore[method-assign]
    calls = len(world.slack.calls)
    try:
        seen = _watched(
            lb,
            channel,
            lambda: (world.submit_change(CHANGE), world.run_lazies()),
            first=("change so far", "changes so far", "Basket 2 of"),
            whole="Basket 2 of",
        )
    finally:
        S3Drafts.claim = original  # type: ignore[method-assign]
    made = [c for c in world.slack.calls[calls:] if c.method.startswith("chat.")]
    return seen[0], seen[1], len(made)


def _watched(
    lb: Loopback, channel: str, act: Any, first: tuple[str, ...], whole: str
) -> tuple[float, float]:
    """Seconds from ``act`` to a message of ``channel`` whose text holds one of ``first``, and
    to one that starts with ``whole``: what the fake Slack holds, read every 2 ms meanwhile."""
    world, seen, done = lb.world, {}, threading.Event()
    started = time.perf_counter()

    def watch() -> None:
        while not done.is_set():
            for message in world.slack.messages(channel):
                text = str(message.get("text", ""))
                if "first" not in seen and any(f in text for f in first):
                    seen["first"] = time.perf_counter() - started
                if "whole" not in seen and text.startswith(whole):
                    seen["whole"] = time.perf_counter() - started
            time.sleep(0.002)

    watcher = threading.Thread(target=watch, daemon=True)
    watcher.start()
    try:
        act()
        time.sleep(0.01)
    finally:
        done.set()
        watcher.join()
    if "whole" not in seen:
        raise RuntimeError(f"{whole!r} did not reach the channel")
    return seen["first"], seen["whole"]


def measure(lb: Loopback) -> list[Row]:
    claude = lb.world.claude
    saved = claude.responder, claude.speed, claude.base_latency
    claude.responder, claude.speed, claude.base_latency = _responder, SPEED, BASE
    try:
        runs = [
            (_one(lb, f"C0DRAFT{i}", True), _one(lb, f"C0WHOLE{i}", False)) for i in range(RUNS)
        ]
        changes = [
            (_one_change(lb, f"C0CHDRAFT{i}", True), _one_change(lb, f"C0CHWHOLE{i}", False))
            for i in range(RUNS)
        ]
    finally:
        claude.responder, claude.speed, claude.base_latency = saved
    from bot.slack.draft import EVERY

    speed = f"model: {BASE} s + tokens ÷ {SPEED:.0f}/s"
    per_minute = math.ceil(60 / EVERY)
    calls = max(d[2] for d, _ in runs)
    c_calls, c_calls_before = max(d[2] for d, _ in changes), max(w[2] for _, w in changes)
    return [
        *_shown_rows(
            runs,
            ("/shop to the first item on the channel", "a draft updated as items come"),
            ("/shop to the whole basket on the channel", "the whole basket"),
            f"{speed}, 17 items",
        ),
        *_shown_rows(
            changes,
            (
                f'Change… ("{CHANGE}") submit to its first change on the channel',
                "a draft of basket 2, updated as changes come",
            ),
            ("Change… submit to basket 2 whole on the channel", "basket 2 whole"),
            speed,
        ),
        Row(
            "Slack chat.* calls per change shown as written",
            f"{c_calls} (1 post, the updates, basket 2, basket 1 marked)",
            f"without a draft: {c_calls_before}",
        ),
        Row(
            "Slack chat.* calls per basket shown as written",
            f"{calls} (1 post, the updates, the basket)",
            f"a draft's chat.update at most {per_minute}/min; Tier 3: {UPDATE_PER_MINUTE}+/min",
            target=f"≤ {UPDATE_PER_MINUTE}/min",
            ok=per_minute <= UPDATE_PER_MINUTE,
        ),
    ]


Runs = list[tuple[tuple[float, float, int], tuple[float, float, int]]]


def _shown_rows(
    runs: Runs, first: tuple[str, str], whole: tuple[str, str], model: str
) -> list[Row]:
    """The two rows of a thing shown as it is written: its first part on the channel, and the
    whole, each against the whole posted once (as before), medians of the runs."""
    median = RUNS // 2
    seen = sorted(d[0] for d, _ in runs)[median]
    done = sorted(d[1] for d, _ in runs)[median]
    before = sorted(w[1] for _, w in runs)[median]
    return [
        Row(
            f"{first[0]}, median of {RUNS}",
            f"{seen:.2f} s ({first[1]})",
            f"{whole[1]}, as before: {before:.2f} s ({model})",
            ratio(seen, before),
            target="≤ 1.5 s",
            ok=seen <= 1.5,
        ),
        Row(
            f"{whole[0]}, median of {RUNS}",
            f"{done:.2f} s (the draft becomes it)",
            f"without a draft: {before:.2f} s",
            ratio(done, before),
            target="≤ 1.05x",
            ok=done <= 1.05 * before,
        ),
    ]


if __name__ == "__main__":
    with loopback("bench-drafts") as running:
        print(render(measure(running)))
