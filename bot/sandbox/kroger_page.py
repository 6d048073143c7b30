"""The page's side of connecting a Kroger account: the Connect link's confirmation page, and
Kroger sending the browser back here.

The Home tab's "Connect your Kroger account" is a link button (``bot.slack.kroger_section``);
the page opens its link, this page's ``/kroger/connect``, in a new tab, as Slack opens a link:
the bot's confirmation page (``bot.steps.kroger_confirm``), whose "Continue to Kroger" goes on
to the stand-in Kroger's own authorize page (``kroger_authorize``). Allow there redirects the
browser to the bot's redirect URL, which in the sandbox is this page's
``/kroger/oauth_redirect`` (``server.configure_bot`` registers it with the stand-in's app).
Each of the two becomes the API Gateway HTTP API event the function would get
(``slack_oauth.browser_get``), the handler answers it, and its page, status and headers are the
browser's. The bot publishes the person's Home tab again after connecting; the page's other
tab shows it at once (``Sandbox.bump``).

A browser arrives here from the stand-in's page on another port of 127.0.0.1: same site, so
``same_origin_only`` lets the navigation through as it lets the page's own.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from aiohttp import web

from bot.steps.kroger_connect import CONNECT_PATH, REDIRECT_PATH

from .slack_oauth import browser_get

if TYPE_CHECKING:
    from .state import Sandbox


async def kroger_redirect(request: web.Request) -> web.Response:
    """Kroger's redirect back, or the confirmation page, through the handler; the bot's page
    as it answered."""
    sandbox: Sandbox = request.app["sandbox"]
    answer = await sandbox.invoke(browser_get(request.path, request.query_string))
    sandbox.bump()
    headers = {str(k): str(v) for k, v in (answer.get("headers") or {}).items()}
    headers.pop("Content-Length", None)
    return web.Response(
        status=int(answer.get("statusCode", 500)),
        body=str(answer.get("body") or "").encode(),
        headers=headers,
    )


def add_routes(app: web.Application) -> None:
    app.router.add_get(REDIRECT_PATH, kroger_redirect)
    app.router.add_get(CONNECT_PATH, kroger_redirect)
