"""The page's modal: what the person does in it becomes what Slack would send the bot.

Submit is a signed ``view_submission`` (the ack's ``errors`` shown under their fields, an
``update`` checked and shown as ``views.update`` would be); Enter in a text field whose input
block has ``dispatch_action`` (or a choice in such a select) is a signed ``block_actions`` from
the view, with its full state so far, as Slack sends it; Cancel closes it. Built by
``slack_requests``, as in the tests; routed by ``page``.
"""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Any, NamedTuple

from aiohttp import web

from . import slack_requests as sr
from .state import person

if TYPE_CHECKING:
    from .slack_workspace import SlackWorkspace
    from .state import Sandbox

# What a dispatched element's action carries, by its type, from the state the page sends.
_VALUE_FIELDS = {"plain_text_input": "value", "static_select": "selected_option"}


def answer_of(response: dict[str, Any]) -> tuple[int, str]:
    """The status and body of the handler's answer to an event."""
    return int(response.get("statusCode", 500)), str(response.get("body") or "")


class _Open(NamedTuple):
    """A page request about the modal a person has open: who, in which workspace, what."""

    sandbox: Sandbox
    data: dict[str, Any]
    slack: SlackWorkspace
    user: str
    view: dict[str, Any]


async def _open(request: web.Request) -> _Open | web.Response:
    """The request's person and their open modal, or the 404 the page is answered with."""
    sandbox: Sandbox = request.app["sandbox"]
    data = await request.json()
    slack = sandbox.workspace(data.get("team"))
    user = person(str(data.get("user", "")))
    view = slack.open_view(user)
    if view is None:
        return web.json_response({"ok": False, "error": "no_open_view"}, status=404)
    return _Open(sandbox, data, slack, user, view)


async def ui_view(request: web.Request) -> web.Response:
    found = await _open(request)
    if isinstance(found, web.Response):
        return found
    sandbox, data, slack, user, view = found
    event = sr.view_submission(
        sandbox.secret,
        callback_id=str(view.get("callback_id", "")),
        private_metadata=str(view.get("private_metadata", "")),
        values=data.get("values") or {},
        team_id=slack.team_id,
        user_id=user,
        view_id=str(view["id"]),
    )
    status, body = answer_of(await sandbox.invoke(event))
    answer = json.loads(body) if body.startswith("{") else {}
    if status == 200 and answer.get("response_action") == "errors":
        return web.json_response({"ok": False, "errors": answer.get("errors", {})})
    if status == 200 and answer.get("response_action") == "update":
        # Slack replaces the modal with the view the ack gave (checked as views.update is).
        try:
            slack.method("views.update", {"view_id": view["id"], "view": answer.get("view")})
        except Exception as exc:  # noqa: BLE001 - a view Slack would refuse: the modal stays
            return web.json_response({"ok": False, "status": status, "error": str(exc)})
        return web.json_response({"ok": True, "status": status, "updated": True})
    slack.close_view(user)
    return web.json_response({"ok": status == 200, "status": status})


async def ui_view_action(request: web.Request) -> web.Response:
    """An element of the open modal dispatched: the ``block_actions`` Slack sends for it."""
    found = await _open(request)
    if isinstance(found, web.Response):
        return found
    sandbox, data, slack, user, view = found
    values = data.get("values") or {}
    block, action_id = str(data.get("block", "")), str(data.get("action", ""))
    element = (values.get(block) or {}).get(action_id) or {}
    field = _VALUE_FIELDS.get(str(element.get("type")))
    # Slack sends a block_actions only for an element of the view whose input block dispatches.
    dispatching = any(
        b.get("block_id") == block
        and b.get("dispatch_action")
        and (b.get("element") or {}).get("action_id") == action_id
        and (b.get("element") or {}).get("type") == element.get("type")
        for b in view.get("blocks") or []
    )
    if field is None or not dispatching:
        return web.json_response({"ok": False, "error": "no_such_element"}, status=404)
    event = sr.view_action(
        sandbox.secret,
        view=view,
        values=values,
        block_id=block,
        action={"type": element["type"], "action_id": action_id, field: element.get(field)},
        team_id=slack.team_id,
        user_id=user,
        trigger_id=slack.issue_trigger(user),
    )
    status, _ = answer_of(await sandbox.invoke(event))
    return web.json_response({"ok": status == 200, "status": status})


async def ui_close(request: web.Request) -> web.Response:
    sandbox: Sandbox = request.app["sandbox"]
    data = await request.json()
    sandbox.workspace(data.get("team")).close_view(person(str(data.get("user", ""))))
    return web.json_response({"ok": True})
