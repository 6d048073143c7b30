"""The customer's side of the local Kroger API (:mod:`.kroger_api` serves it): the authorize
page with PKCE, the ``authorization_code`` and ``refresh_token`` grants, and ``PUT /v1/cart/add``
into a cart per customer that a test reads with :meth:`Customers.cart_of`.

What it relies on, and where from (as in :mod:`.kroger_api`; "unconfirmed": no source we read
says so):

- ``GET /v1/connect/oauth2/authorize?scope=…&response_type=code&client_id=…&redirect_uri=…
  &state=…`` shows Kroger's sign-in and consent page, then redirects to ``redirect_uri`` with
  ``code`` (and ``state``) (Kroger's authorization tutorial and its OpenAPI "Authorization
  Endpoints" 1.0.13, copied in public repositories). PKCE's ``code_challenge`` and
  ``code_challenge_method`` are taken "as of version 1.0.17" (the ``kroger-api`` package's
  glossary) and optional there ("if PKCE was used"); only ``S256`` is taken here, and a challenge
  without its method is refused (unconfirmed: RFC 7636 would read it as ``plain``). Redirect URLs
  are registered with the app; an unknown client or an unregistered ``redirect_uri`` gets an
  error page and no redirect (RFC 6749 §4.1.2.1; Kroger's own page unconfirmed). Cancel
  redirects with ``error=access_denied`` (RFC 6749 §4.1.2.1; unconfirmed for Kroger).
- ``POST /v1/connect/oauth2/token`` (the app's ID and secret as HTTP Basic) with
  ``grant_type=authorization_code&code=…&redirect_uri=…&code_verifier=…`` answers
  ``access_token``, ``refresh_token``, ``expires_in`` (1800: 30 minutes, as the app's) (Kroger's
  tutorial: "both an access and refresh token"). A code works once and for ten minutes here (RFC
  6749's "maximum of 10 minutes"; Kroger's life unconfirmed). A wrong verifier, a used or old code,
  or another ``redirect_uri`` is 400 ``invalid_grant`` (RFC 6749 §5.2; Kroger's codes unconfirmed).
- ``grant_type=refresh_token&refresh_token=…`` answers a new access token *and a new refresh
  token*: "The refresh token is invalidated once the client has used it to get a new access and
  refresh token. Any further requests using the refresh token will return a 400 Missing/Invalid
  Refresh Token" (Kroger's refresh token tutorial). A refresh token's own life is unconfirmed
  (one public client assumes six months): here it lives until used or :meth:`revoke`.
- ``PUT /v1/cart/add`` with ``{"items": [{"upc", "quantity", "modality"}]}`` and a customer's
  ``Bearer`` token carrying ``cart.basic:write`` (clients in public repositories; modality
  ``PICKUP`` or ``DELIVERY`` in the package's glossary, ``SHIP`` in one TypeScript client: all
  three taken here, ``PICKUP`` when none is sent, unconfirmed). Success is 204 with no body (the
  package's client expects 204 from "some endpoints"; unconfirmed that this is one). "Cart
  operations require a user-authorized token": an app's client-credentials token is 403 here
  (the status unconfirmed; a 403 ``CART-2216`` "required scope not found" is reported for a token
  without the cart's scope). A UPC that is not 13 digits, a quantity under 1 and an unknown
  modality are 400 here (unconfirmed). No idempotency key: two adds add twice, and a cart
  cannot be read back without partner access (Kroger's public Cart API only adds).

What a test does: :meth:`Customers.fail_next_add` answers the next add with a status and adds
nothing; :meth:`Customers.drop_next_add` adds, then (at once, or after the client gave up
waiting) closes the connection without an answer: the outcome the bot cannot know.
"""

from __future__ import annotations

import base64
import hashlib
import html
import json
import re
import secrets
import threading
import time
from collections import defaultdict
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any
from urllib.parse import urlencode

CART_SCOPE = "cart.basic:write"
CUSTOMER_SCOPES = frozenset({"cart.basic:write", "profile.compact", "product.compact"})
MODALITIES = ("PICKUP", "DELIVERY", "SHIP")
CODE_LIFE = 600
UPC = re.compile(r"\d{13}")
DROP = "drop"  # the answer that is no answer: the connection closes

Answer = tuple[int, Any, dict[str, str]]
Page = tuple[int, str, dict[str, str]]


def api_error(status: int, reason: str) -> Answer:
    body = {"timestamp": int(time.time() * 1000), "code": f"API-{status}", "reason": reason}
    return status, {"errors": body}, {}


def oauth_error(status: int, error: str, description: str) -> Answer:
    headers = {"www-authenticate": f'Bearer error="{error}"'} if status in (401, 403) else {}
    return status, {"error": error, "error_description": description}, headers


@dataclass
class _Code:
    client_id: str
    customer: str
    redirect_uri: str
    challenge: str
    scopes: frozenset[str]
    issued: float


@dataclass
class _Access:
    customer: str
    scopes: frozenset[str]
    expires_at: float


class Customers:
    """Kroger's customers as one stand-in sees them: who is signed in on its authorize page
    (``signed_in``), the redirect URLs registered per client, and each customer's cart."""

    def __init__(self, clock: Callable[[], float], token_life: int) -> None:
        self.clock, self.token_life = clock, token_life
        self.signed_in = "customer-1"
        self.redirect_uris: dict[str, set[str]] = defaultdict(set)
        self._lock = threading.Lock()
        self._pending: dict[str, dict[str, str]] = {}  # the page's nonce -> its request
        self._codes: dict[str, _Code] = {}
        self._access: dict[str, _Access] = {}
        self._refresh: dict[str, tuple[str, frozenset[str]]] = {}
        self._carts: dict[str, list[dict[str, Any]]] = defaultdict(list)
        self._faults: list[int | float] = []  # a status to answer, or seconds before dropping

    # -- what a test does -----------------------------------------------------------------

    def register(self, client_id: str, redirect_uri: str) -> None:
        """``redirect_uri`` is one of the app's redirect URLs, as set in Kroger's portal."""
        self.redirect_uris[client_id].add(redirect_uri)

    def cart_of(self, customer: str) -> list[dict[str, Any]]:
        """What each add put in ``customer``'s cart, in order (``upc``, ``quantity``,
        ``modality``)."""
        with self._lock:
            return [dict(item) for item in self._carts.get(customer, [])]

    def revoke(self, customer: str) -> None:
        """Every token of ``customer`` stops working (the person removed the app at Kroger)."""
        with self._lock:
            for table in (self._access, self._refresh):
                for key in [k for k, v in table.items() if _owner(v) == customer]:
                    del table[key]

    def fail_next_add(self, status: int) -> None:
        with self._lock:
            self._faults.append(int(status))

    def drop_next_add(self, after: float = 0.0) -> None:
        """The next add is made, and ``after`` seconds later the connection closes unanswered."""
        with self._lock:
            self._faults.append(float(after))

    def cart_page(self) -> tuple[int, str, dict[str, str]]:
        """``GET /cart``: the signed-in customer's cart as kroger.com shows it to them (the
        page the thread's Open the Kroger cart links to in the sandbox): each add's lines."""
        with self._lock:
            lines = list(self._carts.get(self.signed_in, []))
        rows = "".join(
            f"<li>{html.escape(str(i['upc']))} × {int(i['quantity'])} "
            f"({html.escape(str(i['modality']).lower())})</li>"
            for i in lines
        )
        who = html.escape(self.signed_in)
        body = f"<p>Signed in as {who}: {len(lines)} lines</p><ul>{rows}</ul>"
        return _page(200, "Your Kroger cart", body)

    # -- the authorize page ---------------------------------------------------------------

    def page(self, query: dict[str, str]) -> tuple[int, str, dict[str, str]]:
        """``GET /v1/connect/oauth2/authorize``: the consent page, or why not."""
        client_id, redirect_uri = query.get("client_id", ""), query.get("redirect_uri", "")
        if client_id not in self.redirect_uris:
            return _page(400, "Unknown client", "No Kroger app has this client ID.")
        if redirect_uri not in self.redirect_uris[client_id]:
            return _page(400, "Wrong redirect", "This redirect URL is not registered for the app.")
        back = _back(redirect_uri, query.get("state"))
        if query.get("response_type") != "code":
            return back({"error": "unsupported_response_type"})
        scopes = frozenset(query.get("scope", "").split())
        if not scopes or not scopes <= CUSTOMER_SCOPES:
            return back({"error": "invalid_scope"})
        challenge, method = query.get("code_challenge", ""), query.get("code_challenge_method")
        if (challenge or method) and (method != "S256" or not 43 <= len(challenge) <= 128):
            return back({"error": "invalid_request", "error_description": "PKCE: S256 only"})
        nonce = secrets.token_urlsafe(16)
        with self._lock:
            self._pending[nonce] = query
        asks = ", ".join(sorted(scopes))
        body = (
            f"<p>Signed in as {html.escape(self.signed_in)}</p>"
            f"<p>An app asks to use your Kroger account: {html.escape(asks)}</p>"
            + "".join(
                '<form method="get" action="/v1/connect/oauth2/authorize/decision">'
                f'<input type="hidden" name="request" value="{nonce}">'
                f'<button name="choice" value="{choice}">{choice.title()}</button></form>'
                for choice in ("allow", "cancel")
            )
        )
        return _page(200, "Sign in with Kroger", body)

    def decide(self, query: dict[str, str]) -> tuple[int, str, dict[str, str]]:
        """Allow or Cancel on the page: the redirect back with a code or ``access_denied``."""
        with self._lock:
            asked = self._pending.pop(query.get("request", ""), None)
        if asked is None:
            return _page(400, "Expired", "This sign-in page was used already: start again.")
        back = _back(asked["redirect_uri"], asked.get("state"))
        if query.get("choice") != "allow":
            return back({"error": "access_denied"})
        code = secrets.token_urlsafe(24)
        with self._lock:
            self._codes[code] = _Code(
                asked["client_id"],
                self.signed_in,
                asked["redirect_uri"],
                asked.get("code_challenge", ""),
                frozenset(asked.get("scope", "").split()),
                self.clock(),
            )
        return back({"code": code})

    # -- the token endpoint's customer grants ----------------------------------------------

    def grant(self, client_id: str, form: dict[str, str]) -> Answer:
        """``authorization_code`` or ``refresh_token`` for an app already authenticated."""
        with self._lock:
            if form.get("grant_type") == "authorization_code":
                code = self._codes.pop(form.get("code", ""), None)  # once only, right or wrong
                if (
                    code is None
                    or code.client_id != client_id
                    or self.clock() - code.issued > CODE_LIFE
                    or form.get("redirect_uri") != code.redirect_uri
                    or (code.challenge and _s256(form.get("code_verifier", "")) != code.challenge)
                ):
                    return oauth_error(400, "invalid_grant", "The authorization code is invalid")
                customer, scopes = code.customer, code.scopes
            else:
                found = self._refresh.pop(form.get("refresh_token", ""), None)
                if found is None:
                    return oauth_error(400, "invalid_grant", "Missing/Invalid Refresh Token")
                customer, scopes = found
            access, refresh = secrets.token_urlsafe(24), secrets.token_urlsafe(24)
            self._access[access] = _Access(customer, scopes, self.clock() + self.token_life)
            self._refresh[refresh] = (customer, scopes)
        answer = {
            "access_token": access,
            "refresh_token": refresh,
            "token_type": "bearer",
            "expires_in": self.token_life,
            "scope": " ".join(sorted(scopes)),
        }
        return 200, answer, {"cache-control": "no-store"}

    # -- the cart --------------------------------------------------------------------------

    def add(self, bearer: str, is_app_token: Callable[[str], bool], raw: bytes) -> Answer | str:
        """``PUT /v1/cart/add``: 204, an error, or :data:`DROP` (added, then no answer)."""
        token = bearer.removeprefix("Bearer ") if bearer.startswith("Bearer ") else ""
        with self._lock:
            access = self._access.get(token)
        if access is None and token and is_app_token(token):
            return oauth_error(403, "insufficient_scope", "Cart calls need a customer's token")
        if access is None or access.expires_at <= self.clock():
            why = "The access token is invalid or has expired" if token else "missing"
            return oauth_error(401, "invalid_token" if token else "invalid_request", why)
        if CART_SCOPE not in access.scopes:
            return oauth_error(403, "insufficient_scope", f"required scope {CART_SCOPE}")
        items = _items(raw)
        if isinstance(items, str):
            return api_error(400, items)
        with self._lock:
            fault = self._faults.pop(0) if self._faults else None
            if isinstance(fault, int):
                return api_error(fault, "fake")
            self._carts[access.customer].extend(items)
        if isinstance(fault, float):
            time.sleep(fault)
            return DROP
        return 204, None, {}


def _owner(value: Any) -> str:
    return value.customer if isinstance(value, _Access) else str(value[0])


def _items(raw: bytes) -> list[dict[str, Any]] | str:
    """The items of a cart add, or why Kroger would refuse them."""
    try:
        body = json.loads(raw)
    except ValueError:
        return "The request body must be JSON"
    items = body.get("items") if isinstance(body, dict) else None
    if not isinstance(items, list) or not items:
        return "items must be a list of one or more items"
    found = []
    for item in items:
        if not isinstance(item, dict):
            return "each item is an object"
        upc, quantity = item.get("upc"), item.get("quantity")
        modality = item.get("modality", "PICKUP")
        if not isinstance(upc, str) or not UPC.fullmatch(upc):
            return "upc must be 13 digits"
        if isinstance(quantity, bool) or not isinstance(quantity, int) or quantity < 1:
            return "quantity must be a whole number of 1 or more"
        if modality not in MODALITIES:
            return f"modality must be one of {', '.join(MODALITIES)}"
        found.append({"upc": upc, "quantity": quantity, "modality": modality})
    return found


def _s256(verifier: str) -> str:
    digest = hashlib.sha256(verifier.encode("ascii", errors="replace")).digest()
    return base64.urlsafe_b64encode(digest).decode().rstrip("=")


def _back(redirect_uri: str, state: str | None) -> Callable[[dict[str, str]], Page]:
    def redirect(params: dict[str, str]) -> tuple[int, str, dict[str, str]]:
        query = urlencode({**params, **({"state": state} if state is not None else {})})
        joiner = "&" if "?" in redirect_uri else "?"
        return 302, "", {"location": f"{redirect_uri}{joiner}{query}"}

    return redirect


def _page(status: int, title: str, body: str) -> tuple[int, str, dict[str, str]]:
    text = f"<!doctype html><title>{html.escape(title)}</title><h1>{html.escape(title)}</h1>{body}"
    return status, text, {"content-type": "text/html; charset=utf-8"}
