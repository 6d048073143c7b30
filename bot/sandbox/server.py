"""``weekly-shop sandbox``: the real bot on 127.0.0.1, with Slack, Lambda and S3 played locally.

The stand-ins are the same ones the tests use: ``FakeSlack`` plays the Slack Web API
(``SLACK_API_URL``, with a per-run bot token, so only the bot process can call it), ``FakeLambda``
the Lambda Invoke API (``AWS_ENDPOINT_URL_LAMBDA``), and an in-process moto server S3. An aiohttp
server serves the channel page (``page.py``) and turns what the person does there into signed
Slack requests (``slack_requests``) delivered to ``bot.handler.handler``. Each lazy
self-invocation the bot makes arrives at the fake Invoke endpoint and runs as a new invocation,
so the sandbox takes the same path as production and Slack refuses here what it refuses there.

``--workspaces many`` boots the bot for many workspaces (``bot.installs``): an app client ID and
a per-run secret registered with the fake, a second workspace ("Garden club", with a channel of
its own), and neither installed until someone presses "Add to Slack" on the page
(``install_page``), which runs Slack's OAuth flow through the handler against the fake.
"""

from __future__ import annotations

import argparse
import asyncio
import logging
import os
import secrets
import signal
import sys
import time
from concurrent.futures import ThreadPoolExecutor
from typing import Any

from aiohttp import web

from .aws_events import lambda_context
from .lambda_api import FakeLambda, Invocation
from .lambda_async import invoke_async
from .page import PEOPLE, build_app
from .slack_api import FakeSlack
from .slack_workspace import SlackWorkspace

log = logging.getLogger(__name__)
BUCKET = "weekly-shop-sandbox"
TEAM = "T0SANDBOX"
CHANNEL = "C0WEEKLYSHOP"
GARDEN = "C0GARDEN"
BOT_USER = "U0SHOPBOT"
GARDEN_TEAM = "T0GARDEN"  # the second workspace with --workspaces many
ALLOTMENT = "C0ALLOTMENT"  # its channel
CLIENT_ID = "1000000001.2000000002"
NAMES = {TEAM: "Sandbox workspace", GARDEN_TEAM: "Garden club"}
FUNCTION_NAME = "weekly-shop-sandbox-slack"
TIMER_GROUP = "weekly-shop-sandbox-baskets"


class Sandbox:
    """The fakes, the bot's invocations, and the change notifications the page waits on. The
    fakes take only the bot: a per-run bot token (Slack) and AWS access key (Lambda); with many
    workspaces, no token until an install, and a per-run client secret to get one."""

    def __init__(self, secret: str, many: bool = False) -> None:
        self.secret = secret
        self.token = f"xoxb-sandbox-{secrets.token_hex(16)}"
        self.access_key_id = f"SANDBOX{secrets.token_hex(8).upper()}"
        self.slack = FakeSlack(
            self.token,
            team_id=TEAM,
            user_id=BOT_USER,
            bot_id="B0SHOPBOT",
            ts_base=int(time.time()),
        )
        self.slack.add_channel(CHANNEL, "weekly-shop", members=PEOPLE)
        # A channel the bot was never added to: /shop there is refused as Slack refuses it,
        # until someone types /invite @weekly-shop.
        self.slack.add_channel(GARDEN, "garden", members=PEOPLE, bot=False)
        self.client_id = CLIENT_ID if many else None
        self.client_secret = secrets.token_hex(16)
        if many:  # nobody holds a token until the app is added to a workspace
            self.slack.oauth.revoke(self.token)
            self.slack.oauth.register_app(CLIENT_ID, self.client_secret)
            garden = self.slack.add_workspace(GARDEN_TEAM)
            garden.add_channel(ALLOTMENT, "allotment", members=PEOPLE)
        self.lam = FakeLambda(on_invoke=self._lazy, access_key_id=self.access_key_id)
        self.channel = CHANNEL
        self.busy = 0
        self.version = 0
        self.banner = ""
        self.stopping = False
        self.pool = ThreadPoolExecutor(max_workers=8, thread_name_prefix="invocation")
        self._changed = asyncio.Event()
        self._loop = asyncio.get_running_loop()
        self._tasks: set[asyncio.Future[Any]] = set()
        self.slack.on_change = self.bump

    def workspace(self, team: object) -> SlackWorkspace:
        """The workspace the page shows: ``team``'s, the first one if it names none here."""
        known = isinstance(team, str) and team in self.slack.team_ids()
        return self.slack.workspace(team) if known else self.slack  # type: ignore[arg-type]

    def installed(self, team: str) -> bool:
        """Whether the app is in ``team``'s workspace (always, with one workspace)."""
        return self.client_id is None or self.slack.oauth.installed(team)

    def bump(self) -> None:
        """Tell every open page something changed (safe from any thread)."""

        def _set() -> None:
            self.version += 1
            self._changed.set()

        self._loop.call_soon_threadsafe(_set)

    def stop_streams(self) -> None:
        """End every page's change stream (``page.ui_events``): the sandbox is stopping."""
        self.stopping = True
        self._changed.set()

    async def changes(self) -> int:
        await asyncio.wait_for(self._changed.wait(), timeout=15)
        self._changed.clear()
        return self.version

    async def invoke(self, event: dict[str, Any], lazy: bool = False) -> dict[str, Any]:
        """Run ``bot.handler.handler`` in a worker thread, like one Lambda invocation; a
        ``lazy`` one (Bolt's self-invocation, a timer) as Lambda runs an asynchronous one:
        retried while it raises (here after 2 and 4 s, not Lambda's 1 and 3 minutes), then
        reported by the lost-runs queue (``lambda_async``)."""
        from bot.handler import handler

        def once(payload: dict[str, Any]) -> dict[str, Any]:
            response: dict[str, Any] = handler(payload, lambda_context(FUNCTION_NAME))
            return response

        def as_lambda() -> dict[str, Any]:
            run = invoke_async(once, event, between=lambda n: time.sleep(2.0 * n))
            return run.response or run.lost or {}

        if lazy:
            self.busy += 1
            self.bump()
        try:
            return await self._loop.run_in_executor(
                self.pool, as_lambda if lazy else lambda: once(event)
            )
        finally:
            if lazy:
                self.busy -= 1
            self.bump()

    def _lazy(self, invocation: Invocation) -> None:
        """A lazy self-invocation reached the fake Invoke API: run it as a new invocation."""

        def schedule() -> None:
            task = asyncio.ensure_future(self.invoke(invocation.payload, lazy=True))
            self._tasks.add(task)
            task.add_done_callback(self._tasks.discard)

        self._loop.call_soon_threadsafe(schedule)

    async def fast_forward(self, team: str | None = None) -> str:
        """Fire the basket timer due first (of ``team``'s sessions, when given), now, as
        Scheduler would at its time (moto never fires one): its schedule goes
        (ActionAfterCompletion: DELETE), its payload is invoked. Returns what it was
        ("remind 1", "expire"), or "" when no timer is armed."""
        from bot.handler import cold_start
        from bot.timers import schedule_name, to_payload

        rt, _ = cold_start()
        timers = rt.timers
        if timers is None:
            return ""
        pending = await self._loop.run_in_executor(self.pool, timers.pending)
        pending = [t for t in pending if team in (None, t.tenant)]
        if not pending:
            return ""
        timer = pending[0]
        name = schedule_name(timer.tenant, timer.session, timer.request, timer.slot)
        await self._loop.run_in_executor(self.pool, timers.delete, name)
        await self.invoke(to_payload(timer, timers.key), lazy=True)
        return f"{timer.kind} {timer.n}" if timer.kind == "remind" else timer.kind


def configure_bot(sandbox: Sandbox, s3_url: str) -> str:
    """Point the real bot at the local stand-ins; the banner says which shopper it uses. The
    weekly schedule's settings are cleared: nothing starts in the sandbox but what is typed."""
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
        AWS_ACCESS_KEY_ID=sandbox.access_key_id,
        AWS_SECRET_ACCESS_KEY="sandbox",
        AWS_DEFAULT_REGION="us-east-1",
    )
    if os.environ.get("ANTHROPIC_API_KEY"):
        model = os.environ.get("ANTHROPIC_MODEL") or "claude-haiku-5-5"
        return f"Baskets are written by Claude ({model})."
    return (
        "Offline shopper: baskets come from a built-in recipe table. "
        "Set ANTHROPIC_API_KEY to have Claude write them."
    )


async def serve(port: int, ready: asyncio.Event | None = None, many: bool = False) -> int:
    from moto.server import ThreadedMotoServer

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
    logging.getLogger("werkzeug").setLevel(logging.ERROR)
    moto = ThreadedMotoServer(ip_address="127.0.0.1", port=0, verbose=False)
    moto.start()
    sandbox.slack.start()
    sandbox.lam.start()
    host, moto_port = moto.get_host_and_port()
    sandbox.banner = configure_bot(sandbox, f"http://{host}:{moto_port}")
    try:
        from bot.handler import cold_start

        rt, _ = cold_start()
        logging.getLogger().setLevel(logging.WARNING)
        rt.store  # noqa: B018 - make the S3 client now, not on the first click
        await asyncio.get_running_loop().run_in_executor(
            None, lambda: rt._s3().create_bucket(Bucket=BUCKET)
        )
        timers = rt.timers
        if timers is not None:
            await asyncio.get_running_loop().run_in_executor(
                None, lambda: timers.client.create_schedule_group(Name=TIMER_GROUP)
            )
        stop = asyncio.Event()
        loop = asyncio.get_running_loop()
        for sig in (signal.SIGINT, signal.SIGTERM):
            loop.add_signal_handler(sig, stop.set)
        print(f"Weekly-shop sandbox at http://127.0.0.1:{bound}/  ({sandbox.banner})", flush=True)
        print("Press Ctrl-C to stop.", flush=True)
        if ready is not None:
            ready.set()
        await stop.wait()
        print("Stopping the sandbox.", flush=True)
        return 0
    finally:
        await runner.cleanup()
        sandbox.pool.shutdown(wait=False, cancel_futures=True)
        sandbox.slack.stop()
        sandbox.lam.stop()
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
    args = parser.parse_args(argv)
    return asyncio.run(serve(args.port, many=args.workspaces == "many"))
