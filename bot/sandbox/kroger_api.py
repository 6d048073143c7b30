"""A local Kroger Public API, for ``KROGER_API_URL``: the app-level token, stores near a ZIP
code, and products with a store's prices (the catalogue is :mod:`.kroger_catalogue`); the
customer's side (the authorize page, customer tokens, ``PUT /v1/cart/add``) is
:mod:`.kroger_authorize`, served here. The authorize page is a browser's, so it skips the
loopback check of :func:`~.loopback.refused` (a page's link from another port may reach it).

What it relies on, and where from. Kroger's reference pages render behind a login; what we
read is its tutorials and "API Basics" page, copies of its reference in other projects, the
``kroger-api`` package (PyPI 0.2.0; its source and docs, github.com/CupOfOwls/kroger-api) and
clients in public repositories. Marked "unconfirmed": what no source we read says.

- ``POST /v1/connect/oauth2/token``, form-encoded, the client ID and secret as HTTP Basic:
  ``grant_type=client_credentials`` with a ``scope`` (``product.compact`` for products) answers
  ``{"access_token", "token_type": "bearer", "expires_in": 1800}``: a token lives 30 minutes
  (the package's glossary; a token's JWT in a public repository has ``exp - iat`` = 1805 s) and
  has no refresh token. A wrong ID or secret is 401 ``invalid_client``, another grant type 400
  ``unsupported_grant_type``, a scope Kroger does not have 400 ``invalid_scope`` (RFC 6749 §5.2,
  whose error shape Kroger's answers follow; the codes themselves unconfirmed). Which scopes a
  client-credentials token may carry is not documented: this one grants any of
  ``product.compact``, ``profile.compact``, ``cart.basic:write`` it is asked for (Celigo's
  Kroger connector says not to ask for ``cart.basic:write`` with this grant; what Kroger then
  answers is unconfirmed), and the cart refuses every app token (:mod:`.kroger_authorize`).
- Every other call needs ``Authorization: Bearer <token>``. None is 401 ``{"error":
  "invalid_request", "error_description": "The access_token is missing"}`` (seen live, as
  reported); an unknown or expired one 401 ``invalid_token`` (what the package's client checks
  for); a token without ``product.compact`` calling ``/v1/products`` 403 (unconfirmed).
- ``GET /v1/locations?filter.zipCode.near=…`` answers ``{"data": [stores], "meta": …}``, by
  default 10 stores within 10 miles; ``filter.limit`` up to 200 (the package's docs). The
  reference only says "the zip code": a ZIP that is not five digits is refused 400 here
  (unconfirmed; the clients we read check it before calling, and so does the bot).
- ``GET /v1/products?filter.term=…&filter.locationId=…&filter.limit=…`` answers ``{"data":
  [products], "meta": {"pagination": {"start", "limit", "total"}}}``; price, stock and aisle only
  with ``filter.locationId``, and then "only products available at that location are returned".
  ``filter.limit`` is 10 by default and at most 50, ``filter.start`` at most 250 (the package's
  docs); past either is 400 here. Also 400 here, unconfirmed: a term under 3 characters or of
  more than 8 words, a ``locationId`` that is not 8 characters or that no store has. Error
  bodies are ``{"errors": {"timestamp", "code", "reason"}}`` (unconfirmed).
- "The Public Products API has a 10,000 call per day rate limit", counted per app and reset
  "24 hours after the first call" (Kroger's API Basics); Locations has 1,600 a day of its own
  (the package's docs). "The API returns HTTP 429 when your budget is exhausted" (the package's
  docs); whether with ``Retry-After`` is unconfirmed: here it is, the seconds to the day's end.

Time is the stand-in's ``clock`` (a :class:`~bot.sandbox.clock.PlayedClock` in tests), so a
token expires and a day ends when the test moves it. Every request is in ``requests``.
"""

from __future__ import annotations

import base64
import json
import math
import re
import secrets
import threading
import time
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler
from typing import Any
from urllib.parse import parse_qs, urlsplit

from .kroger_authorize import DROP, Customers, api_error, oauth_error
from .kroger_catalogue import LOCATIONS, STORES, at_store, carried, search, unpriced
from .loopback import LoopbackServer, QuietHandler, refused

CLIENT_ID = "weekly-shop-test-0000"
CLIENT_SECRET = "test-kroger-secret-not-real"
TOKEN_PATH = "/v1/connect/oauth2/token"
AUTHORIZE_PATH = "/v1/connect/oauth2/authorize"
SCOPES = ("product.compact", "profile.compact", "cart.basic:write")
TOKEN_LIFE = 1800  # seconds
DAY = 86_400
ZIP = re.compile(r"\d{5}")


@dataclass
class Token:
    client_id: str
    scopes: frozenset[str]
    expires_at: float


@dataclass
class FakeKroger(LoopbackServer):
    """The stand-in: ``url`` for ``KROGER_API_URL``; the app's ``client_id`` and
    ``client_secret``; ``products_limit`` and ``locations_limit`` calls a day per app;
    ``customers``, the customers' side (:mod:`.kroger_authorize`: sign-in, carts)."""

    client_id: str = CLIENT_ID
    client_secret: str = field(default=CLIENT_SECRET, repr=False)
    clock: Callable[[], float] = time.time
    products_limit: int = 10_000
    locations_limit: int = 1_600
    token_life: int = TOKEN_LIFE
    # A model of the API's latency, for make bench: each authorised API call is answered this
    # many seconds late (0: at once).
    latency: float = 0.0
    requests: list[dict[str, Any]] = field(default_factory=list)
    tokens_issued: int = 0
    url: str = ""

    def __post_init__(self) -> None:
        self._lock = threading.Lock()
        self._tokens: dict[str, Token] = {}
        # (client ID, endpoint) -> (when its day began, calls counted in it)
        self._days: dict[tuple[str, str], tuple[float, int]] = {}
        self._script: deque[tuple[int, float]] = deque()
        self.dropped: set[tuple[str, str]] = set()  # (locationId, upc) no longer carried
        self.customers = Customers(self.clock, self.token_life)
        self.customers.redirect_uris.setdefault(self.client_id, set())  # no redirect URL yet
        fake = self

        class Handler(QuietHandler):
            def do_POST(self) -> None:
                if not refused(fake, self):
                    raw = self.rfile.read(int(self.headers.get("content-length") or 0))
                    self._send(*fake._token(self, raw))

            def do_GET(self) -> None:
                path = urlsplit(self.path)
                if path.path.startswith(AUTHORIZE_PATH):  # a browser's page: HTML
                    fake._record(self, b"")
                    query = {k: v[-1] for k, v in parse_qs(path.query).items()}
                    decide = path.path == f"{AUTHORIZE_PATH}/decision"
                    status, text, headers = (
                        fake.customers.decide(query) if decide else fake.customers.page(query)
                    )
                    self.answer(status, text.encode(), headers)
                elif path.path == "/cart":  # kroger.com's cart page, for the signed-in customer
                    status, text, headers = fake.customers.cart_page()
                    self.answer(status, text.encode(), headers)
                elif not refused(fake, self):
                    self._send(*fake._get(self))

            def do_PUT(self) -> None:
                if refused(fake, self):
                    return
                raw = self.rfile.read(int(self.headers.get("content-length") or 0))
                fake._record(self, raw)
                if urlsplit(self.path).path != "/v1/cart/add":
                    self._send(*api_error(404, "Not found"))
                    return
                bearer = self.headers.get("authorization", "")
                done = fake.customers.add(bearer, fake._tokens.__contains__, raw)
                if done == DROP:
                    self.close_connection = True  # applied, and no answer ever comes
                elif not isinstance(done, str):
                    self._send(*done)

            def _send(self, status: int, payload: Any, headers: dict[str, str]) -> None:
                data = b"" if payload is None else json.dumps(payload).encode()
                self.answer(status, data, {"content-type": "application/json", **headers})

        self._serve(Handler)
        self.url = self.root

    # -- what a test does -----------------------------------------------------------------

    def answer_next(self, status: int, times: int = 1, delay: float = 0.0) -> None:
        """Answer the next ``times`` authorised API calls with ``status`` (after ``delay`` s)."""
        with self._lock:
            self._script.extend([(status, delay)] * times)

    def stop_carrying(self, location_id: str, upc: str) -> None:
        """The store no longer sells the product: searches there leave it out."""
        self.dropped.add((location_id, upc))

    def drop_tokens(self) -> None:
        """Forget every token issued (Kroger ending them before ``expires_in`` says)."""
        with self._lock:
            self._tokens.clear()

    def calls(self, endpoint: str = "products") -> int:
        """Calls to ``/v1/<endpoint>`` counted in the app's current day."""
        return self._days.get((self.client_id, endpoint), (0.0, 0))[1]

    # -- the API -------------------------------------------------------------------------

    def _token(
        self, request: BaseHTTPRequestHandler, raw: bytes
    ) -> tuple[int, Any, dict[str, str]]:
        self._record(request, raw)
        if urlsplit(request.path).path != TOKEN_PATH:
            return _error(404, "Not found")
        basic = request.headers.get("authorization", "")
        try:
            pair = base64.b64decode(basic.removeprefix("Basic "), validate=True).decode()
        except ValueError:
            pair = ""
        who, _, secret = pair.partition(":")
        if not basic.startswith("Basic ") or (who, secret) != (self.client_id, self.client_secret):
            return _oauth(401, "invalid_client", "Client authentication failed")
        form = {k: v[-1] for k, v in parse_qs(raw.decode(errors="replace")).items()}
        if form.get("grant_type") in ("authorization_code", "refresh_token"):
            return self.customers.grant(who, form)
        if form.get("grant_type") != "client_credentials":
            return _oauth(400, "unsupported_grant_type", "The grant type is not supported")
        asked = frozenset(form.get("scope", "").split())
        if not asked <= set(SCOPES):
            return _oauth(400, "invalid_scope", "The requested scope is invalid")
        token = secrets.token_urlsafe(24)
        with self._lock:
            self._tokens[token] = Token(who, asked, self.clock() + self.token_life)
            self.tokens_issued += 1
        answer = {"access_token": token, "token_type": "bearer", "expires_in": self.token_life}
        return 200, answer, {"cache-control": "no-store"}

    def _get(self, request: BaseHTTPRequestHandler) -> tuple[int, Any, dict[str, str]]:
        self._record(request, b"")
        parts = urlsplit(request.path)
        endpoint = parts.path.removeprefix("/v1/")
        if endpoint not in ("locations", "products"):
            return _error(404, "Not found")
        bearer = request.headers.get("authorization", "")
        token = (
            self._tokens.get(bearer.removeprefix("Bearer ")) if bearer[:7] == "Bearer " else None
        )
        if token is None or token.expires_at <= self.clock():
            why = "The access_token is missing" if not bearer else "The access_token is invalid"
            return _oauth(401, "invalid_request" if not bearer else "invalid_token", why)
        if endpoint == "products" and "product.compact" not in token.scopes:
            return _oauth(403, "insufficient_scope", "The access_token lacks product.compact")
        limited = self._count(token.client_id, endpoint)
        if limited is not None:
            return limited
        with self._lock:
            status, delay = self._script.popleft() if self._script else (200, 0.0)
        time.sleep(delay + self.latency)
        if status != 200:
            return _error(status, "fake")
        query = {k: v[-1] for k, v in parse_qs(parts.query).items()}
        return self._locations(query) if endpoint == "locations" else self._products(query)

    def _count(self, client_id: str, endpoint: str) -> tuple[int, Any, dict[str, str]] | None:
        """Count the call in the app's day; the 429 answer once the day's calls are used up."""
        limit = self.products_limit if endpoint == "products" else self.locations_limit
        now = self.clock()
        with self._lock:
            began, used = self._days.get((client_id, endpoint), (now, 0))
            if now >= began + DAY:
                began, used = now, 0
            if used >= limit:
                wait = max(1, math.ceil(began + DAY - now))
                status, body, _ = _error(429, f"Rate limit of {limit} calls a day exceeded")
                return status, body, {"retry-after": str(wait)}
            self._days[(client_id, endpoint)] = (began, used + 1)
        return None

    def _locations(self, query: dict[str, str]) -> tuple[int, Any, dict[str, str]]:
        near = query.get("filter.zipCode.near")
        if near is None:
            return _error(400, "A starting point is required: filter.zipCode.near")
        if not ZIP.fullmatch(near):
            return _error(400, "filter.zipCode.near must be a 5-digit zip code")
        limit = _number(query.get("filter.limit"), 10, 200)
        if limit is None:
            return _error(400, "filter.limit must be a number from 1 to 200")
        found = list(STORES.get(near, ()))[:limit]
        return 200, {"data": found, "meta": _page(0, limit, len(found))}, {}

    def _products(self, query: dict[str, str]) -> tuple[int, Any, dict[str, str]]:
        term = query.get("filter.term", "")
        if len(term.strip()) < 3 or len(term.split()) > 8:
            return _error(400, "filter.term must be 3 characters or more and 8 words at most")
        limit = _number(query.get("filter.limit"), 10, 50)
        start = _number(query.get("filter.start"), 0, 250, least=0)
        if limit is None or start is None:
            return _error(400, "filter.limit must be 1 to 50, filter.start 0 to 250")
        location = query.get("filter.locationId")
        if location is not None and len(location) != 8:
            return _error(400, "filter.locationId must have a length of 8 characters")
        if location is not None and location not in LOCATIONS:
            return _error(400, f"No location was found for filter.locationId {location}")
        if location is None:
            found = [unpriced(p) for p in search(term)]
        else:
            found = [
                at_store(p, location)
                for p in search(term)
                if carried(location, p.upc) and (location, p.upc) not in self.dropped
            ]
        shown = found[start : start + limit]
        return 200, {"data": shown, "meta": _page(start, limit, len(found))}, {}

    def _record(self, request: BaseHTTPRequestHandler, raw: bytes) -> None:
        with self._lock:
            self.requests.append(
                {
                    "method": request.command,
                    "path": request.path,
                    "body": raw.decode(errors="replace"),
                }
            )


def _number(text: str | None, default: int, most: int, least: int = 1) -> int | None:
    if text is None:
        return default
    return int(text) if text.isdigit() and least <= int(text) <= most else None


def _page(start: int, limit: int, total: int) -> dict[str, Any]:
    return {"pagination": {"start": start, "limit": limit, "total": total}}


_error, _oauth = api_error, oauth_error
