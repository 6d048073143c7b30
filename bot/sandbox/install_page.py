"""The page's "Add to Slack": Slack's OAuth flow, run for real through the handler.

With ``--workspaces many`` the bot serves Bolt's install page and OAuth redirect
(``bot.slack.installs``), and the page's button plays the person's browser and Slack's authorize
page:

1. the browser opens ``/slack/install``: the handler answers with Bolt's page, whose link to
   ``https://slack.com/oauth/v2/authorize`` carries a state, and a cookie holding that state;
2. the person presses Allow on Slack's authorize page: the fake Slack hands back a code for the
   workspace the page shows, authorised by the person the page says "You are"
   (``SlackOAuth.authorize``, given the link's client ID and redirect URI);
3. Slack sends the browser back to ``/slack/oauth_redirect`` with the code and the state, the
   cookie along: the handler checks the state, exchanges the code (``oauth.v2.access``, on the
   fake) and stores the installation; its page says what to do next, and the page shows it.

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
from .state import person

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
    """The person presses "Add to Slack" in the workspace the page shows."""
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
    asked = parse_qs(urlsplit(html.unescape(link[1])).query)
    client_id = asked.get("client_id", [""])[0]
    redirect_uri = asked.get("redirect_uri", [""])[0]
    code = sandbox.slack.oauth.authorize(
        client_id, redirect_uri, team_id=slack.team_id, user_id=user
    )
    query = urlencode({"code": code, "state": asked.get("state", [""])[0]})
    done = await sandbox.invoke(browser_get(REDIRECT_PATH, query, cookie))
    status = int(done.get("statusCode", 500))
    text = page_text(str(done.get("body") or ""))
    installed = status == 200 and sandbox.installed(slack.team_id)
    return web.json_response({"ok": installed, "status": status, "text": text})


def add_routes(app: web.Application) -> None:
    app.router.add_post("/ui/install", ui_install)
