"""What a household sees while the model writes (issue 36): ``/shop`` to the first item on the
channel and to the whole basket, with the basket shown as it is written (a draft, one message
updated in place: ``bot.slack.draft``) against the same ``/shop`` without a draft (the basket
posted once whole, as before), in the same run; and the Slack calls a basket costs.

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

from bench.common import BASKET_17, Loopback, loopback
from bench.revisions import BASE, SPEED
from bench.table import Row, ratio, render

RUNS = 3
UPDATE_PER_MINUTE = 50  # chat.update: Tier 3, "50+ per minute" (docs.slack.dev, rate limits)


def _reply(request: dict[str, Any]) -> Any:
    from bot.sandbox.anthropic_api import Reply

    return Reply(text="\n".join(BASKET_17))


def _one(lb: Loopback, channel: str, drafts: bool) -> tuple[float, float, int]:
    """One /shop: seconds to the first item visible, to the whole basket; Slack calls made."""
    from bot.records.drafts import S3Drafts
    from workflow.errors import StoreError

    world, started = lb.world, time.perf_counter()
    lb.open_channel(channel)
    seen: dict[str, float] = {}
    done = threading.Event()

    def watch() -> None:
        while not done.is_set():
            for message in world.slack.messages(channel):
                text = str(message.get("text", ""))
                if "first" not in seen and ("item so far" in text or "Basket 1 of" in text):
                    seen["first"] = time.perf_counter() - started
                if "whole" not in seen and text.startswith("Basket 1 of"):
                    seen["whole"] = time.perf_counter() - started
            time.sleep(0.002)

    original = S3Drafts.claim
    if not drafts:

        def refused(*_: Any) -> Any:
            raise StoreError("drafts off: the basket posted once whole, as before")

        S3Drafts.claim = refused  # type: ignore[method-assign]
    calls = len(world.slack.calls)
    watcher = threading.Thread(target=watch, daemon=True)
    watcher.start()
    try:
        world.shop(text="dinners for four this week", channel_id=channel)
        world.run_lazies()
        time.sleep(0.01)
    finally:
        done.set()
        watcher.join()
        S3Drafts.claim = original  # type: ignore[method-assign]
    if "whole" not in seen:
        raise RuntimeError("basket 1 did not reach the channel")
    made = [c for c in world.slack.calls[calls:] if c.method.startswith("chat.")]
    return seen["first"], seen["whole"], len(made)


def measure(lb: Loopback) -> list[Row]:
    claude = lb.world.claude
    saved = claude.responder, claude.speed, claude.base_latency
    claude.responder, claude.speed, claude.base_latency = _reply, SPEED, BASE
    try:
        runs = [
            (_one(lb, f"C0DRAFT{i}", True), _one(lb, f"C0WHOLE{i}", False)) for i in range(RUNS)
        ]
    finally:
        claude.responder, claude.speed, claude.base_latency = saved
    first = sorted(d[0] for d, _ in runs)[RUNS // 2]
    whole = sorted(d[1] for d, _ in runs)[RUNS // 2]
    before = sorted(w[1] for _, w in runs)[RUNS // 2]
    calls = max(d[2] for d, _ in runs)
    from bot.slack.draft import EVERY

    model = f"model: {BASE} s + tokens ÷ {SPEED:.0f}/s, 17 items"
    per_minute = math.ceil(60 / EVERY)
    return [
        Row(
            f"/shop to the first item on the channel, median of {RUNS}",
            f"{first:.2f} s (a draft updated as items come)",
            f"the whole basket, as before: {before:.2f} s ({model})",
            ratio(first, before),
            target="≤ 1.5 s",
            ok=first <= 1.5,
        ),
        Row(
            f"/shop to the whole basket on the channel, median of {RUNS}",
            f"{whole:.2f} s (the draft becomes it)",
            f"without a draft: {before:.2f} s",
            ratio(whole, before),
            target="≤ 1.05x",
            ok=whole <= 1.05 * before,
        ),
        Row(
            "Slack chat.* calls per basket shown as written",
            f"{calls} (1 post, the updates, the basket)",
            f"a draft's chat.update at most {per_minute}/min; Tier 3: {UPDATE_PER_MINUTE}+/min",
            target=f"≤ {UPDATE_PER_MINUTE}/min",
            ok=per_minute <= UPDATE_PER_MINUTE,
        ),
    ]


if __name__ == "__main__":
    with loopback("bench-drafts") as running:
        print(render(measure(running)))
