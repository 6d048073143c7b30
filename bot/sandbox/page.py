"""The page: what the person does there becomes exactly what Slack would send the bot.

Typing ``/shop …`` becomes a signed slash command, a button a signed ``block_actions`` payload,
the change modal a signed ``view_submission`` (``page_views``; all built by ``slack_requests``, as
in the tests);
each is delivered to ``bot.handler.handler`` as API Gateway would deliver it, with trigger IDs and
response URLs the fake Slack issued. The page reads the channel, its modal and the checkpoints
panel from ``/ui/state`` (and the person's Home tab: ``home_page``) and refreshes when
``/ui/events`` says something changed. Every request names the workspace the page shows
(``team``; the first one if it names none), and all of it (channels, messages, triggers, the
Home tab, the panel's sessions) is that workspace's; "Add to Slack" is ``install_page``. Only the
page itself may call these endpoints (``same_origin_only``).
"""

from __future__ import annotations

import asyncio
from importlib import resources
from typing import TYPE_CHECKING, Any

from aiohttp import web

from . import canvas_page, home_page, install_page, kroger_page, page_views
from . import slack_requests as sr
from .state import NAMES, PEOPLE, person

if TYPE_CHECKING:
    from .slack_workspace import SlackWorkspace
    from .state import Sandbox


def _channel(sandbox: Sandbox, slack: SlackWorkspace, asked: object) -> str:
    """The channel asked for, if the workspace has it; else its first (the sandbox's own)."""
    ids = slack.channel_ids()
    if isinstance(asked, str) and asked in ids:
        return asked
    return sandbox.channel if sandbox.channel in ids else ids[0]


def channels(slack: SlackWorkspace) -> list[dict[str, Any]]:
    """The sidebar: each channel, and whether the bot is in it."""
    found = []
    for cid in slack.channel_ids():
        info = slack.channel_info(cid)
        if info is not None:
            found.append({"id": cid, "name": info.name, "bot": slack.user_id in info.members})
    return found


def workspaces(sandbox: Sandbox) -> list[dict[str, Any]]:
    """The switcher: each workspace, and whether the app is installed there."""
    return [
        {"id": team, "name": NAMES.get(team, team), "installed": sandbox.installed(team)}
        for team in sandbox.slack.team_ids()
    ]


def snapshot(
    sandbox: Sandbox, user: str, channel: str | None = None, slack: SlackWorkspace | None = None
) -> dict[str, Any]:
    """What ``user`` sees in the channel (of ``slack``, the first workspace if not given):
    messages with their threads, their own ephemerals."""
    slack = slack or sandbox.slack
    channel = channel or _channel(sandbox, slack, None)
    shown = [dict(m, replies=slack.thread(channel, m["ts"])) for m in slack.messages(channel)]
    for eph in slack.ephemerals(user):
        if eph["channel"] == channel:
            shown.append({**eph, "ts": eph["message_ts"], "ephemeral_for": user, "replies": []})
    shown.sort(key=lambda m: float(m["ts"]))
    return {"messages": shown, "modal": slack.open_view(user), "version": sandbox.version}


async def ui_state(request: web.Request) -> web.Response:
    from bot.handler import cold_start

    from .panel import sessions, timers

    sandbox: Sandbox = request.app["sandbox"]
    slack = sandbox.workspace(request.query.get("team"))
    user = person(request.query.get("user", ""))
    channel = _channel(sandbox, slack, request.query.get("channel"))
    rt, _ = cold_start()
    loop = asyncio.get_running_loop()
    panel = await loop.run_in_executor(sandbox.pool, sessions, rt, slack.team_id, PEOPLE)
    armed = await loop.run_in_executor(sandbox.pool, timers, rt, slack.team_id, sandbox.player)
    state = snapshot(sandbox, user, channel, slack)
    state.update(
        team=slack.team_id,
        workspaces=workspaces(sandbox),
        channel=channel,
        channels=channels(slack),
        people=PEOPLE,
        busy=sandbox.busy,
        banner=sandbox.banner,
        home=slack.home(user),
        sessions=panel,
        timers=armed,
        max_rounds=rt.settings.max_rounds,
        canvases=canvas_page.canvases_of(slack, channel),
    )
    return web.json_response(state)


async def ui_events(request: web.Request) -> web.StreamResponse:
    """The page's change notifications (Server-Sent Events). A tab that closes, even before the
    stream's headers went out, ends its stream quietly: the write that finds the connection gone
    ends it. Stopping the sandbox ends every stream at once, rather than after aiohttp's
    shutdown timeout."""
    sandbox: Sandbox = request.app["sandbox"]
    response = web.StreamResponse(
        headers={"Content-Type": "text/event-stream", "Cache-Control": "no-cache"}
    )
    try:
        await response.prepare(request)
        while not sandbox.stopping:
            try:
                version = await sandbox.changes()
            except TimeoutError:
                await response.write(b": keep-alive\n\n")
                continue
            if not sandbox.stopping:
                await response.write(f"event: change\ndata: {version}\n\n".encode())
    except ConnectionError:  # the tab closed (aiohttp's ClientConnectionResetError is one)
        pass
    return response


async def ui_command(request: web.Request) -> web.Response:
    sandbox: Sandbox = request.app["sandbox"]
    data = await request.json()
    slack = sandbox.workspace(data.get("team"))
    user = person(str(data.get("user", "")))
    channel = _channel(sandbox, slack, data.get("channel"))
    text = str(data.get("text", "")).strip()
    if text.startswith("/invite") and "@weekly-shop" in text:
        slack.join(channel, slack.user_id)  # what Slack's own /invite does
        slack.slackbot_says(channel, user, "Weekly shop was added to this channel.")
        return web.json_response({"ok": True})
    if not text.startswith("/shop"):
        slack.slackbot_says(
            channel, user, "Only `/shop` and `/invite @weekly-shop` work in this sandbox."
        )
        return web.json_response({"ok": True})
    event = sr.slash_command(
        sandbox.secret,
        text=text[len("/shop") :].strip(),
        team_id=slack.team_id,
        user_id=user,
        channel_id=channel,
        trigger_id=slack.issue_trigger(user),
        response_url_base=sandbox.slack.hooks_url,
    )
    status, body = page_views.answer_of(await sandbox.invoke(event))
    if body:  # Slack shows a slash command's ack text to the person who typed it
        slack.slackbot_says(channel, user, body)
    return web.json_response({"ok": status == 200, "status": status})


def _button(message: dict[str, Any], data: dict[str, Any]) -> tuple[str, str, str] | None:
    """The button clicked: (action_id, value, block_id). The message's own when it still holds
    it; else the one the person's screen showed (``data``): Slack's client sends a click from
    the message as it last rendered it, so a click on a screen the bot has since updated still
    reaches the bot, which says why it no longer counts. None if the page names no button, or
    one larger than Slack allows (``action_id`` ≤ 255, ``value`` ≤ 2000)."""
    action_id = data.get("action_id")
    for block in message.get("blocks", []):
        for element in block.get("elements", []) if block.get("type") == "actions" else []:
            if element.get("action_id") == action_id:
                block_id = str(block.get("block_id", ""))
                return str(action_id), str(element.get("value", "")), block_id
    seen = (action_id, data.get("value", ""), data.get("block_id", ""))
    if not all(isinstance(x, str) for x in seen) or not action_id:
        return None
    action, value, block = (str(x) for x in seen)
    if len(action) > 255 or len(value) > 2000 or len(block) > 255:
        return None
    return action, value, block


async def ui_action(request: web.Request) -> web.Response:
    """A person clicks a message's button: the signed ``block_actions`` Slack would send."""
    sandbox: Sandbox = request.app["sandbox"]
    data = await request.json()
    slack = sandbox.workspace(data.get("team"))
    user = person(str(data.get("user", "")))
    channel = _channel(sandbox, slack, data.get("channel"))
    message = slack.message(channel, str(data.get("ts", "")))
    if message is None:
        return web.json_response({"ok": False, "error": "message_not_found"}, status=404)
    button = _button(message, data)
    if button is None:
        return web.json_response({"ok": False, "error": "no_such_action"}, status=404)
    action_id, value, block_id = button
    event = sr.block_action(
        sandbox.secret,
        action_id=action_id,
        value=value,
        team_id=slack.team_id,
        user_id=user,
        channel_id=channel,
        message_ts=message["ts"],
        trigger_id=slack.issue_trigger(user),
        response_url_base=sandbox.slack.hooks_url,
        block_id=block_id,
        message={k: v for k, v in message.items() if k in ("type", "ts", "text", "blocks")},
    )
    status, _ = page_views.answer_of(await sandbox.invoke(event))
    return web.json_response({"ok": status == 200, "status": status})


async def ui_fast_forward(request: web.Request) -> web.Response:
    """Fast-forward: the clock jumps to the next timer, which fires (each fires by itself at its
    time too: ``scheduler_player``); says which basket's thread it posted in, for the page."""
    sandbox: Sandbox = request.app["sandbox"]
    team = sandbox.workspace((await request.json()).get("team")).team_id
    fired = await sandbox.fast_forward(team)
    return web.json_response({"ok": True, "fired": "", **fired})


async def page(request: web.Request) -> web.Response:
    name = request.match_info.get("name", "index.html")
    if name not in ("index.html", "app.js", "canvas.js", "style.css"):
        raise web.HTTPNotFound()
    text = resources.files("bot.sandbox").joinpath("static", name).read_text()
    kinds = {"html": "text/html", "js": "text/javascript", "css": "text/css"}
    return web.Response(text=text, content_type=kinds[name.rsplit(".", 1)[1]])


async def no_icon(request: web.Request) -> web.Response:
    return web.Response(status=204)


@web.middleware
async def same_origin_only(request: web.Request, handler: Any) -> web.StreamResponse:
    """The page's endpoints answer only the page: a web page elsewhere must not be able to type
    ``/shop`` (spending the developer's Anthropic key) or read the channel, even through DNS
    rebinding. Browsers say where a request comes from: ``Sec-Fetch-Site`` (cross-site from
    another page) and, on a POST, ``Origin``, which must be this page's own. The Slack and Lambda
    stand-ins have their own ports and the bot's secrets."""
    host = request.host.rsplit(":", 1)[0]
    if host not in ("127.0.0.1", "localhost"):
        raise web.HTTPForbidden(text="the sandbox answers only on 127.0.0.1")
    if request.headers.get("Sec-Fetch-Site") == "cross-site":
        raise web.HTTPForbidden(text="the sandbox answers only its own page")
    origin = request.headers.get("Origin")
    if origin is not None and origin != f"http://{request.host}":
        raise web.HTTPForbidden(text="the sandbox answers only its own page")
    if request.method == "POST" and request.content_type != "application/json":
        raise web.HTTPUnsupportedMediaType(text="JSON only")
    response: web.StreamResponse = await handler(request)
    return response


def build_app(sandbox: Sandbox) -> web.Application:
    app = web.Application(client_max_size=1024**2, middlewares=[same_origin_only])
    app["sandbox"] = sandbox

    async def end_streams(_: web.Application) -> None:
        sandbox.stop_streams()

    app.on_shutdown.append(end_streams)
    app.router.add_get("/", page)
    app.router.add_get("/static/{name}", page)
    app.router.add_get("/favicon.ico", no_icon)
    app.router.add_get("/ui/state", ui_state)
    app.router.add_get("/ui/events", ui_events)
    app.router.add_post("/ui/command", ui_command)
    app.router.add_post("/ui/action", ui_action)
    app.router.add_post("/ui/view", page_views.ui_view)
    app.router.add_post("/ui/view-action", page_views.ui_view_action)
    app.router.add_post("/ui/close", page_views.ui_close)
    app.router.add_post("/ui/fast-forward", ui_fast_forward)
    app.router.add_post("/ui/tick", canvas_page.ui_tick)
    home_page.add_routes(app)
    install_page.add_routes(app)
    kroger_page.add_routes(app)
    return app
