"""The page: what the person does there becomes exactly what Slack would send the bot.

Typing ``/shop …`` becomes a signed slash command, a button a signed ``block_actions`` payload,
the change modal a signed ``view_submission``; each is delivered to ``bot.handler.handler`` as
API Gateway would deliver it. The page reads the channel, its modal and the checkpoints panel
from ``/ui/state`` and refreshes when ``/ui/events`` says something changed.
"""

from __future__ import annotations

import asyncio
import json
from importlib import resources
from typing import TYPE_CHECKING, Any

from aiohttp import ClientConnectionResetError, web

from . import slack_requests as sr
from .workspace import CHANNEL, PEOPLE

if TYPE_CHECKING:
    from .server import Sandbox


def _person(request_user: str) -> tuple[str, str]:
    user = request_user if request_user in PEOPLE else "U0ALICE"
    return user, PEOPLE[user]


async def ui_state(request: web.Request) -> web.Response:
    from bot.handler import cold_start

    from .panel import sessions

    sandbox: Sandbox = request.app["sandbox"]
    user, _ = _person(request.query.get("user", ""))
    rt, _ = cold_start()
    panel = await asyncio.get_running_loop().run_in_executor(
        sandbox.pool, sessions, rt, sr.TEAM["id"]
    )
    state = sandbox.workspace.snapshot(user)
    state.update(
        people=PEOPLE,
        busy=sandbox.busy,
        banner=sandbox.banner,
        sessions=panel,
        max_rounds=rt.settings.max_rounds,
    )
    return web.json_response(state)


async def ui_events(request: web.Request) -> web.StreamResponse:
    sandbox: Sandbox = request.app["sandbox"]
    response = web.StreamResponse(
        headers={"Content-Type": "text/event-stream", "Cache-Control": "no-cache"}
    )
    await response.prepare(request)
    while True:
        try:
            version = await sandbox.changes()
            await response.write(f"event: change\ndata: {version}\n\n".encode())
        except TimeoutError:
            await response.write(b": keep-alive\n\n")
        except (ConnectionError, ClientConnectionResetError, asyncio.CancelledError):
            break
    return response


def _answer(response: dict[str, Any]) -> tuple[int, str]:
    return int(response.get("statusCode", 500)), str(response.get("body") or "")


async def ui_command(request: web.Request) -> web.Response:
    sandbox: Sandbox = request.app["sandbox"]
    data = await request.json()
    user, name = _person(str(data.get("user", "")))
    text = str(data.get("text", "")).strip()
    if not text.startswith("/shop"):
        sandbox.workspace.add_ephemeral(user, "Only `/shop` works in this sandbox.")
        return web.json_response({"ok": True})
    trigger = sr.trigger_id()
    sandbox.workspace.note_trigger(trigger, user)
    event = sr.slash_command(
        sandbox.secret,
        text=text[len("/shop") :].strip(),
        user_id=user,
        user_name=name,
        channel=CHANNEL,
        trigger=trigger,
    )
    status, body = _answer(await sandbox.invoke(event))
    if body:
        sandbox.workspace.add_ephemeral(user, body)
    return web.json_response({"ok": status == 200, "status": status})


async def ui_action(request: web.Request) -> web.Response:
    sandbox: Sandbox = request.app["sandbox"]
    data = await request.json()
    user, name = _person(str(data.get("user", "")))
    message = sandbox.workspace.message(str(data.get("ts", "")))
    if message is None:
        return web.json_response({"ok": False, "error": "message_not_found"}, status=404)
    for block in message.get("blocks", []):
        for element in block.get("elements", []) if block.get("type") == "actions" else []:
            if element.get("action_id") == data.get("action_id"):
                trigger = sr.trigger_id()
                sandbox.workspace.note_trigger(trigger, user)
                shown = {k: v for k, v in message.items() if k in ("ts", "text", "blocks")}
                clicked = sr.Clicked(user, name, CHANNEL, shown, element, block.get("block_id", ""))
                status, _ = _answer(
                    await sandbox.invoke(sr.block_actions(sandbox.secret, clicked, trigger))
                )
                return web.json_response({"ok": status == 200, "status": status})
    return web.json_response({"ok": False, "error": "no_such_action"}, status=404)


async def ui_view(request: web.Request) -> web.Response:
    sandbox: Sandbox = request.app["sandbox"]
    data = await request.json()
    user, name = _person(str(data.get("user", "")))
    view = sandbox.workspace.modals.get(user)
    if view is None:
        return web.json_response({"ok": False, "error": "no_open_view"}, status=404)
    event = sr.view_submission(
        sandbox.secret, user_id=user, user_name=name, view=view, values=data.get("values") or {}
    )
    status, body = _answer(await sandbox.invoke(event))
    answer = json.loads(body) if body.startswith("{") else {}
    if status == 200 and answer.get("response_action") == "errors":
        return web.json_response({"ok": False, "errors": answer.get("errors", {})})
    sandbox.workspace.close_modal(user)
    return web.json_response({"ok": status == 200, "status": status})


async def ui_close(request: web.Request) -> web.Response:
    sandbox: Sandbox = request.app["sandbox"]
    user, _ = _person(str((await request.json()).get("user", "")))
    sandbox.workspace.close_modal(user)
    return web.json_response({"ok": True})


async def page(request: web.Request) -> web.Response:
    name = request.match_info.get("name", "index.html")
    if name not in ("index.html", "app.js", "style.css"):
        raise web.HTTPNotFound()
    text = resources.files("bot.sandbox").joinpath("static", name).read_text()
    kinds = {"html": "text/html", "js": "text/javascript", "css": "text/css"}
    return web.Response(text=text, content_type=kinds[name.rsplit(".", 1)[1]])
