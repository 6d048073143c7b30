"""``weekly-shop sandbox``: the real bot on 127.0.0.1, with Slack, Lambda and S3 played locally.

The stand-ins are the same ones the tests use: ``FakeSlack`` plays the Slack Web API
(``SLACK_API_URL``, with a per-run bot token, so only the bot process can call it), ``FakeLambda``
the Lambda Invoke API (``AWS_ENDPOINT_URL_LAMBDA``), and moto S3 and Scheduler behind the same
per-run AWS key, its signature checked (``moto_server.MotoStandIn``). An aiohttp server serves
the channel page (``page.py``) and turns what the person does there into signed
Slack requests (``slack_requests``) delivered to ``bot.handler.handler``. Each lazy
self-invocation the bot makes arrives at the fake Invoke endpoint and runs as a new invocation,
so the sandbox takes the same path as production and Slack refuses here what it refuses there.
moto stores the Scheduler schedules the bot arms (a basket's timers, a weekly run) and
``scheduler_player`` fires each when the played clock passes its time; Fast-forward jumps there.

``--workspaces many`` boots the bot for many workspaces (``bot.slack.installs``): an app client ID
and a per-run secret registered with the fake, a second workspace ("Garden club", with a channel of
its own), and neither installed until someone presses "Add to Slack" on the page
(``install_page``), which runs Slack's OAuth flow through the handler against the fake.

Who writes the baskets (``--model``): Claude when ``ANTHROPIC_API_KEY`` is set, else the offline
shopper (``workflow.shop.offline``), as without the option; ``--model stand-in``: a stand-in of
Claude's Messages API on 127.0.0.1 (``claude_stand_in``: the fake the tests use, streaming at the
stated 60 output tokens a second after 0.5 s, answering from the offline shopper's recipe table,
with a per-run key only the bot holds), so basket 1 is seen as it is written without a key;
``--model offline``: the offline shopper even when a key is set. The banner says which.
"""

from __future__ import annotations

import argparse
import asyncio
import importlib
import logging
import os
import secrets
import signal
import sys

import boto3
from aiohttp import web

from bot.steps.kroger_connect import REDIRECT_PATH

from . import claude_stand_in
from .anthropic_api import FakeAnthropic
from .moto_server import MotoStandIn
from .page import build_app
from .scheduler_player import SchedulePlayer
from .state import BUCKET, FUNCTION_NAME, TIMER_GROUP, Sandbox

__all__ = ["Sandbox", "configure_bot", "main", "serve", "shopper_banner"]

log = logging.getLogger(__name__)

# Said at start, and on the page: nothing is kept across a restart.
FORGETS = (
    "The sandbox keeps nothing when it stops: settings, baskets and keys start fresh "
    "each `make run`."
)


def configure_bot(
    sandbox: Sandbox,
    s3_url: str,
    page_url: str = "",
    stand_in: FakeAnthropic | None = None,
    offline: bool = False,
) -> str:
    """Point the real bot at the local stand-ins; the banner says which shopper it uses. The
    weekly schedule's settings are cleared: nothing starts in the sandbox but what is typed.
    With ``page_url`` (the page's own address), the page's ``/kroger/oauth_redirect`` is the
    bot's Kroger redirect URL, registered with the stand-in's app as a developer registers
    theirs (``kroger_page``). With ``stand_in``, Claude's stand-in writes the baskets (its URL
    and per-run key replace any key in the environment); with ``offline``, the offline shopper
    does, even if ``ANTHROPIC_API_KEY`` is set."""
    for name in ("AWS_PROFILE", "AWS_ENDPOINT_URL", "AWS_SESSION_TOKEN"):
        os.environ.pop(name, None)
    for name in ("SHOP_CHANNEL", "SHOP_REQUEST", "SHOP_SCHEDULE", "SHOP_TEAM"):
        os.environ.pop(name, None)
    if sandbox.client_id is not None:  # many workspaces: each one's token comes from its install
        os.environ.update(
            SLACK_CLIENT_ID=sandbox.client_id, SLACK_CLIENT_SECRET=sandbox.client_secret
        )
    else:
        for name in ("SLACK_CLIENT_ID", "SLACK_CLIENT_SECRET"):
            os.environ.pop(name, None)
    os.environ.update(
        SLACK_BOT_TOKEN="" if sandbox.client_id else sandbox.token,
        SLACK_SIGNING_SECRET=sandbox.secret,
        CHECKPOINT_BUCKET=BUCKET,
        SLACK_API_URL=sandbox.slack.url,
        AWS_ENDPOINT_URL_S3=s3_url,
        AWS_ENDPOINT_URL_SCHEDULER=s3_url,  # the same moto server plays EventBridge Scheduler
        AWS_ENDPOINT_URL_LAMBDA=sandbox.lam.url,
        TIMER_GROUP=TIMER_GROUP,
        TIMER_TARGET_ARN=f"arn:aws:lambda:us-east-1:123456789012:function:{FUNCTION_NAME}",
        TIMER_ROLE_ARN="arn:aws:iam::123456789012:role/weekly-shop-sandbox-timers",
        # The undo window: off unless asked for (ORDER_DELAY=2m make run), when an approved
        # basket shows Undo and the Timers panel fires its order at once.
        ORDER_DELAY=os.environ.get("ORDER_DELAY") or "0",
        # Where orders go: a canvas unless Settings choose Instacart (the stand-in) or the
        # webhook (the receiver on 127.0.0.1, its host pinned, its per-run CA trusted); the keys
        # typed in Settings are SSM parameters in the same moto server.
        INSTACART_API_URL=sandbox.instacart.url,
        # Prices at the Kroger stand-in's stores (Carol's Settings: a ZIP, then a store).
        KROGER_CLIENT_ID=sandbox.kroger.client_id,
        KROGER_CLIENT_SECRET=sandbox.kroger.client_secret,
        KROGER_API_URL=sandbox.kroger.url,
        WORKSPACE_SECRETS_PATH="/weekly-shop/sandbox/workspaces",
        AWS_ENDPOINT_URL_SSM=s3_url,
        **sandbox.webhook.env,
        AWS_ACCESS_KEY_ID=sandbox.access_key_id,
        AWS_SECRET_ACCESS_KEY=sandbox.secret_access_key,
        AWS_DEFAULT_REGION="us-east-1",
    )
    if page_url:
        redirect = f"{page_url.rstrip('/')}{REDIRECT_PATH}"
        sandbox.kroger.customers.register(sandbox.kroger.client_id, redirect)
        os.environ["KROGER_REDIRECT_URL"] = redirect
    if stand_in is not None:
        os.environ.update(ANTHROPIC_BASE_URL=stand_in.url, ANTHROPIC_API_KEY=stand_in.api_key)
        return claude_stand_in.banner(
            stand_in.speed or claude_stand_in.SPEED, stand_in.base_latency
        )
    if offline:
        os.environ.pop("ANTHROPIC_API_KEY", None)
    return shopper_banner()


def shopper_banner() -> str:
    """Who writes the baskets, as the environment says now (also ``weekly-shop dev``'s)."""
    if os.environ.get("ANTHROPIC_API_KEY"):
        model = os.environ.get("ANTHROPIC_MODEL") or "claude-haiku-5-5"
        return f"Baskets are written by Claude ({model})."
    return (
        "Offline shopper: baskets come from a built-in recipe table. "
        "Set ANTHROPIC_API_KEY to have Claude write them."
    )


async def serve(
    port: int, ready: asyncio.Event | None = None, many: bool = False, model: str = ""
) -> int:
    """Run the sandbox on 127.0.0.1:``port`` until SIGINT or SIGTERM; ``model``: "stand-in",
    "offline", or "" (Claude with ``ANTHROPIC_API_KEY``, else the offline shopper)."""
    sandbox = Sandbox(secret=secrets.token_hex(16), many=many)
    runner = web.AppRunner(build_app(sandbox), access_log=None)
    await runner.setup()
    site = web.TCPSite(runner, host="127.0.0.1", port=port)
    try:
        await site.start()
    except OSError:
        await runner.cleanup()
        print(
            f"weekly-shop sandbox: port {port} on 127.0.0.1 is taken "
            f"(another sandbox?). Try --port {port + 1}.",
            file=sys.stderr,
        )
        return 1
    bound = site._server.sockets[0].getsockname()[1]  # type: ignore[union-attr]
    moto = MotoStandIn(sandbox.access_key_id, sandbox.secret_access_key).start()
    sandbox.slack.start()
    sandbox.lam.start()
    sandbox.instacart.start()
    sandbox.kroger.start()
    sandbox.webhook.start()
    stand_in = claude_stand_in.start() if model == "stand-in" else None
    sandbox.banner = configure_bot(
        sandbox, moto.root, f"http://127.0.0.1:{bound}", stand_in, offline=model == "offline"
    )
    try:
        from bot.handler import cold_start
        from bot.runtime import Runtime
        from bot.settings import Settings

        rt, _ = cold_start(Runtime.from_settings(Settings.from_env(), clock=sandbox.clock))
        logging.getLogger().setLevel(logging.WARNING)
        rt.records.store  # noqa: B018 - make the S3 client now, not on the first click
        await asyncio.get_running_loop().run_in_executor(
            None, lambda: rt.aws.s3().create_bucket(Bucket=BUCKET)
        )
        if os.environ.get("ANTHROPIC_API_KEY"):  # its import takes seconds: not in the first /shop
            await asyncio.get_running_loop().run_in_executor(
                None, importlib.import_module, "anthropic"
            )
        timers = rt.schedules.timers
        if timers is not None:
            await asyncio.get_running_loop().run_in_executor(
                None, lambda: timers.client.create_schedule_group(Name=TIMER_GROUP)
            )
        # moto stores the schedules; the player fires them at their time on the played clock.
        sandbox.player = SchedulePlayer(
            boto3.session.Session().client("scheduler", endpoint_url=moto.root),
            TIMER_GROUP,
            sandbox.clock,
            sandbox.run_async,
            target_arn=os.environ["TIMER_TARGET_ARN"],
            on_change=sandbox.bump,
        ).start()
        stop = asyncio.Event()
        loop = asyncio.get_running_loop()
        for sig in (signal.SIGINT, signal.SIGTERM):
            loop.add_signal_handler(sig, stop.set)
        print(f"Weekly-shop sandbox at http://127.0.0.1:{bound}/  ({sandbox.banner})", flush=True)
        print(
            "Orders (Carol's Home tab, Settings, Where orders go): Instacart's stand-in takes "
            f"the API key {sandbox.instacart.api_key}; the webhook receiver is "
            f"{sandbox.webhook.url} with the signing secret {sandbox.webhook.secret}.",
            flush=True,
        )
        print(
            "Prices: Carol's Settings choose a store near ZIP 45202, 30308, 98109 or 80202 "
            "(the Kroger stand-in's); each person connects their Kroger cart on the Home tab.",
            flush=True,
        )
        print(FORGETS, flush=True)
        print("Press Ctrl-C to stop.", flush=True)
        if ready is not None:
            ready.set()
        await stop.wait()
        print("Stopping the sandbox.", flush=True)
        return 0
    finally:
        await runner.cleanup()
        if sandbox.player is not None:
            sandbox.player.stop()
        sandbox.pool.shutdown(wait=False, cancel_futures=True)
        sandbox.slack.stop()
        sandbox.lam.stop()
        sandbox.instacart.stop()
        sandbox.kroger.stop()
        sandbox.webhook.stop()
        if stand_in is not None:
            stand_in.stop()
        moto.stop()


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="weekly-shop sandbox",  # plain text: the module docstring is reST
        description="The real bot on 127.0.0.1, with Slack, Lambda and S3 played locally.",
    )
    parser.add_argument("--port", type=int, default=8080, help="port on 127.0.0.1 (default 8080)")
    parser.add_argument(
        "--workspaces",
        choices=("one", "many"),
        default="one",
        help="one workspace with its bot token (default), or many: two workspaces, each "
        "installed with the page's Add to Slack",
    )
    parser.add_argument(
        "--model",
        choices=("stand-in", "offline"),
        default="",
        help="who writes the baskets: stand-in (a local stand-in of Claude's API, streaming "
        "the offline shopper's recipe table at 60 output tokens a second: see basket 1 as it "
        "is written, no key needed) or offline (the recipe table, at once); default: Claude "
        "when ANTHROPIC_API_KEY is set, else offline",
    )
    args = parser.parse_args(argv)
    return asyncio.run(serve(args.port, many=args.workspaces == "many", model=args.model))
