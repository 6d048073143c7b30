"""One running sandbox: its stand-ins, its cast, the bot's invocations, and the change
notifications the page waits on. Below the page (``page``, ``home_page``, ``install_page``) and the
server that starts it all (``server``), so that neither imports the other's module back.
"""

from __future__ import annotations

import asyncio
import json
import logging
import secrets
import time
from concurrent.futures import Future, ThreadPoolExecutor
from typing import Any

from .aws_events import lambda_context
from .clock import PlayedClock
from .instacart_api import FakeInstacart
from .kroger_api import FakeKroger
from .lambda_api import FakeLambda, Invocation
from .lambda_async import invoke_async
from .moto_server import new_credentials
from .scheduler_player import SchedulePlayer
from .slack_api import FakeSlack
from .slack_workspace import SlackWorkspace
from .webhook_receiver import WebhookReceiver

PEOPLE = {"U0ALICE": "Alice", "U0BOB": "Bob", "U0CAROL": "Carol"}


def person(request_user: str) -> str:
    """Who the page says "You are": one of PEOPLE (Alice if it says anything else)."""
    return request_user if request_user in PEOPLE else "U0ALICE"


log = logging.getLogger(__name__)
BUCKET = "weekly-shop-sandbox"
TEAM = "T0SANDBOX"
CHANNEL = "C0WEEKLYSHOP"
GARDEN = "C0GARDEN"
BOT_USER = "U0SHOPBOT"
GARDEN_TEAM = "T0GARDEN"  # the second workspace with --workspaces many
ALLOTMENT = "C0ALLOTMENT"  # its channel
CLIENT_ID = "1000000001.2000000002"
NAMES = {TEAM: "Sandbox", GARDEN_TEAM: "Garden club"}  # "the Sandbox Slack workspace"
FUNCTION_NAME = "weekly-shop-sandbox-slack"
TIMER_GROUP = "weekly-shop-sandbox-baskets"


class Sandbox:
    """The fakes, the bot's invocations, and the change notifications the page waits on. The
    fakes take only the bot: a per-run bot token (Slack) and AWS key (Lambda; S3 and Scheduler
    check its SigV4 signature too, ``moto_server``); with many workspaces, no token until an
    install, and a per-run client secret to get one."""

    def __init__(self, secret: str, many: bool = False) -> None:
        self.secret = secret
        self.clock = PlayedClock()  # the bot's: Fast-forward moves it to the timer's time
        self.token = f"xoxb-sandbox-{secrets.token_hex(16)}"
        self.access_key_id, self.secret_access_key = new_credentials()
        self.slack = FakeSlack(
            self.token,
            team_id=TEAM,
            user_id=BOT_USER,
            bot_id="B0SHOPBOT",
            ts_base=None,  # each message's ts is when it was posted: the page shows it
            wall=self.clock,
        )
        self.slack.add_channel(CHANNEL, "weekly-shop", members=PEOPLE)
        # A channel the bot was never added to: /shop there is refused as Slack refuses it,
        # until someone types /invite @weekly-shop.
        self.slack.add_channel(GARDEN, "garden", members=PEOPLE, bot=False)
        # Carol is the workspace's admin (users.info: is_admin): she may change the Settings;
        # Alice and Bob are members, who see them read-only.
        self.slack.set_person("U0CAROL", is_admin=True, tz="Europe/Paris")
        for user, name in PEOPLE.items():  # their names, as users.info gives them
            self.slack.set_person(user, real_name=name, profile={"real_name": name})
        self.client_id = CLIENT_ID if many else None
        self.client_secret = secrets.token_hex(16)
        if many:  # nobody holds a token until the app is added to a workspace
            self.slack.oauth.revoke(self.token)
            self.slack.oauth.register_app(CLIENT_ID, self.client_secret)
            garden = self.slack.add_workspace(GARDEN_TEAM)
            garden.add_channel(ALLOTMENT, "allotment", members=PEOPLE)
            garden.set_person("U0CAROL", is_admin=True, tz="Europe/Paris")
        self.lam = FakeLambda(on_invoke=self._lazy, access_key_id=self.access_key_id)
        # Where orders can go besides a canvas, chosen in Settings: Instacart's stand-in (its
        # key is printed at start) and a household's webhook receiver (its URL and secret too).
        self.instacart = FakeInstacart(api_key=f"sandbox-instacart-{secrets.token_hex(8)}")
        self.webhook = WebhookReceiver(secret=f"sandbox-webhook-{secrets.token_hex(12)}")
        # Prices: the Kroger stand-in (its stores near ZIP 45202, 30308, 98109 and 80202), on
        # the played clock, so its tokens expire as Fast-forward moves time.
        self.kroger = FakeKroger(clock=self.clock)
        # (team, user) -> the Add to Slack waiting on Slack's authorize page (``install_page``)
        self.authorizing: dict[tuple[str, str], dict[str, str]] = {}
        self.channel = CHANNEL
        self.busy = 0
        self.version = 0
        self.banner = ""
        self.stopping = False
        self.player: SchedulePlayer | None = None  # plays Scheduler once moto runs (``server``)
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

    def run_async(self, payload: dict[str, Any]) -> Future[dict[str, Any]]:
        """An asynchronous invocation of the function with ``payload`` as its event, from a
        thread other than the page's: a schedule the player delivers (``scheduler_player``)."""
        return asyncio.run_coroutine_threadsafe(self.invoke(payload, lazy=True), self._loop)

    async def fast_forward(self, team: str | None = None) -> dict[str, str]:
        """Jump ahead: the played clock moves to the time of the next schedule (of ``team``'s
        baskets and weekly run, when given), as if the hours had passed, and the player delivers
        what is due then, now, as Scheduler would at that time (``scheduler_player``: once, even
        if its own pass runs at the same moment). Returns what it was (``fired``: "remind 1",
        "expire", "order", "weekly run") and where it posts (``channel``, a basket's
        ``thread_ts``: often an older basket, off-screen, which the page then shows); empty when
        nothing is scheduled."""
        from bot.handler import cold_start
        from bot.records.timers import schedule_name

        rt, _ = cold_start()
        timers, player = rt.schedules.timers, self.player
        if timers is None or player is None:
            return {}
        run = self._loop.run_in_executor
        pending = await run(self.pool, timers.pending)
        baskets = {
            schedule_name(t.tenant, t.session, t.request, t.slot): t
            for t in pending
            if team in (None, t.tenant)
        }

        def ours(name: str) -> bool:  # one of the team's baskets, or its weekly run
            weekly = name == f"weekly-{team}" if team else name.startswith("weekly-")
            return name in baskets or weekly

        upcoming = await run(self.pool, player.upcoming)
        first = next((u for u in upcoming if ours(u.name)), None)
        if first is None:
            return {}
        self.clock.reach(first.at)
        await run(self.pool, player.tick)
        delivery = player.delivery(first.name, first.at)  # this pass's, or the player thread's
        if delivery is not None:  # the page shows what it posted: wait for the invocation
            invoked = await asyncio.wrap_future(delivery)
            if isinstance(invoked, Future):
                await asyncio.wrap_future(invoked)
        timer = baskets.get(first.name)
        if timer is None:
            run_fields = json.loads(str(first.payload.get("weekly_shop_run") or "{}"))
            return {"fired": "weekly run", "channel": str(run_fields.get("channel", ""))}
        fired = f"{timer.kind} {timer.n}" if timer.kind == "remind" else timer.kind
        return {"fired": fired, "channel": timer.channel, "thread_ts": timer.thread_ts}
