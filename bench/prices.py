"""What prices cost the household (issue 34): the time from ``/shop`` to a priced basket on the
channel against an unpriced one (a deploy without a Kroger app), and the Kroger product calls a
17-item basket makes, and an edit of one item.

Both latencies are models, not measurements: the fake Messages API answers ``BASE`` + output
tokens ÷ ``SPEED`` seconds later (``bench.revisions``'s model), and the Kroger stand-in answers
each product search ``LATENCY`` seconds late (what a search costs at Kroger is not published; a
quarter of a second is assumed). The bot searches at most ``kroger_prices.WORKERS`` at once.
Everything else is real: the bot's handler in this process, its lazy runs, moto's S3, the fake
Slack, the Kroger stand-in over loopback HTTP.

    python -m bench.prices
"""

from __future__ import annotations

import asyncio
import os
import time
from typing import Any

from bench.common import Loopback, loopback
from bench.revisions import BASE, SPEED
from bench.table import Row, ratio, render

LATENCY = 0.25  # seconds a product search, modelled
# BASKET_17 as a US shopper names it (the stand-in's catalogue sells most of these).
US_17 = [
    "500 g boneless skinless chicken breasts",
    "2 red bell peppers",
    "1 lb broccoli crowns",
    "2 lb carrots",
    "3 ct garlic bulbs",
    "1 small piece fresh ginger",
    "100 ml soy sauce",
    "2 celery sticks",
    "250 g red lentils",
    "400 g diced tomatoes",
    "1 l vegetable broth",
    "2 vegetable bouillon cubes",
    "2 pizza crusts",
    "200 g tomato sauce",
    "250 g shredded mozzarella",
    "8 oz cremini mushrooms",
    "100 g pepperoni",
]
STORE = "01400943"  # the stand-in's Kroger Over-the-Rhine
ROUNDS = 3
TEAM = "T0TEAM"  # the fake Slack's workspace (bot.sandbox.slack_events)


def _boot(lb: Loopback, kroger: Any | None) -> None:
    from bot.handler import cold_start
    from bot.records.workspace_settings import ChosenStore
    from bot.runtime import Runtime
    from bot.settings import Settings

    names = ("KROGER_CLIENT_ID", "KROGER_CLIENT_SECRET", "KROGER_API_URL")
    for name in names:
        os.environ.pop(name, None)
    if kroger is not None:
        os.environ.update(
            zip(names, (kroger.client_id, kroger.client_secret, kroger.url), strict=True)
        )
    rt, _ = cold_start(Runtime.from_settings(Settings.from_env(), s3_client=lb.s3))
    if kroger is not None:
        from dataclasses import replace

        store = ChosenStore(location_id=STORE, name="Kroger Over-the-Rhine")
        loaded = rt.records.settings_store.read(TEAM)  # (an earlier bench may have saved some)
        saved = replace(loaded.saved or rt.defaults, store=store)
        rt.records.settings_store.save(TEAM, saved, loaded.etag)


def _shop_seconds(lb: Loopback) -> float:
    """``/shop`` to basket 1 on the channel, with nothing cached (a week's basket: the
    container's 15-minute product cache has long expired since the last one)."""
    from bot.runtime import shop

    shop._KROGER.clear()
    world = lb.world
    t0 = time.perf_counter()
    world.shop(text="dinners for four this week")
    world.run_lazies()
    took = time.perf_counter() - t0
    if "Basket 1" not in str(world.baskets()[-1].get("blocks")):
        raise RuntimeError("basket 1 did not reach the channel")
    return took


def _edit_calls(kroger: Any) -> tuple[int, int]:
    """Product calls for a 17-item basket and for an edit of one of its items, through the
    price-basket step and the bot's pricer (a fresh cache each: what the step asks for)."""
    from bot.orders.kroger import KrogerClient, KrogerConfig
    from bot.orders.kroger_prices import KrogerPricer, ProductCache
    from bot.sandbox.anthropic_tools import basket_items
    from workflow.engine.runner import Run
    from workflow.persistence.memory_store import InMemoryCheckpointStore
    from workflow.persistence.session import SessionCheckpoints
    from workflow.persistence.signing import CheckpointSigner
    from workflow.shop.decision import BasketDecision
    from workflow.shop.graph import build_priced_workflow
    from workflow.shop.offline import OfflineShopper
    from workflow.shop.pricing import Where
    from workflow.shop.shopper import ShopperReply

    items = basket_items("\n".join(US_17))

    class Fixed(OfflineShopper):
        async def write(self, brief: Any) -> ShopperReply:
            return ShopperReply(items=items, output_tokens=0)

    config = KrogerConfig(kroger.client_id, kroger.client_secret, kroger.url)
    client, where = KrogerClient(config), Where(STORE, "Kroger Over-the-Rhine")
    store, signer = InMemoryCheckpointStore(), CheckpointSigner(b"bench-prices-key-0123456789abcd")

    async def run() -> tuple[int, int]:
        basket_cache, edit_cache = ProductCache(), ProductCache()
        flow = build_priced_workflow(Fixed(), 3, KrogerPricer(client, where, basket_cache))
        run = Run.start(flow, "dinners", SessionCheckpoints(store, signer, "T1", "s"))
        [e async for e in run.watch()]
        flow = build_priced_workflow(Fixed(), 3, KrogerPricer(client, where, edit_cache))
        resumed = await Run.resume(flow, SessionCheckpoints(store, signer, "T1", "s"))
        assert resumed is not None
        ((request_id, _),) = resumed.pending_requests.items()
        edited = [*items[:-1], basket_items("1 lb ground beef")[0]]
        resumed.respond(request_id, BasketDecision.edited_to(edited, 1), answered_by="U0BOB")
        [e async for e in resumed.watch()]
        return basket_cache.calls, edit_cache.calls

    return asyncio.run(run())


def measure(lb: Loopback) -> list[Row]:
    from bot.sandbox.anthropic_api import Reply
    from bot.sandbox.kroger_api import FakeKroger

    claude = lb.world.claude
    saved = claude.responder, claude.speed, claude.base_latency

    def responder(request: dict[str, Any]) -> Any:
        return Reply(text="\n".join(US_17))

    claude.responder, claude.speed, claude.base_latency = responder, SPEED, BASE
    with FakeKroger(latency=LATENCY) as kroger:
        try:
            _boot(lb, None)
            unpriced = sorted(_shop_seconds(lb) for _ in range(ROUNDS))[ROUNDS // 2]
            _boot(lb, kroger)
            before = kroger.calls("products")
            priced = sorted(_shop_seconds(lb) for _ in range(ROUNDS))[ROUNDS // 2]
            per_basket = (kroger.calls("products") - before) / ROUNDS
            text = str(lb.world.baskets()[-1]["blocks"])
        finally:
            claude.responder, claude.speed, claude.base_latency = saved
            _boot(lb, None)
        basket_calls, edit_calls = _edit_calls(kroger)
    if "at Kroger Over-the-Rhine" not in text:
        raise RuntimeError("the basket was not priced")
    model = f"model: Claude {BASE} s + tokens ÷ {SPEED:.0f}/s, a search {LATENCY} s"
    return [
        Row(
            "/shop to a priced basket on the channel (17 items)",
            f"{priced:.2f} s (priced at a store)",
            f"{unpriced:.2f} s (no Kroger app; {model})",
            ratio(priced, unpriced),
            target="≤ 1.3x",
            ok=priced <= 1.3 * unpriced,
        ),
        Row(
            "Kroger product calls, a 17-item basket / an edit of one item",
            f"{basket_calls} / {edit_calls}",
            f"{per_basket:.0f} a basket through Slack (a cold cache each)",
        ),
    ]


def main() -> None:
    with loopback("bench-prices") as lb:
        print(render(measure(lb)))


if __name__ == "__main__":
    main()
