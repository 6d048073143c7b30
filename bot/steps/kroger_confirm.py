"""The page the Home tab's Connect link opens: whose Kroger connection this is, before Kroger.

A Connect link is its Slack user's: whoever opens it and signs in at Kroger links *their*
Kroger account to *that* person, and Kroger's consent page names only the app. So the link
goes here first (``GET /kroger/connect?state=…``, dispatched by ``bot.handler`` like the
redirect), and :func:`confirm_page` answers::

    1 the state read: form, MAC, age       (forged, malformed, expired, missing: 400, no call)
    2 the workspace still has the app      (else 404)
    3 the person's and the workspace's names, as Slack says them (``users.info``, scope
      ``users:read``; ``auth.test``, no scope); where Slack cannot say in time, the ID
    4 the page: "Connect a Kroger account for <name> in <workspace>? …", a link on to
      Kroger's authorize page with the same state and its S256 challenge, and Cancel

Nothing is written: the state is redeemed only when Kroger sends the browser back
(``bot.steps.kroger_connect``). Cancel (``?cancel=1``) says nothing changed. The names are
Slack's, escaped into the HTML; the page has no script and the redirect's security headers.
"""

from __future__ import annotations

import html
import logging
from typing import Any

from bot.orders.kroger_connect import Issued

from .kroger_connect import HEADERS, NOT_CONNECTED, Connecting, checked_state, page, query_one

log = logging.getLogger(__name__)

TITLE = "Connect a Kroger account"
CANCELLED = "Nothing was connected. You can close this tab and go back to Slack."


def person_name(found: dict[str, Any]) -> str | None:
    """What ``users.info``'s ``user`` calls the person: their real name, else their display
    name; None if neither is set."""
    profile = found.get("profile")
    profile = profile if isinstance(profile, dict) else {}
    for name in (profile.get("real_name"), found.get("real_name"), profile.get("display_name")):
        if isinstance(name, str) and name.strip():
            return name.strip()
    return None


def confirm_page(c: Connecting | None, event: dict[str, Any]) -> dict[str, Any]:
    """The Connect link's page (see the module's docstring); ``c`` None: this deploy has no
    Kroger app, so there is no such page."""
    if c is None:
        return page(404, "Not found", "This deploy does not connect Kroger accounts.")
    if query_one(event, "cancel") is not None:
        return page(200, NOT_CONNECTED, CANCELLED)
    state = query_one(event, "state")
    issued = checked_state(c, state, "connect link")
    if not isinstance(issued, Issued):
        return issued
    person, workspace = c.names(issued.team, issued.user)
    kroger = c.cart.authorize_url(c.redirect_url, str(state), issued.verifier)
    return confirmation(person or issued.user, workspace or issued.team, kroger)


def confirmation(person: str, workspace: str, kroger_url: str) -> dict[str, Any]:
    """The page itself: Slack's names and Kroger's URL escaped, no script."""
    who, where, go = html.escape(person), html.escape(workspace), html.escape(kroger_url)
    body = (
        f"<!DOCTYPE html><html><head><meta charset=utf-8><title>{TITLE}</title></head><body>"
        f"<h1>{TITLE}</h1>"
        f"<p>Connect a Kroger account for <strong>{who}</strong> in <strong>{where}</strong>?</p>"
        f"<p>When this workspace sends its approved baskets to {who}'s Kroger cart, they are "
        "added to the cart of the Kroger account you sign in with. If you are not "
        f"{who}, close this page.</p>"
        f'<p><a href="{go}">Continue to Kroger</a></p>'
        '<p><a href="?cancel=1">Cancel</a></p>'
        "</body></html>"
    )
    return {"statusCode": 200, "headers": dict(HEADERS), "body": body}
