"""``weekly-shop sandbox``: the real bot on 127.0.0.1, with Slack, Lambda and S3 played locally.

One aiohttp server plays the Slack Web API (``SLACK_API_URL``) and the Lambda Invoke API
(``AWS_ENDPOINT_URL_LAMBDA``), serves the channel page, and turns what the person does there
into signed Slack requests delivered to ``bot.handler.handler``. S3 is an in-process moto server.
Each lazy self-invocation the bot makes arrives at the Invoke endpoint and runs as a new
invocation, so the sandbox takes the same path as production.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import logging
import os
import secrets
import signal
import sys
from concurrent.futures import ThreadPoolExecutor
from typing import Any
from urllib.parse import parse_qsl

from aiohttp import web

from . import slack_requests as sr
from .page import page, ui_action, ui_close, ui_command, ui_events, ui_state, ui_view
from .workspace import Workspace

log = logging.getLogger(__name__)
BUCKET = "weekly-shop-sandbox"


class Sandbox:
    def __init__(self, secret: str) -> None:
        self.secret = secret
        self.workspace = Workspace()
        self.busy = 0
        self.version = 0
        self.pool = ThreadPoolExecutor(max_workers=8, thread_name_prefix="invocation")
        self._changed = asyncio.Event()
        self._loop = asyncio.get_running_loop()
        self.banner = ""

    # -- change notification ------------------------------------------------------------

    def bump(self) -> None:
        """Tell every open page something changed (safe from any thread)."""

        def _set() -> None:
            self.version += 1
            self._changed.set()

        self._loop.call_soon_threadsafe(_set)

    async def changes(self) -> int:
        await asyncio.wait_for(self._changed.wait(), timeout=15)
        self._changed.clear()
        return self.version

    # -- invocations -----------------------------------------------------------------------

    async def invoke(self, event: dict[str, Any], lazy: bool = False) -> dict[str, Any]:
        """Run ``bot.handler.handler`` in a worker thread, like one Lambda invocation."""
        from bot.handler import handler

        if lazy:
            self.busy += 1
            self.bump()
        try:
            response: dict[str, Any] = await self._loop.run_in_executor(
                self.pool, handler, event, sr.lambda_context()
            )
            return response
        finally:
            if lazy:
                self.busy -= 1
            self.bump()


async def slack_api(request: web.Request) -> web.Response:
    sandbox: Sandbox = request.app["sandbox"]
    method = request.match_info["method"]
    raw = await request.text()
    if request.content_type == "application/json":
        args = json.loads(raw or "{}")
    else:
        args = dict(parse_qsl(raw))
    args.update(dict(request.query))
    for key in ("blocks", "view"):
        if isinstance(args.get(key), str):
            args[key] = json.loads(args[key])
    result = sandbox.workspace.call(method, args)
    sandbox.bump()
    return web.json_response(result)


async def lambda_invoke(request: web.Request) -> web.Response:
    sandbox: Sandbox = request.app["sandbox"]
    event = json.loads(await request.read() or b"{}")
    task = asyncio.ensure_future(sandbox.invoke(event, lazy=True))
    request.app["tasks"].add(task)
    task.add_done_callback(request.app["tasks"].discard)
    return web.Response(
        status=202, headers={"x-amzn-RequestId": sr.lambda_context().aws_request_id}
    )


async def no_icon(request: web.Request) -> web.Response:
    return web.Response(status=204)


@web.middleware
async def same_origin_only(request: web.Request, handler: Any) -> web.StreamResponse:
    """The page's endpoints answer only the page: a web page elsewhere must not be able to type
    ``/shop`` (spending the developer's Anthropic key) or read the channel, even through DNS
    rebinding. Slack and Lambda endpoints are called by the bot itself, on 127.0.0.1."""
    if request.path.startswith("/ui/") or request.path == "/":
        host = request.host.rsplit(":", 1)[0]
        if host not in ("127.0.0.1", "localhost"):
            raise web.HTTPForbidden(text="the sandbox answers only on 127.0.0.1")
        if request.method == "POST" and request.content_type != "application/json":
            raise web.HTTPUnsupportedMediaType(text="JSON only")
    response: web.StreamResponse = await handler(request)
    return response


def build_app(sandbox: Sandbox) -> web.Application:
    app = web.Application(client_max_size=1024**2, middlewares=[same_origin_only])
    app["sandbox"] = sandbox
    app["tasks"] = set()
    app.router.add_post("/api/{method}", slack_api)
    app.router.add_post("/2015-03-31/functions/{name}/invocations", lambda_invoke)
    app.router.add_get("/", page)
    app.router.add_get("/static/{name}", page)
    app.router.add_get("/favicon.ico", no_icon)
    app.router.add_get("/ui/state", ui_state)
    app.router.add_get("/ui/events", ui_events)
    app.router.add_post("/ui/command", ui_command)
    app.router.add_post("/ui/action", ui_action)
    app.router.add_post("/ui/view", ui_view)
    app.router.add_post("/ui/close", ui_close)
    return app


def configure_bot(port: int, s3_url: str, secret: str) -> str:
    """Point the real bot at the local stand-ins; the banner says which shopper it uses."""
    for name in ("AWS_PROFILE", "AWS_ENDPOINT_URL", "AWS_SESSION_TOKEN"):
        os.environ.pop(name, None)
    os.environ.update(
        SLACK_BOT_TOKEN="xoxb-sandbox-not-a-real-token",
        SLACK_SIGNING_SECRET=secret,
        CHECKPOINT_BUCKET=BUCKET,
        SLACK_API_URL=f"http://127.0.0.1:{port}/api/",
        AWS_ENDPOINT_URL_S3=s3_url,
        AWS_ENDPOINT_URL_LAMBDA=f"http://127.0.0.1:{port}",
        AWS_ACCESS_KEY_ID="sandbox",
        AWS_SECRET_ACCESS_KEY="sandbox",
        AWS_DEFAULT_REGION="us-east-1",
    )
    if os.environ.get("ANTHROPIC_API_KEY"):
        model = os.environ.get("ANTHROPIC_MODEL") or "claude-haiku-5-5"
        return f"Baskets are written by Claude ({model})."
    return "Offline shopper: baskets are canned. Set ANTHROPIC_API_KEY to have Claude write them."


async def serve(port: int, ready: asyncio.Event | None = None) -> int:
    from moto.server import ThreadedMotoServer

    sandbox = Sandbox(secret=secrets.token_hex(16))
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
    host, moto_port = moto.get_host_and_port()
    sandbox.banner = configure_bot(bound, f"http://{host}:{moto_port}", sandbox.secret)
    try:
        from bot.handler import cold_start

        rt, _ = cold_start()
        logging.getLogger().setLevel(logging.WARNING)
        rt.store  # noqa: B018 - make the S3 client now, not on the first click
        await asyncio.get_running_loop().run_in_executor(
            None, lambda: rt._s3().create_bucket(Bucket=BUCKET)
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
        moto.stop()


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="weekly-shop sandbox", description=__doc__.splitlines()[0]
    )
    parser.add_argument("--port", type=int, default=8080, help="port on 127.0.0.1 (default 8080)")
    args = parser.parse_args(argv)
    return asyncio.run(serve(args.port))
