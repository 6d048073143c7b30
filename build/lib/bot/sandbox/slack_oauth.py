"""Slack's OAuth as the fake Web API plays it: an app's credentials, the codes Slack's authorize
page would hand back, ``oauth.v2.access`` exchanging one for a bot token, and which workspace
each token belongs to (``auth.test`` answers per token).

What Slack refuses, refused here: an unknown client or a wrong secret (``invalid_client_id``,
``bad_client_secret``), a code used twice or older than ten minutes, or issued to another client
(``invalid_code``), a ``redirect_uri`` other than the one the code was issued for
(``bad_redirect_uri``). A second install of a workspace issues a new token; the old one is
revoked (``invalid_auth`` from then on): the fake assumes the new token replaces the old (Slack
without token rotation may hand the same one back; the bot stores whichever it gets).
"""

from __future__ import annotations

import re
import secrets
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any
from urllib.parse import parse_qs, urlsplit

CODE_SECONDS = 600


@dataclass
class _Code:
    client_id: str
    team_id: str
    user_id: str
    redirect_uri: str
    issued: float
    used: bool = False
    enterprise_id: str = ""  # the workspace's Enterprise Grid org, if any
    org_wide: bool = False  # an install for the whole org: no team of its own


class SlackOAuth:
    """The OAuth side of a fake workspace: ``tokens`` maps a live bot token to its team."""

    def __init__(self, token: str, team_id: str, bot_user_id: str, bot_id: str) -> None:
        self.tokens: dict[str, str] = {token: team_id}
        self.bot_user_id, self.bot_id = bot_user_id, bot_id
        self._clients: dict[str, str] = {}
        self._codes: dict[str, _Code] = {}
        self._mutex = threading.Lock()

    def register_app(self, client_id: str, client_secret: str) -> None:
        with self._mutex:
            self._clients[client_id] = client_secret

    def authorize(
        self,
        client_id: str,
        redirect_uri: str,
        team_id: str = "T0TEAM",
        user_id: str = "U0ALICE",
        *,
        enterprise_id: str = "",
        org_wide: bool = True,
    ) -> str:
        """What Slack's authorize page hands back once the person allows the app: a code. With
        ``enterprise_id``, the workspace is in an Enterprise Grid org: an org-wide install, or
        (``org_wide=False``) an install in that one workspace, which names its org too."""
        code = f"{secrets.randbelow(10**12)}.{secrets.token_hex(16)}"
        with self._mutex:
            self._codes[code] = _Code(
                client_id, team_id, user_id, redirect_uri, time.time(), enterprise_id=enterprise_id
            )
            self._codes[code].org_wide = org_wide and bool(enterprise_id)
        return code

    def installed(self, team_id: str) -> bool:
        """Whether a live bot token of ``team_id`` exists: the app is installed there."""
        with self._mutex:
            return team_id in self.tokens.values()

    def revoke(self, token: str) -> None:
        """The token stops working (``invalid_auth``), as when its app is removed."""
        with self._mutex:
            self.tokens.pop(token, None)

    def team_of(self, token: str | None) -> str | None:
        with self._mutex:
            return self.tokens.get(token or "")

    def access(self, args: dict[str, Any]) -> tuple[str | None, dict[str, Any]]:
        """``oauth.v2.access``: (error, fields)."""
        client_id = str(args.get("client_id") or "")
        with self._mutex:
            if client_id not in self._clients:
                return "invalid_client_id", {}
            if self._clients[client_id] != args.get("client_secret"):
                return "bad_client_secret", {}
            code = self._codes.get(str(args.get("code") or ""))
            if (
                code is None
                or code.used
                or code.client_id != client_id
                or time.time() - code.issued > CODE_SECONDS
            ):
                return "invalid_code", {}
            if args.get("redirect_uri") and args["redirect_uri"] != code.redirect_uri:
                return "bad_redirect_uri", {}
            code.used = True
            for old in [t for t, team in self.tokens.items() if team == code.team_id]:
                del self.tokens[old]  # a reinstall rotates the workspace's token
            token = f"xoxb-{code.team_id.lower()}-{secrets.token_hex(12)}"
            self.tokens[token] = code.team_id
        return None, {
            "app_id": "A0WEEKLY",
            "authed_user": {"id": code.user_id},
            "scope": "commands,chat:write,channels:read,groups:read,im:read,mpim:read",
            "token_type": "bot",
            "access_token": token,
            "bot_user_id": self.bot_user_id,
            # An org-wide install names the organization, not a workspace (docs.slack.dev).
            "team": None if code.org_wide else {"id": code.team_id, "name": code.team_id},
            "enterprise": {"id": code.enterprise_id, "name": "Org"} if code.enterprise_id else None,
            "is_enterprise_install": code.org_wide,
        }


def browser_get(path: str, query: str = "", cookie: str = "") -> dict[str, Any]:
    """A browser's ``GET`` through API Gateway v2 (the install page, Slack's redirect back)."""
    headers = {
        "accept": "text/html",
        "host": "fakeapi123.execute-api.us-east-1.amazonaws.com",
        "user-agent": "Mozilla/5.0",
    }  # API Gateway v2 moves the Cookie header into "cookies"
    return {
        "version": "2.0",
        "routeKey": f"GET {path}",
        "rawPath": path,
        "rawQueryString": query,
        "headers": headers,
        **({"cookies": [cookie]} if cookie else {}),
        "queryStringParameters": dict(
            part.split("=", 1) for part in query.split("&") if "=" in part
        ),
        "requestContext": {
            "http": {"method": "GET", "path": path, "protocol": "HTTP/1.1"},
            "requestId": secrets.token_urlsafe(12),
            "routeKey": f"GET {path}",
            "stage": "$default",
        },
        "isBase64Encoded": False,
    }


def add_to_slack(
    send: Callable[[dict[str, Any]], dict[str, Any]],
    oauth: SlackOAuth,
    client_id: str,
    team_id: str = "T0TEAM",
    user_id: str = "U0ALICE",
    **authorize: Any,
) -> dict[str, Any]:
    """A person's browser through Add to Slack: the install page (its authorize link's state,
    its state cookie), Slack's authorize page (the fake hands back a code, as Allow does), and
    the redirect back to the app; ``send`` delivers each request to the handler. The last
    response (the page the person sees)."""
    page = send(browser_get("/slack/install"))
    found = re.search(r'href="([^"]*/oauth/v2/authorize\?[^"]+)"', str(page.get("body")))
    if page.get("statusCode") != 200 or found is None:
        raise ValueError(f"no install page: {str(page)[:300]}")
    state = parse_qs(urlsplit(found[1].replace("&amp;", "&")).query)["state"][0]
    cookie = str((page.get("headers") or {}).get("set-cookie", "")).split(";")[0]
    code = oauth.authorize(client_id, "", team_id=team_id, user_id=user_id, **authorize)
    return send(browser_get("/slack/oauth_redirect", f"code={code}&state={state}", cookie))
