"""The bot's side of the Kroger Public API with the app's own token: stores near a ZIP code, and
products with a store's prices.

Kroger Public API (``https://api.kroger.com``; what we relied on is in the docstring of the
stand-in, ``bot.sandbox.kroger_api``)::

    POST /v1/connect/oauth2/token          Authorization: Basic <client ID:secret>
         grant_type=client_credentials&scope=product.compact
         → {"access_token": …, "token_type": "bearer", "expires_in": 1800}
    GET  /v1/locations?filter.zipCode.near=45202&filter.limit=10     Authorization: Bearer …
         → {"data": [{"locationId": "01400943", "name": …, "address": {…}}, …]}
    GET  /v1/products?filter.term=milk&filter.locationId=01400943&filter.limit=10
         → {"data": [{"productId", "upc", "description", "brand", "aisleLocations": […],
                      "items": [{"size", "price": {"regular", "promo"},
                                 "inventory": {"stockLevel"}}]}, …]}

The token is asked for once and kept by the client until a minute before it expires: make one
client per container (at the cold start) and keep it. An API call answered 401 asks for a new
token and is tried once more (a token Kroger dropped early). Kroger counts product calls against
10,000 a day per app; a call past it is :class:`RateLimited`, carrying ``Retry-After``. Nothing
here retries or waits: the caller decides (the basket is posted without prices, say).
What the bot can check itself (a ZIP of five digits, a search term of 3 characters to 8 words,
a limit of 1 to 50) is checked before calling, so a bad one costs no call.

Errors (drawn in :mod:`.kroger_values`) carry neither the client secret nor a token.

Timeouts are short (3 s a call): a product search sits in front of a person waiting.
"""

from __future__ import annotations

import base64
import http.client
import re
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from urllib.parse import urlencode, urlsplit

from bot.settings import Settings
from workflow.shop.products import Offer

from .kroger_values import (
    AnswerLost,
    BadTerm,
    BadZip,
    KrogerDown,
    KrogerRefused,
    RateLimited,
    Store,
    UnknownLocation,
    data_of,
    json_of,
    product_of,
    store_of,
    token_of,
)

DEFAULT_URL = "https://api.kroger.com"
TOKEN_PATH = "/v1/connect/oauth2/token"
SCOPE = "product.compact"
EARLY = 60.0  # a token is renewed this many seconds before Kroger says it expires
MAX_ANSWER = 1 << 20  # 50 products with their items are well under 1 MiB
ZIP = re.compile(r"\d{5}")


@dataclass(frozen=True)
class KrogerConfig:
    """The deploy's Kroger app: its client ID and secret, and the API's base URL
    (``KROGER_API_URL``: a local stand-in's in the tests and the sandbox)."""

    client_id: str
    client_secret: str = field(repr=False)
    base_url: str = DEFAULT_URL

    @classmethod
    def of(cls, settings: Settings) -> KrogerConfig | None:
        """The deploy's app from its settings (``KROGER_CLIENT_ID``, ``KROGER_CLIENT_SECRET``,
        ``KROGER_API_URL``, checked there); None without one (baskets have no prices)."""
        if not settings.has_prices or settings.kroger_client_secret is None:
            return None
        secret = settings.kroger_client_secret.get_secret_value()
        return cls(settings.kroger_client_id, secret, settings.kroger_api_url or DEFAULT_URL)

    def __post_init__(self) -> None:  # "https://api.kroger.com/" is the same API: one form
        object.__setattr__(self, "base_url", self.base_url.rstrip("/"))

    def __repr__(self) -> str:  # the secret stays out of logs and tracebacks
        return f"KrogerConfig(client_id={self.client_id!r}, base_url={self.base_url!r})"


class KrogerClient:
    """The app-level client: one per container, so its token is asked for once."""

    def __init__(
        self,
        config: KrogerConfig,
        *,
        timeout: float = 3.0,
        clock: Callable[[], float] = time.time,
    ) -> None:
        self.config, self.timeout, self.clock = config, timeout, clock
        self._token: tuple[str, float] | None = None  # (token, renew after)
        self._lock = threading.Lock()

    def locations_near(self, zip_code: str, limit: int = 10) -> tuple[Store, ...]:
        """The stores near ``zip_code`` (none is an empty tuple). Raises :class:`BadZip` for a
        ZIP that is not five digits, before calling."""
        if not ZIP.fullmatch(zip_code):
            raise BadZip("a ZIP code is five digits, like 45202")
        if not 1 <= limit <= 200:
            raise ValueError("limit is 1 to 200")
        query = {"filter.zipCode.near": zip_code, "filter.limit": str(limit)}
        status, answer = self._get("/v1/locations", query)
        if status == 400:
            raise BadZip(f"Kroger did not take the ZIP code {zip_code}")
        return tuple(store for store in map(_store, data_of(status, answer)) if store)

    def products(self, term: str, location_id: str, limit: int = 10) -> tuple[Offer, ...]:
        """Products matching ``term`` sold at the store ``location_id``, with its prices.
        Raises :class:`BadTerm` (before calling) for a term under 3 characters or over 8 words,
        :class:`UnknownLocation` when Kroger refuses the store."""
        term = " ".join(term.split())
        if len(term) < 3 or len(term.split()) > 8:
            raise BadTerm("a product search is 3 characters to 8 words")
        if not 1 <= limit <= 50:
            raise ValueError("limit is 1 to 50")
        query = {"filter.term": term, "filter.locationId": location_id, "filter.limit": str(limit)}
        status, answer = self._get("/v1/products", query)
        if status == 400:
            # Term and limit were checked above: what is left to refuse is the store.
            raise UnknownLocation(f"Kroger has no store {location_id[:8]!r}: choose it again")
        return tuple(offer for offer in map(_readable, data_of(status, answer)) if offer)

    # -- the token and the calls -----------------------------------------------------------

    def token(self) -> str:
        """The app's token, asked for only when there is none or it is about to expire."""
        with self._lock:
            if self._token is not None and self.clock() < self._token[1]:
                return self._token[0]
            secret = f"{self.config.client_id}:{self.config.client_secret}"
            basic = base64.b64encode(secret.encode()).decode()
            body = urlencode({"grant_type": "client_credentials", "scope": SCOPE}).encode()
            headers = {
                "Authorization": f"Basic {basic}",
                "Content-Type": "application/x-www-form-urlencoded",
            }
            status, answer = self._call("POST", TOKEN_PATH, body, headers)
            if status == 401:
                raise KrogerRefused(
                    "Kroger refused the app's client ID or secret (401): check the deploy's "
                    "KROGER_CLIENT_ID and KROGER_CLIENT_SECRET"
                )
            if status in (400, 403):
                raise KrogerRefused(
                    f"Kroger refused the app a {SCOPE} token ({status}): is the app registered "
                    "for the Products API?"
                )
            found = json_of(status, answer)
            token, life = token_of(found.get("access_token")), found.get("expires_in")
            if token is None or not isinstance(life, int):
                raise KrogerDown("Kroger answered without a token we can send")
            self._token = (token, self.clock() + max(0.0, life - EARLY))
            return token

    def _get(self, path: str, query: dict[str, str]) -> tuple[int, bytes]:
        target = f"{path}?{urlencode(query)}"
        for attempt in (1, 2):
            token = self.token()
            headers = {"Authorization": f"Bearer {token}", "Accept": "application/json"}
            status, answer = self._call("GET", target, None, headers)
            if status != 401 or attempt == 2:
                break
            with self._lock:  # dropped early by Kroger: ask for a new one, once
                if self._token is not None and self._token[0] == token:
                    self._token = None  # (unless another thread already has)
        if status == 401:
            raise KrogerRefused("Kroger refused the app's token twice")
        if status == 403:
            raise KrogerRefused(f"the Kroger app may not use this API (403, scope {SCOPE})")
        return status, answer

    def _call(
        self, method: str, target: str, body: bytes | None, headers: dict[str, str]
    ) -> tuple[int, bytes]:
        status, data = call(self.config, self.timeout, method, target, body, headers)
        if status >= 500:
            raise KrogerDown(f"Kroger failed to answer ({status})")
        return status, data


def call(
    config: KrogerConfig,
    timeout: float,
    method: str,
    target: str,
    body: bytes | None,
    headers: dict[str, str],
) -> tuple[int, bytes]:
    """One request to Kroger: (status, answer). A connection that could not be made is
    :class:`KrogerDown`; a request that went out and got no answer :class:`AnswerLost`; 429 is
    :class:`RateLimited`. A 5xx is returned: what it means is the caller's to say."""
    parts = urlsplit(config.base_url)
    kind = http.client.HTTPSConnection if parts.scheme == "https" else http.client.HTTPConnection
    connection = kind(parts.hostname or "", parts.port, timeout=timeout)
    try:
        try:
            connection.connect()
        except OSError as exc:
            raise KrogerDown(f"Kroger could not be reached ({type(exc).__name__})") from exc
        try:
            connection.request(
                method,
                parts.path.rstrip("/") + target,
                body=body,
                headers={**headers, "User-Agent": "weekly-shop/1"},
            )
            answer = connection.getresponse()
            status, data = int(answer.status), answer.read(MAX_ANSWER)
            wait = answer.getheader("Retry-After") or ""
        except (OSError, http.client.HTTPException) as exc:
            raise AnswerLost(f"Kroger did not answer ({type(exc).__name__})") from exc
    finally:
        connection.close()
    if status == 429:  # Retry-After in seconds (RFC 9110), else a minute: never a date or "²"
        raise RateLimited(int(wait) if re.fullmatch(r"[0-9]{1,6}", wait) else 60)
    return status, data


def _store(entry: dict[str, object]) -> Store | None:
    """A store of an answer; None for one without a ``locationId`` (left out of the list, not
    the whole list refused as Kroger being down)."""
    try:
        return store_of(entry)
    except KrogerDown:
        return None


def _readable(entry: dict[str, object]) -> Offer | None:
    """A product of an answer as an offer; None for one the bot cannot read (left out of the
    search's answer, as a store that does not carry it)."""
    try:
        return product_of(entry)
    except (KrogerDown, ValueError, ArithmeticError):
        return None
