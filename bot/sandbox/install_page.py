"""The page's "Add to Slack": Slack's OAuth flow, run for real through the handler.

With ``--workspaces many`` the bot serves Bolt's install page and OAuth redirect
(``bot.slack.installs``), and the page plays the person's browser and Slack's authorize page:

1. "Add to Slack" (``/ui/install``): the browser opens ``/slack/install``; the handler answers
   with Bolt's page, whose link to ``https://slack.com/oauth/v2/authorize`` carries a state, the
   scopes asked for, and a cookie holding that state. The page then shows Slack's authorize
   page: the app asks for those scopes in this workspace, Allow or Cancel;
2. Allow (``/ui/install/allow``): the fake Slack hands back a code for the workspace the page
   shows, authorised by the person the page says "You are" (``SlackOAuth.authorize``, given
   the link's client ID and redirect URI), and Slack sends the browser back to
   ``/slack/oauth_redirect`` with the code and the state, the cookie along: the handler checks
   the state, exchanges the code (``oauth.v2.access``, on the fake) and stores the
   installation; its page says what to do next, and the page shows it;
3. Cancel (``/ui/install/cancel``): Slack sends the browser back with ``error=access_denied``
   and the state instead, and the bot's page says the app was not installed.

Nothing here reaches the installation store or the token: the bot gets its token as it would in
production. Like every page endpoint, this one sits behind ``same_origin_only``.
"""

from __future__ import annotations

import html
import re
from typing import TYPE_CHECKING, Any
from urllib.parse import parse_qs, urlencode, urlsplit

from aiohttp import web

from bot.slack.installs import INSTALL_PATH, REDIRECT_PATH

from .slack_oauth import browser_get
from .state import NAMES, PEOPLE, person

if TYPE_CHECKING:
    from .state import Sandbox

_AUTHORIZE_LINK = re.compile(r'href="(https://slack\.com/oauth/v2/authorize\?[^"]+)"')


def page_text(body: str) -> str:
    """What a person reads on an HTML page, as one line: its body's text, a heading ended as a
    sentence, inline tags (``<code>``, ``<a>``…) gone without a trace so that "</code>," stays
    ",", other tags a space, spaces collapsed."""
    found = re.search(r"<body[^>]*>(.*)</body>", body, re.S | re.I)
    text = re.sub(r"([^.!?:\s])\s*</h([1-6])>", r"\1.</h\2>", found[1] if found else body)
    text = re.sub(r"</?(?:a|b|code|em|i|span|strong)\b[^>]*>", "", text, flags=re.I)
    text = re.sub(r"<[^>]+>", " ", text)
    return " ".join(html.unescape(text).split())


def _header(response: dict[str, Any], name: str) -> str:
    headers = {k.lower(): v for k, v in (response.get("headers") or {}).items()}
    value = headers.get(name, "")
    return str(value[0] if isinstance(value, list) else value)


def _refused(status: int, text: str) -> web.Response:
    return web.json_response({"ok": False, "status": status, "text": text})


async def ui_install(request: web.Request) -> web.Response:
    """The person presses "Add to Slack" in the workspace the page shows: Bolt's install page,
    then Slack's authorize page (what the app asks for, Allow or Cancel)."""
    sandbox: Sandbox = request.app["sandbox"]
    data = await request.json()
    if sandbox.client_id is None:
        return web.json_response({"ok": False, "error": "one_workspace"}, status=404)
    slack, user = sandbox.workspace(data.get("team")), person(str(data.get("user", "")))
    install = await sandbox.invoke(browser_get(INSTALL_PATH))
    status, body = int(install.get("statusCode", 500)), str(install.get("body") or "")
    link = _AUTHORIZE_LINK.search(body)
    cookie = _header(install, "set-cookie").split(";")[0]
    if status != 200 or link is None or not cookie:
        return _refused(status, page_text(body) or "The install page has no Add to Slack link.")
    asked = {k: v[0] for k, v in parse_qs(urlsplit(html.unescape(link[1])).query).items()}
    sandbox.authorizing[(slack.team_id, user)] = {**asked, "cookie": cookie}
    scopes = [s for s in asked.get("scope", "").split(",") if s]
    return web.json_response(
        {
            "ok": True,
            "authorize": {
                "app": "Weekly shop",
                "workspace": NAMES.get(slack.team_id, slack.team_id),
                "user": PEOPLE[user],
                "scopes": scopes,
            },
        }
    )


def _pending(sandbox: Sandbox, data: dict[str, Any]) -> tuple[str, dict[str, str]] | None:
    """The workspace and the install its person's authorize page shows, taken (once)."""
    team = sandbox.workspace(data.get("team")).team_id
    asked = sandbox.authorizing.pop((team, person(str(data.get("user", "")))), None)
    return None if asked is None else (team, asked)


async def _redirect(
    sandbox: Sandbox, team: str, query: dict[str, str], cookie: str
) -> web.Response:
    """Slack sends the browser back to the bot's redirect URL; its page says how it went."""
    done = await sandbox.invoke(browser_get(REDIRECT_PATH, urlencode(query), cookie))
    status = int(done.get("statusCode", 500))
    text = page_text(str(done.get("body") or ""))
    installed = status == 200 and sandbox.installed(team)
    return web.json_response({"ok": installed, "status": status, "text": text})


async def ui_allow(request: web.Request) -> web.Response:
    """Allow on Slack's authorize page: a code, and the redirect back with it and the state."""
    sandbox: Sandbox = request.app["sandbox"]
    data = await request.json()
    found = _pending(sandbox, data)
    if found is None:
        return _refused(409, "No Add to Slack is waiting for Allow: press Add to Slack again.")
    team, asked = found
    code = sandbox.slack.oauth.authorize(
        asked.get("client_id", ""),
        asked.get("redirect_uri", ""),
        team_id=team,
        user_id=person(str(data.get("user", ""))),
    )
    query = {"code": code, "state": asked.get("state", "")}
    return await _redirect(sandbox, team, query, asked["cookie"])


async def ui_cancel(request: web.Request) -> web.Response:
    """Cancel on Slack's authorize page: the redirect back says ``error=access_denied``."""
    sandbox: Sandbox = request.app["sandbox"]
    found = _pending(sandbox, await request.json())
    if found is None:
        return _refused(409, "No Add to Slack is waiting.")
    team, asked = found
    query = {"error": "access_denied", "state": asked.get("state", "")}
    return await _redirect(sandbox, team, query, asked["cookie"])


def add_routes(app: web.Application) -> None:
    app.router.add_post("/ui/install", ui_install)
    app.router.add_post("/ui/install/allow", ui_allow)
    app.router.add_post("/ui/install/cancel", ui_cancel)
