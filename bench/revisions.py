"""What a change costs the household (issue 23): output tokens and waiting for a one-line change
("no pizza, add oat milk") asked as a whole basket again (before) and as the difference (now),
the input tokens billed per revision with and without the prompt cache, and an item edit by
hand (Edit items, no model call) from its submit to the updated message, in a fresh process,
against the same run's floor of an approve (``bench.slack.FLOOR``).

The model's reply time is a model, not a measurement of Claude: the fake Messages API answers
``BASE`` + output tokens ÷ ``SPEED`` seconds later (0.5 s + tokens ÷ 60 per second), and counts
a reply's output tokens as four characters of what it writes (the tool input's JSON) to a token
(``bot.sandbox.anthropic_cache.tokens_of``); input tokens are counted the same way, and cached as
the API caches (a prefix under the model's minimum is not cached: 1,024 tokens is assumed for
the default model, whose figure the sources did not give). Everything else is real: the bot's
handler in this process, its lazy runs, moto's S3, the fake Slack.

    python -m bench.revisions
"""

from __future__ import annotations

import dataclasses
import time
from typing import Any

from bench.common import BASKET_17, Loopback, loopback
from bench.table import Row, ratio, render

SPEED = 60.0  # output tokens a second
BASE = 0.5  # seconds before the first token
CHANGE = "no pizza, add oat milk"
PIZZA = "pizza bases or 500 g pizza dough"
# A week's request long enough for the cached prefix to pass the model's minimum (a household
# that writes out its week in detail): about 2,100 characters.
LONG_WEEK = "; ".join(
    f"{day}: {meal}, with a side salad, and lunch boxes for two children (no nuts at school)"
    for day in ("Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday", "Sunday")
    for meal in ("lentil soup and bread", "pasta with tomato sauce", "a tray bake")
)


def _responder(request: dict[str, Any]) -> Any:
    """Basket 1: the 17 items; a change: the difference when asked for one (tool_choice any),
    else the 17 items without the pizza and with oat milk, whole."""
    from bot.sandbox.anthropic_api import Reply, prompt_of

    if "The household asks for this change" not in prompt_of(request):
        return Reply(text="\n".join(BASKET_17))
    if request.get("tool_choice", {}).get("type") == "any":
        oat = {"name": "oat milk", "quantity": 1, "unit": "l", "aisle": "dairy and eggs"}
        return Reply(tool="revise_basket", tool_input={"remove": [PIZZA], "set": [], "add": [oat]})
    lines = [line for line in BASKET_17 if "pizza" not in line]
    return Reply(text="\n".join([*lines, "1 l oat milk"]))


class _Rewriting:
    """The shopper as it was: every change answered with the whole basket again."""

    label = "Claude (whole basket)"

    def __init__(self) -> None:
        from workflow.shop.shopper import ClaudeShopper

        self.inner = ClaudeShopper()

    async def write(self, brief: Any) -> Any:
        return await self.inner.write(dataclasses.replace(brief, last_items=()))


def _boot(lb: Loopback, rewrite: bool) -> None:
    from bot.handler import cold_start
    from bot.runtime import Runtime
    from bot.settings import Settings

    factory = _Rewriting if rewrite else None
    cold_start(Runtime.from_settings(Settings.from_env(), s3_client=lb.s3, shopper_factory=factory))


def _one_change(
    lb: Loopback, rewrite: bool, week: str = "dinners for four this week"
) -> tuple[float, float, dict[str, Any], Any]:
    """Basket 1 (its reply time), then the change from its submit to basket 2 on the channel:
    (basket 1 s, change s, the change's request, the change's usage)."""
    world = lb.world
    _boot(lb, rewrite)
    t0 = time.perf_counter()
    world.shop(text=week)
    world.run_lazies()
    first = time.perf_counter() - t0
    basket = world.baskets()[-1]
    world.click(basket, "change_basket")
    world.run_lazies()
    t0 = time.perf_counter()
    world.submit_change(CHANGE)
    world.run_lazies()
    change = time.perf_counter() - t0
    second = world.baskets()[-1]
    if "Basket 2" not in str(second.get("blocks")):
        raise RuntimeError("basket 2 did not reach the channel")
    return first, change, world.claude.requests[-1], world.claude.usages[-1]


def _billed(usage: dict[str, int]) -> float:
    """Input tokens as billed, in base-price tokens: writes cost 1.25x, reads 0.1x."""
    return (
        usage["input_tokens"]
        + 1.25 * usage["cache_creation_input_tokens"]
        + 0.1 * usage["cache_read_input_tokens"]
    )


def _uncached(body: dict[str, Any]) -> dict[str, int]:
    """The same request's usage with no cache_control anywhere."""
    import json

    from bot.sandbox.anthropic_cache import PromptCache

    plain = json.loads(json.dumps(body).replace('"cache_control": {"type": "ephemeral"}, ', ""))
    plain = json.loads(json.dumps(plain).replace(', "cache_control": {"type": "ephemeral"}', ""))
    return PromptCache().usage(plain, 0.0)


def measure(lb: Loopback) -> list[Row]:
    claude = lb.world.claude
    saved = claude.responder, claude.speed, claude.base_latency
    claude.responder, claude.speed, claude.base_latency = _responder, SPEED, BASE
    try:
        one_before, rewrite_s, _, rewrite = _one_change(lb, rewrite=True)
        basket_one = claude.usages[-2]
        one_now, diff_s, request, diff = _one_change(lb, rewrite=False)
        _, _, long_request, long_diff = _one_change(lb, rewrite=False, week=LONG_WEEK)
    finally:
        claude.responder, claude.speed, claude.base_latency = saved
        _boot(lb, rewrite=False)
    from bot.sandbox.anthropic_cache import minimum_of, prefix_tokens

    model = f"model: {BASE} s + tokens ÷ {SPEED:.0f}/s"
    cached, plain = _billed(diff), _billed(_uncached(request))
    prefix, least = prefix_tokens(request), minimum_of(str(request["model"]))
    return [
        Row(
            "output tokens, basket 1 (17 items)",
            f"{basket_one['output_tokens']}",
            f"/shop to basket 1 on the channel: {one_before:.1f} s ({model})",
        ),
        Row(
            f'output tokens, a one-line change ("{CHANGE}")',
            f"{diff['output_tokens']} (the difference)",
            f"{rewrite['output_tokens']} (the whole basket again, before)",
            ratio(diff["output_tokens"], rewrite["output_tokens"]),
            target="≤ 0.20x",
            ok=diff["output_tokens"] <= 0.2 * rewrite["output_tokens"],
        ),
        Row(
            "Change… submit to basket 2 on the channel",
            f"{diff_s:.2f} s (the difference)",
            f"{rewrite_s:.2f} s (the whole basket again, before; {model})",
            ratio(diff_s, rewrite_s),
            target="≤ 0.35x",
            ok=diff_s <= 0.35 * rewrite_s,
        ),
        Row(
            "input tokens billed per revision (base-price tokens)",
            f"{cached:.0f} with the cache marks",
            f"{plain:.0f} without (the marked prefix: {prefix} tokens, the model caches "
            f"{least} or more; read {diff['cache_read_input_tokens']}, "
            f"written {diff['cache_creation_input_tokens']})",
            ratio(cached, plain),
        ),
        Row(
            "the same, with a week's request written out in detail",
            f"{_billed(long_diff):.0f} with the cache marks",
            f"{_billed(_uncached(long_request)):.0f} without (the marked prefix: "
            f"{prefix_tokens(long_request)} tokens; read "
            f"{long_diff['cache_read_input_tokens']}, written "
            f"{long_diff['cache_creation_input_tokens']})",
            ratio(_billed(long_diff), _billed(_uncached(long_request))),
        ),
    ]


def _pending_edit(lb: Loopback) -> tuple[dict[str, Any], dict[str, Any]]:
    """Basket 1 posted, Edit items pressed and its form filled in, the form submitted with the
    first item's quantity doubled: (the basket message, the submission's lazy event, not run)."""
    import json

    from bot.sandbox.slack_requests import view_submission
    from bot.sandbox.world import SECRET
    from bot.slack.edit_form import EDIT_MODAL

    world = lb.world
    world.shop(text="dinners for four this week")
    world.run_lazies()
    basket = world.baskets()[-1]
    world.click(basket, "edit_basket")
    world.run_lazies()
    view = world.slack.open_view("U0BOB")
    if view is None or view.get("callback_id") != EDIT_MODAL:
        raise RuntimeError("the Edit items form did not open")
    (first,) = [b for b in view["blocks"] if b.get("block_id") == "qty-0"]
    doubled = str(2 * float(first["element"]["initial_value"]))
    ack = world.send(
        view_submission(
            SECRET,
            callback_id=EDIT_MODAL,
            private_metadata=view["private_metadata"],
            values={"qty-0": {"quantity": {"type": "number_input", "value": doubled}}},
            user_id="U0BOB",
        )
    )
    if ack.get("body"):
        raise RuntimeError(f"the edit was refused: {ack['body']}")
    (lazy,) = world.lam.take()
    world.slack.close_view("U0BOB")
    return basket, json.loads(json.dumps(lazy.payload))


def fresh_edit(lb: Loopback, n: int = 9) -> Row:
    """An item edit in a fresh process until its response is out (the message updated), against
    the floor of an approve measured the same way in the same run (``bench.slack``)."""
    import json
    import statistics
    import sys

    from bench.slack import PendingClick, floor_argv, process_env, time_to_first_line

    env = process_env(lb)
    argv = [sys.executable, "-m", "bot.sandbox.invoke"]
    _, warm = _pending_edit(lb)
    time_to_first_line(argv, env, json.dumps(warm))  # compiles what an edit imports, once
    ours, floor = [], []
    for _ in range(n):
        basket, payload = _pending_edit(lb)
        calls = lb.world.claude.message_calls
        ours.append(time_to_first_line(argv, env, json.dumps(payload)))
        floor.append(time_to_first_line(floor_argv(PendingClick("C0SHOP", basket, {})), env))
        shown = lb.world.slack.message("C0SHOP", basket["ts"]) or {}
        if "edited by" not in json.dumps(shown.get("blocks")):
            raise RuntimeError("the edited basket did not reach the channel")
        if lb.world.claude.message_calls != calls:
            raise RuntimeError("an edit called the model")
    o, b = statistics.median(ours), statistics.median(floor)
    return Row(
        f"item edit in a fresh process, submit to the updated message, median of {n}",
        f"{o * 1000:.0f} ms (no model call)",
        f"an approve's floor, the same way: {b * 1000:.0f} ms",
        ratio(o, b),
        target="≤ 1.2x",
        ok=o <= 1.2 * b,
    )


def main() -> None:
    with loopback("bench-revisions") as lb:
        print(render([*measure(lb), fresh_edit(lb)]))


if __name__ == "__main__":
    main()
