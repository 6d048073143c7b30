"""Where a person connects their Kroger account from the Home tab, and disconnects it.

The Home tab's "Kroger cart" section (:func:`home_section`) reads whether the viewer is
connected (the parameter's metadata: nothing decrypted) and, if not, links to the bot's own
``GET /kroger/connect?state=…`` with a fresh signed state (``bot.orders.kroger_connect``:
nothing written). That page (``bot.steps.kroger_confirm``) names whose connection it is and
links on to Kroger's authorize page with the same state. Kroger sends the browser back to
``GET /kroger/oauth_redirect?code=…&state=…`` (an API Gateway HTTP API event, dispatched by
``bot.handler`` before Bolt: no Slack signature on a browser's request), and
:func:`redirect_page` answers it::

    1 the state read: form, MAC, age           (forged, malformed, expired: refused, no call)
    2 the workspace still has the app          (else refused; nothing spent)
    3 the state redeemed: one If-None-Match PUT (used already: refused)
    4 the code exchanged, the verifier recomputed from the state (Kroger refusing or down:
      said; the code is spent, the person connects again)
    5 the refresh token saved (KrogerAccounts.save) before anything else
    6 the person's Home tab published again; the page says it is connected

``error=access_denied`` (Cancel at Kroger) answers at once, changing nothing. Each page is ours,
a sentence and no script, and nothing read from the request is echoed into it. Neither the
code, a token nor the verifier reaches a log line.

Disconnect (:func:`disconnect`) deletes the person's token (``KrogerAccounts.forget_person``).
A token last saved over a month ago is renewed as the person's tab is drawn (:func:`renew`), so
a connection nobody orders with does not expire unseen; one Kroger refuses is forgotten and said.
"""

from __future__ import annotations

import html
import logging
from collections.abc import Callable
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any

from bot.orders.kroger_connect import Issued
from bot.slack.kroger_section import kroger_rows
from workflow.errors import StoreError

if TYPE_CHECKING:
    from bot.orders.kroger_cart import KrogerCart
    from bot.orders.kroger_connect import KrogerStates
    from bot.records.kroger_accounts import KrogerAccounts
    from bot.slack.blocks import Block

log = logging.getLogger(__name__)

REDIRECT_PATH = "/kroger/oauth_redirect"
CONNECT_PATH = "/kroger/connect"  # the Connect link's confirmation page, beside the redirect
BACK = "Connect again from the app's Home tab in Slack."
CONNECTED = (
    "Your Kroger account is connected to weekly-shop. You can close this tab and go back to Slack."
)
HEADERS = {
    "Content-Type": "text/html; charset=utf-8",
    "Content-Security-Policy": "default-src 'none'; frame-ancestors 'none'",
    "X-Content-Type-Options": "nosniff",
    "Referrer-Policy": "no-referrer",  # the address holds the code and the state
    "Cache-Control": "no-store",
}


@dataclass(frozen=True)
class Connecting:
    """What connecting needs (``bot.runtime.kroger`` builds it): the states, the deploy's
    Kroger app, the redirect URL registered with it, the people's tokens, where the states'
    markers go, whether a workspace has the app, its people's Home tabs to publish, and what
    Slack calls a person and their workspace (each None where Slack cannot say)."""

    states: KrogerStates
    cart: KrogerCart
    redirect_url: str
    accounts: KrogerAccounts
    s3: Callable[[], Any]
    bucket: str
    states_prefix: str
    installed: Callable[[str], bool]  # raises StoreError when it cannot tell
    republish: Callable[[str, str], None]
    names: Callable[[str, str], tuple[str | None, str | None]]


def home_section(c: Connecting, team: str, user: str) -> list[Block]:
    """The viewer's "Kroger cart" rows: connected as of when, or a Connect link with a fresh
    state; SSM failing says it cannot tell (never "not connected")."""
    from bot.records.workspace_secrets import SecretsDown

    try:
        connected = c.accounts.connected_at(team, user)
    except SecretsDown as exc:
        log.warning("the Home tab could not tell whether a Kroger account is connected: %s", exc)
        return kroger_rows(None, known=False)
    from bot.orders.kroger_tokens import RENEW_AFTER

    ended = False
    if connected is not None and c.states.clock() - connected.timestamp() > RENEW_AFTER:
        connected, ended = renew(c, team, user, connected)
    if connected is not None:
        return kroger_rows(connected)
    state, _ = c.states.issue(team, user)
    return kroger_rows(None, connect_url=connect_url(c.redirect_url, state), ended=ended)


def renew(c: Connecting, team: str, user: str, saved: datetime) -> tuple[datetime | None, bool]:
    """A connection last saved over :data:`RENEW_AFTER` ago, renewed as its tab is drawn
    (``bot.orders.kroger_tokens``): (when it is saved as of now, None if it is not; whether
    Kroger refused it, when it is forgotten). Kroger or SSM failing keeps what was saved."""
    from bot.orders.kroger_tokens import NoneSaved, NotSaved, renewed
    from bot.orders.kroger_values import KrogerError, NotConnected
    from bot.records.workspace_secrets import SecretsDown

    try:
        renewed(c.cart, c.accounts, team, user)
    except NoneSaved:  # disconnected meanwhile
        return None, False
    except (NotConnected, NotSaved) as exc:  # refused; or renewed, and the new token lost
        log.warning("a Kroger connection being renewed ended (%s): it is forgotten", exc)
        try:
            c.accounts.forget_person(team, user)
        except SecretsDown as down:
            log.warning("an ended Kroger connection could not be forgotten: %s", down)
            return None, False  # still saved: not said to be forgotten
        return None, True
    except (KrogerError, SecretsDown) as exc:
        log.warning("a Kroger connection could not be renewed just now: %s", exc)
        return saved, False
    return datetime.fromtimestamp(c.states.clock(), UTC), False


def connect_url(redirect_url: str, state: str) -> str:
    """The Connect link: the confirmation page beside the redirect route (the same HTTP API;
    at the site's root if the redirect URL is not one of ours), with the state only."""
    from urllib.parse import urlencode, urljoin

    if redirect_url.endswith(REDIRECT_PATH):
        base = redirect_url[: -len(REDIRECT_PATH)] + CONNECT_PATH
    else:
        base = urljoin(redirect_url, CONNECT_PATH)
    return f"{base}?{urlencode({'state': state})}"


def disconnect(c: Connecting, team: str, user: str) -> str:
    """Delete the person's token; what their Home tab says (mrkdwn, ours)."""
    from bot.records.workspace_secrets import SecretsDown

    try:
        had = c.accounts.forget_person(team, user)
    except SecretsDown as exc:
        log.error("a Kroger account could not be disconnected: %s", exc)
        return "I couldn't disconnect your Kroger account just now. Try again in a minute."
    log.info("workspace %s: a Kroger account disconnected (%s)", team, "was" if had else "none")
    return "Your Kroger account is disconnected: nothing more will be added to its cart."


def page(status: int, title: str, text: str) -> dict[str, Any]:
    """An API Gateway answer: a small HTML page of our own text, no script."""
    body = (
        f"<!DOCTYPE html><html><head><meta charset=utf-8><title>{html.escape(title)}</title>"
        f"</head><body><h1>{html.escape(title)}</h1><p>{html.escape(text)}</p></body></html>"
    )
    return {"statusCode": status, "headers": dict(HEADERS), "body": body}


NOT_CONNECTED = "Not connected"


def redirect_page(c: Connecting | None, event: dict[str, Any]) -> dict[str, Any]:
    """Kroger's redirect back (see the module's docstring); ``c`` None: this deploy has no
    Kroger app (or nowhere to keep a token), so there is no such page."""
    if c is None:
        return page(404, "Not found", "This deploy does not connect Kroger accounts.")
    code, state, error = (query_one(event, k) for k in ("code", "state", "error"))
    if error == "access_denied":
        return page(
            200, NOT_CONNECTED, f"Connecting was cancelled at Kroger: nothing changed. {BACK}"
        )
    if error is not None or not isinstance(code, str) or not code:
        log.warning("Kroger redirect without a code (error %r)", str(error)[:40])
        return page(400, NOT_CONNECTED, f"Kroger did not send this account back. {BACK}")
    issued = checked_state(c, state, "redirect")
    if not isinstance(issued, Issued):
        return issued
    try:
        first = c.states.redeem(issued, c.s3(), c.bucket, c.states_prefix)
    except StoreError as exc:
        log.error("a Kroger state could not be checked: %s", exc)
        return page(503, NOT_CONNECTED, f"The connection could not be checked just now. {BACK}")
    if not first:
        log.warning("Kroger state refused: already redeemed")
        return page(400, NOT_CONNECTED, f"This connection link was already used. {BACK}")
    return _connect(c, issued.team, issued.user, code, issued.verifier)


def checked_state(c: Connecting, state: str | None, what: str) -> Issued | dict[str, Any]:
    """What ``state`` says if it is ours, unexpired and for a workspace that has the app (no
    S3 call for one that is not ours); otherwise the page saying why. ``what`` names the page
    asking, in the log: the Connect link's or Kroger's redirect."""
    issued = c.states.read(state)
    if issued is None:
        log.warning("Kroger %s refused: forged, malformed, expired or missing", what)
        return page(400, NOT_CONNECTED, f"This connection link has expired or is not ours. {BACK}")
    try:
        installed = c.installed(issued.team)
    except StoreError as exc:
        log.error("a Kroger %s's workspace could not be checked: %s", what, exc)
        return page(503, NOT_CONNECTED, f"The connection could not be checked just now. {BACK}")
    if not installed:
        log.warning("Kroger %s for workspace %s, which has no app", what, issued.team)
        return page(404, NOT_CONNECTED, "weekly-shop is not installed in that Slack workspace.")
    return issued


def query_one(event: dict[str, Any], name: str) -> str | None:
    """The query's ``name``, if it is there once. Read from ``rawQueryString`` (percent-encoded
    as the browser sent it: API Gateway's decoded ``queryStringParameters`` joins a repeated
    name's values with commas)."""
    from urllib.parse import parse_qs

    raw = event.get("rawQueryString")
    found = parse_qs(raw if isinstance(raw, str) else "", keep_blank_values=True).get(name)
    return found[0] if found is not None and len(found) == 1 else None


def _connect(c: Connecting, team: str, user: str, code: str, verifier: str) -> dict[str, Any]:
    from bot.orders.kroger_values import KrogerDown, KrogerError
    from bot.records.workspace_secrets import SecretsDown

    try:
        tokens = c.cart.exchange_code(code, verifier, c.redirect_url)
    except KrogerDown as exc:
        log.error("Kroger did not answer a code exchange: %s", type(exc).__name__)
        return page(502, NOT_CONNECTED, f"Kroger did not answer just now. {BACK}")
    except KrogerError as exc:  # NotConnected, KrogerRefused: the code or the app refused
        log.warning("Kroger refused a code exchange: %s", type(exc).__name__)
        return page(400, NOT_CONNECTED, f"Kroger did not accept this connection. {BACK}")
    try:
        c.accounts.save(team, user, tokens.refresh_token)
    except SecretsDown as exc:
        log.error("a Kroger refresh token could not be saved: %s", exc)
        return page(
            503,
            NOT_CONNECTED,
            f"Kroger accepted the connection, but it could not be saved just now. {BACK}",
        )
    log.info("workspace %s: a Kroger account connected", team)
    try:
        c.republish(team, user)
    except Exception as exc:  # noqa: BLE001 - connected all the same; the tab shows it next time
        log.error("the Home tab was not published after connecting Kroger: %s", exc)
    return page(200, "Connected", CONNECTED)
