"""``weekly-shop dev`` (``make dev``): start the bot over Socket Mode, run until Ctrl-C.

1. The tokens (``tokens``): a missing or wrong one stops it at once, saying which and where to
   get it (exit 2). Other ``KEY=VALUE`` lines of the env file (``ANTHROPIC_API_KEY``…) fill in
   variables the environment does not set.
2. Storage: by default moto's S3, Scheduler and SSM on 127.0.0.1 behind this run's own key
   (``MotoStandIn``, as the sandbox starts it): checkpoints, locks, receipts and settings live as
   long as the process. ``--store s3://bucket/prefix`` keeps checkpoints in a real bucket with
   the developer's own AWS credentials (boto3's usual chain), and then wants a signing key that
   outlives the run (``CHECKPOINT_SIGNING_KEY``, exit 2 without it).
3. Timers (a basket's reminders, expiry and undo window, a workspace's weekly run) are
   EventBridge Scheduler schedules: locally, moto keeps them and ``SchedulePlayer`` fires each at
   its time into ``bot.handler.handler``, as an asynchronous Lambda invocation is run
   (``invoke_async``: retried while it raises). With ``--store`` there is no local Scheduler and
   a real one would need a deployed function to call, so timers are off and the banner says so.
4. The bot: ``bot.handler.cold_start`` builds the runtime (the timers' entry uses it), and
   ``build_app`` a second Bolt app with the same listeners for Socket Mode. Not wrapped in the
   Lambda adapter, it keeps Bolt's thread lazy runner: each lazy listener runs in a thread of
   this process. Bolt's built-in ``SocketModeHandler`` (slack_sdk's built-in WebSocket client:
   no extra dependency) connects; it acks each envelope with the ack function's answer, runs a
   repeated one only once (``envelopes``) and reconnects on Slack's ``disconnect``. Requests
   over Socket Mode are not signed, so a signing secret, which the settings require, is made up
   for the run when none is set.
5. SIGINT or SIGTERM: the Socket Mode client closes; a lazy run in progress is finished (Bolt's
   listener executor is shut down, waiting for it) before the player and moto stop, so that its
   checkpoint and lock still reach S3. A second Ctrl-C interrupts that.

The Web API is Slack's unless ``SLACK_API_URL`` says otherwise (the tests point it at
``FakeSlack``, whose Socket Mode end is ``bot.sandbox.socket_mode``).
"""

from __future__ import annotations

import argparse
import logging
import os
import secrets
import signal
import sys
import threading
import time
from concurrent.futures import Future, ThreadPoolExecutor
from pathlib import Path
from typing import TYPE_CHECKING, Any
from urllib.parse import urlsplit

from slack_sdk.errors import SlackApiError

from bot.sandbox.aws_events import lambda_context
from bot.sandbox.lambda_async import invoke_async
from bot.sandbox.moto_server import MotoStandIn, new_credentials
from bot.sandbox.scheduler_player import SchedulePlayer
from bot.sandbox.server import shopper_banner

from .envelopes import OnceHandler
from .tokens import TokenProblem, Tokens, find_tokens, read_env_file

if TYPE_CHECKING:
    from slack_bolt import App

    from bot.runtime import Runtime

BUCKET = "weekly-shop-dev"
FUNCTION = "weekly-shop-dev-slack"
TIMER_GROUP = "weekly-shop-dev-baskets"
TIMER_ARN = f"arn:aws:lambda:us-east-1:123456789012:function:{FUNCTION}"
TIMER_ROLE = "arn:aws:iam::123456789012:role/weekly-shop-dev-timers"
STOP_SIGNALS = (signal.SIGINT, signal.SIGTERM)
# Checkpoints are signed with CHECKPOINT_SIGNING_KEY, else a key derived from the signing secret
# (bot.runtime.records), which a run makes up when none is set: checkpoints kept in a real bucket
# must outlive the run, so --store wants one of them set.
SIGNING_KEYS = ("CHECKPOINT_SIGNING_KEY", "SLACK_SIGNING_SECRET")
UNSIGNABLE = (
    "--store keeps checkpoints after this run, signed: put CHECKPOINT_SIGNING_KEY=<at least 16 "
    "random characters> in {file} so that the next run can read them"
)


def parse_store(value: str) -> tuple[str, str]:
    """``s3://bucket/prefix`` -> (bucket, prefix); ValueError for anything else."""
    parts = urlsplit(value)
    if parts.scheme != "s3" or not parts.netloc:
        raise ValueError(f"--store must be s3://bucket/prefix, not {value!r}")
    return parts.netloc, parts.path.strip("/")


def local_env(moto: MotoStandIn) -> dict[str, str]:
    """The bot's AWS side on the local stand-in: S3, Scheduler and SSM, timers armed there."""
    return {
        "CHECKPOINT_BUCKET": BUCKET,
        "AWS_ENDPOINT_URL_S3": moto.root,
        "AWS_ENDPOINT_URL_SCHEDULER": moto.root,
        "AWS_ENDPOINT_URL_SSM": moto.root,
        "AWS_ACCESS_KEY_ID": moto.key_id,
        "AWS_SECRET_ACCESS_KEY": moto.secret,
        "AWS_DEFAULT_REGION": "us-east-1",
        "TIMER_GROUP": TIMER_GROUP,
        "TIMER_TARGET_ARN": TIMER_ARN,
        "TIMER_ROLE_ARN": TIMER_ROLE,
        "WORKSPACE_SECRETS_PATH": "/weekly-shop/dev/workspaces",
    }


def configure(tokens: Tokens, store: tuple[str, str] | None, moto: MotoStandIn | None) -> None:
    """The process environment the bot's settings are read from (``Settings.from_env``)."""
    local = ("AWS_PROFILE", "AWS_ENDPOINT_URL", "AWS_SESSION_TOKEN")
    others = ("SHOP_CHANNEL", "SHOP_REQUEST", "SHOP_TEAM", "SLACK_CLIENT_ID", "SLACK_CLIENT_SECRET")
    for name in (*others, *(local if moto is not None else ())):
        os.environ.pop(name, None)
    os.environ["SLACK_BOT_TOKEN"] = tokens.bot.get_secret_value()
    os.environ.setdefault("SLACK_SIGNING_SECRET", secrets.token_hex(16))  # module docstring, 4
    if moto is not None:
        os.environ.update(local_env(moto))
    elif store is not None:
        for name in ("TIMER_GROUP", "TIMER_TARGET_ARN", "TIMER_ROLE_ARN"):
            os.environ.pop(name, None)
        os.environ.update(CHECKPOINT_BUCKET=store[0], CHECKPOINT_PREFIX=store[1])


class Dev:
    """One ``weekly-shop dev`` run: what it started, so that :meth:`close` stops each."""

    def __init__(self, tokens: Tokens, store: tuple[str, str] | None) -> None:
        self.tokens, self.store = tokens, store
        self.moto: MotoStandIn | None = None
        self.player: SchedulePlayer | None = None
        self.socket: OnceHandler | None = None
        self.app: App | None = None
        self.pool = ThreadPoolExecutor(max_workers=4, thread_name_prefix="timer")

    def start(self) -> list[str]:
        """Start everything; the banner's lines (SlackApiError if Slack refuses a token)."""
        if self.store is None:
            self.moto = MotoStandIn(*new_credentials()).start()
        configure(self.tokens, self.store, self.moto)
        from bot.handler import cold_start
        from bot.listeners.app import build_app
        from bot.runtime import Runtime
        from bot.settings import Settings

        rt, _ = cold_start(Runtime.from_settings(Settings.from_env()))
        logging.getLogger().setLevel(logging.WARNING)  # the terminal is the developer's
        app = self.app = build_app(rt)
        who = app.client.auth_test(token=self.tokens.bot.get_secret_value())
        timers = (
            "Timers: off with --store (they need EventBridge Scheduler and a deployed function)."
        )
        if self.moto is not None:
            timers = self._local_aws(rt, self.moto)
        self.socket = OnceHandler(app, self.tokens.app.get_secret_value())
        self.socket.connect()  # type: ignore[no-untyped-call]
        where = f"s3://{self.store[0]}/{self.store[1]}" if self.store else "local S3 (moto)"
        return [
            f"weekly-shop dev: connected over Socket Mode to {who.get('team')} as "
            f"@{who.get('user')} (tokens from {self.tokens.source}).",
            f"Checkpoints and records: {where}"
            + ("; kept only while this runs." if self.moto else "."),
            timers,
            shopper_banner(),
            "Type /shop in a channel the app is in. Press Ctrl-C to stop.",
        ]

    def _local_aws(self, rt: Runtime, moto: MotoStandIn) -> str:
        """The bucket and the timers' group in moto, and the player that fires the timers."""
        from bot.handler import handler

        rt.aws.s3().create_bucket(Bucket=BUCKET)
        if rt.schedules.timers is None:
            return "Timers: off."
        rt.schedules.timers.client.create_schedule_group(Name=TIMER_GROUP)

        def once(event: dict[str, Any]) -> dict[str, Any]:
            answer: dict[str, Any] = handler(event, lambda_context(FUNCTION))
            return answer

        def deliver(event: dict[str, Any]) -> Future[Any]:
            return self.pool.submit(invoke_async, once, event, between=lambda n: time.sleep(2 * n))

        self.player = SchedulePlayer(
            moto.client("scheduler"), TIMER_GROUP, time.time, deliver, target_arn=TIMER_ARN
        ).start()
        return "Timers (reminders, expiry, the weekly run): played here at their times."

    def close(self) -> None:
        if self.socket is not None:
            self.socket.close()  # type: ignore[no-untyped-call]
        if self.app is not None:  # a basket being written is finished while S3 is still here
            self.app.listener_runner.listener_executor.shutdown(wait=True)
        if self.player is not None:
            self.player.stop()
        self.pool.shutdown(wait=False, cancel_futures=True)
        if self.moto is not None:
            self.moto.stop()


def serve(tokens: Tokens, store: tuple[str, str] | None) -> int:
    """Run until SIGINT or SIGTERM (module docstring, 5)."""
    stop = threading.Event()
    for sig in STOP_SIGNALS:
        signal.signal(sig, lambda *_: stop.set())
    dev = Dev(tokens, store)
    try:
        try:
            banner = dev.start()
        except SlackApiError as exc:
            error = exc.response.get("error") if exc.response is not None else "unknown"
            print(f"weekly-shop dev: Slack refused a token ({error}).", file=sys.stderr)
            return 1
        for line in banner:
            print(line, flush=True)
        stop.wait()
        print("Stopping weekly-shop dev.", flush=True)
        return 0
    finally:
        for sig in STOP_SIGNALS:  # a second Ctrl-C interrupts the stopping itself
            signal.signal(
                sig, signal.SIG_DFL if sig == signal.SIGTERM else signal.default_int_handler
            )
        dev.close()


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="weekly-shop dev",
        description="The real bot on your own Slack workspace over Socket Mode: no public URL, "
        "no AWS account.",
    )
    parser.add_argument(
        "--env-file",
        default=".env",
        help="KEY=VALUE file with SLACK_APP_TOKEN and SLACK_BOT_TOKEN (default: .env)",
    )
    parser.add_argument(
        "--store",
        default="",
        help="s3://bucket/prefix: keep checkpoints in real S3 with your AWS credentials "
        "(default: S3 played locally, forgotten at stop; timers are off with --store)",
    )
    args = parser.parse_args(argv)
    path = Path(args.env_file)
    if args.env_file != ".env" and not path.is_file():
        print(f"weekly-shop dev: no file {args.env_file}", file=sys.stderr)
        return 2
    values = read_env_file(path) if path.is_file() else {}
    try:
        tokens = find_tokens(os.environ, values, args.env_file)
        store = parse_store(args.store) if args.store else None
    except (TokenProblem, ValueError) as exc:
        print(f"weekly-shop dev: {exc}", file=sys.stderr)
        return 2
    for name, value in values.items():
        os.environ.setdefault(name, value)
    if store is not None and not any(os.environ.get(n) for n in SIGNING_KEYS):
        print(f"weekly-shop dev: {UNSIGNABLE.format(file=args.env_file)}", file=sys.stderr)
        return 2
    return serve(tokens, store)
