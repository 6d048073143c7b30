"""The page's Home tab: opening it and its buttons become exactly what Slack would send the bot.

Clicking "Weekly shop" under Apps is opening the app's Home tab: a signed ``app_home_opened``
(``slack_events``), acked at once by the bot, which publishes the tab in a lazy run; the page
then shows the view last published for that person (``/ui/state``'s ``home``). A button on it
(Show items, Hide items, Repeat this order) is a signed ``block_actions`` whose container is the
view. Only a button the person's published view has can be clicked, with its own value, as in
Slack. These endpoints sit behind the page's ``same_origin_only`` like every other.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import TYPE_CHECKING, Any

from aiohttp import web

from . import slack_events as se
from .state import person

if TYPE_CHECKING:
    from .state import Sandbox


async def ui_home(request: web.Request) -> web.Response:
    """The person opens the app's Home tab. In a workspace the app is not installed in there
    is no Home tab to open: Slack sends the bot nothing (no installation, no events), and the
    page says the app is not installed instead (``not_installed``)."""
    sandbox: Sandbox = request.app["sandbox"]
    data = await request.json()
    user, slack = person(str(data.get("user", ""))), sandbox.workspace(data.get("team"))
    if not sandbox.installed(slack.team_id):
        return web.json_response({"ok": False, "error": "not_installed"})
    event = se.app_home_opened(sandbox.secret, user, team_id=slack.team_id)
    status = int((await sandbox.invoke(event)).get("statusCode", 500))
    return web.json_response({"ok": status == 200, "status": status})


def buttons(view: dict[str, Any]) -> Iterator[dict[str, Any]]:
    """The buttons on a view: section accessories and the elements of actions blocks."""
    for block in view.get("blocks", []):
        accessory = block.get("accessory")
        if isinstance(accessory, dict) and accessory.get("type") == "button":
            yield accessory
        for element in block.get("elements", []) if block.get("type") == "actions" else []:
            if element.get("type") == "button":
                yield element


async def ui_home_click(request: web.Request) -> web.Response:
    """A button on the person's Home tab (not a link button: the browser opens those)."""
    sandbox: Sandbox = request.app["sandbox"]
    data = await request.json()
    user, slack = person(str(data.get("user", ""))), sandbox.workspace(data.get("team"))
    view = slack.home(user)
    if view is None:
        return web.json_response({"ok": False, "error": "no_home_view"}, status=404)
    wanted = (data.get("action_id"), data.get("value", ""))
    for button in buttons(view):
        if "url" in button or (button.get("action_id"), button.get("value", "")) != wanted:
            continue
        event = se.home_action(
            sandbox.secret,
            action_id=str(button["action_id"]),
            value=str(button.get("value", "")),
            view_id=str(view["id"]),
            team_id=slack.team_id,
            user_id=user,
            trigger_id=slack.issue_trigger(user),  # for a modal it opens (Settings)
        )
        status = int((await sandbox.invoke(event)).get("statusCode", 500))
        return web.json_response({"ok": status == 200, "status": status})
    return web.json_response({"ok": False, "error": "no_such_action"}, status=404)


def add_routes(app: web.Application) -> None:
    app.router.add_post("/ui/home", ui_home)
    app.router.add_post("/ui/home-click", ui_home_click)
