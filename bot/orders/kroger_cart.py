"""The bot's side of a customer's Kroger cart: connecting their account (the authorization-code
flow with PKCE), renewing their token, and adding products to their cart.

Kroger Public API (what we relied on, and what is unconfirmed, is in the docstring of the
stand-in's customer side, ``bot.sandbox.kroger_authorize``)::

    GET  /v1/connect/oauth2/authorize?scope=cart.basic:write&response_type=code&client_id=…
         &redirect_uri=…&state=…&code_challenge=<S256 of the verifier>&code_challenge_method=S256
         → the person signs in and allows; Kroger redirects to redirect_uri?code=…&state=…
           (Cancel: ?error=access_denied&state=…)
    POST /v1/connect/oauth2/token          Authorization: Basic <client ID:secret>
         grant_type=authorization_code&code=…&redirect_uri=…&code_verifier=…
         grant_type=refresh_token&refresh_token=…
         → {"access_token", "refresh_token", "expires_in": 1800, …}
    PUT  /v1/cart/add                      Authorization: Bearer <the customer's token>
         {"items": [{"upc": "0001111041700", "quantity": 2, "modality": "PICKUP"}]}  → 204

Kroger rotates refresh tokens: the one used is dead once the answer is given, so the caller
must store the new :class:`CustomerTokens` before anything else. A refresh whose answer is lost
(:class:`KrogerDown`) may have spent the old one: the next refresh is then :class:`NotConnected`.

A cart add has no idempotency key and the cart cannot be read back. So nothing here retries an
add: a 401 is :class:`TokenRefused` (nothing was added: refresh once, then add again), and a
request that was sent but got no answer, or a 5xx, is :class:`CartOutcomeUnknown` (the items may
be in the cart: the person is told so and chooses). Only a connection that failed before the
request went out is :class:`KrogerDown`. What the bot can check itself (13-digit UPCs, quantities
of 1 or more, the modality) is checked before calling.

Tokens and the verifier never appear in an error, a repr or a log line.
"""

from __future__ import annotations

import base64
import hashlib
import json
import re
import secrets
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import urlencode

from .kroger import KrogerConfig, call
from .kroger_values import (
    AnswerLost,
    CartOutcomeUnknown,
    KrogerDown,
    KrogerRefused,
    NotConnected,
    TokenRefused,
    token_of,
)

AUTHORIZE_PATH = "/v1/connect/oauth2/authorize"
TOKEN_PATH = "/v1/connect/oauth2/token"
CART_PATH = "/v1/cart/add"
SCOPE = "cart.basic:write"
MODALITIES = ("PICKUP", "DELIVERY")
UPC = re.compile(r"\d{13}")
VERIFIER = re.compile(r"[A-Za-z0-9._~-]{43,128}")  # RFC 7636 §4.1


def new_verifier() -> str:
    """A PKCE code verifier: 64 random bytes, base64url (86 characters)."""
    return secrets.token_urlsafe(64)


def challenge_of(verifier: str) -> str:
    """The S256 challenge of ``verifier``: base64url(SHA-256), unpadded (RFC 7636 §4.2)."""
    if not VERIFIER.fullmatch(verifier):
        raise ValueError("a PKCE verifier is 43 to 128 URL-safe characters")
    digest = hashlib.sha256(verifier.encode("ascii")).digest()
    return base64.urlsafe_b64encode(digest).decode().rstrip("=")


@dataclass(frozen=True)
class CustomerTokens:
    """A connected person's tokens; ``expires_at`` is when the access token stops working."""

    access_token: str = field(repr=False)
    refresh_token: str = field(repr=False)
    expires_at: float
    scope: str

    def __repr__(self) -> str:
        return f"CustomerTokens(expires_at={self.expires_at!r}, scope={self.scope!r})"


@dataclass(frozen=True)
class CartItem:
    upc: str  # 13 digits
    quantity: int  # 1 or more


class KrogerCart:
    """Connecting customers and adding to their carts, with the deploy's Kroger app."""

    def __init__(
        self,
        config: KrogerConfig,
        *,
        timeout: float = 5.0,
        clock: Callable[[], float] = time.time,
    ) -> None:
        self.config, self.timeout, self.clock = config, timeout, clock

    def authorize_url(self, redirect_uri: str, state: str, verifier: str) -> str:
        """Where the person's browser goes to connect their Kroger account."""
        query = {
            "scope": SCOPE,
            "response_type": "code",
            "client_id": self.config.client_id,
            "redirect_uri": redirect_uri,
            "state": state,
            "code_challenge": challenge_of(verifier),
            "code_challenge_method": "S256",
        }
        return f"{self.config.base_url}{AUTHORIZE_PATH}?{urlencode(query)}"

    def exchange_code(self, code: str, verifier: str, redirect_uri: str) -> CustomerTokens:
        """The tokens for the ``code`` Kroger redirected back with. Raises
        :class:`NotConnected` when Kroger refuses the code (used, too old, another verifier or
        redirect URL): the person connects again."""
        return self._grant(
            {
                "grant_type": "authorization_code",
                "code": code,
                "redirect_uri": redirect_uri,
                "code_verifier": verifier,
            }
        )

    def refresh(self, refresh_token: str) -> CustomerTokens:
        """New tokens (a new refresh token too: the old one is spent). Raises
        :class:`NotConnected` when Kroger refuses the refresh token."""
        return self._grant({"grant_type": "refresh_token", "refresh_token": refresh_token})

    def add_to_cart(
        self, access_token: str, items: Sequence[CartItem], modality: str = "PICKUP"
    ) -> None:
        """Add ``items`` to the person's cart, once. See the module's docstring for what each
        error means; none of them is retried here."""
        if modality not in MODALITIES:
            raise KrogerRefused(f"a Kroger order is {' or '.join(MODALITIES)}, not {modality!r}")
        if not items:
            raise KrogerRefused("there is nothing to add to the cart")
        for item in items:
            if not UPC.fullmatch(item.upc):
                raise KrogerRefused(f"the product code {item.upc[:20]!r} is not a 13-digit UPC")
            if item.quantity < 1:
                raise KrogerRefused(f"the quantity of {item.upc} must be 1 or more")
        body = json.dumps(
            {"items": [{"upc": i.upc, "quantity": i.quantity, "modality": modality} for i in items]}
        ).encode()
        headers = {
            "Authorization": f"Bearer {access_token}",
            "Content-Type": "application/json",
            "Accept": "application/json",
        }
        status, _ = self._call("PUT", CART_PATH, body, headers, unknown_after_send=True)
        if 200 <= status < 300:
            return
        if status == 401:
            raise TokenRefused("Kroger refused the person's sign-in (401): refresh it and retry")
        if status == 403:
            raise NotConnected(
                "Kroger says this connection may not add to the cart (403): connect the Kroger "
                "account again"
            )
        raise KrogerRefused(
            f"Kroger refused the items ({status}): a product code, a quantity or the kind of "
            "order was not accepted, and nothing was added"
        )

    # -- the calls --------------------------------------------------------------------------

    def _grant(self, form: dict[str, str]) -> CustomerTokens:
        pair = f"{self.config.client_id}:{self.config.client_secret}"
        headers = {
            "Authorization": f"Basic {base64.b64encode(pair.encode()).decode()}",
            "Content-Type": "application/x-www-form-urlencoded",
            "Accept": "application/json",
        }
        status, answer = self._call("POST", TOKEN_PATH, urlencode(form).encode(), headers)
        found = _json(answer)
        if status == 401:
            raise KrogerRefused(
                "Kroger refused the app's client ID or secret (401): check the deploy's "
                "KROGER_CLIENT_ID and KROGER_CLIENT_SECRET"
            )
        if status == 400 and found.get("error") == "invalid_grant":
            raise NotConnected(
                "Kroger no longer accepts this connection: connect the Kroger account again"
            )
        if status != 200:
            error = str(found.get("error", ""))[:40]
            raise KrogerRefused(f"Kroger refused to connect the account ({status} {error})")
        access, refresh = token_of(found.get("access_token")), token_of(found.get("refresh_token"))
        life = found.get("expires_in")
        if access is None or refresh is None:
            raise KrogerDown("Kroger answered without the customer's tokens we can send")
        if isinstance(life, bool) or not isinstance(life, int):
            raise KrogerDown("Kroger answered without the token's life")
        scope = found.get("scope")
        return CustomerTokens(
            access, refresh, self.clock() + life, scope if isinstance(scope, str) else SCOPE
        )

    def _call(
        self,
        method: str,
        target: str,
        body: bytes,
        headers: dict[str, str],
        *,
        unknown_after_send: bool = False,
    ) -> tuple[int, bytes]:
        """(status, answer). For a cart add (``unknown_after_send``), a request that went out
        and got no answer, or a 5xx, is :class:`CartOutcomeUnknown`; otherwise
        :class:`KrogerDown` (see :func:`.kroger.call`)."""
        try:
            status, data = call(self.config, self.timeout, method, target, body, headers)
        except AnswerLost as exc:
            if unknown_after_send:
                raise CartOutcomeUnknown(
                    "Kroger did not answer the cart add: these may already be in the cart"
                ) from exc
            raise
        if status >= 500 and unknown_after_send:
            raise CartOutcomeUnknown(
                f"Kroger failed while adding to the cart ({status}): these may already be in it"
            )
        if status >= 500:
            raise KrogerDown(f"Kroger failed to answer ({status})")
        return status, data


def _json(answer: bytes) -> dict[str, Any]:
    try:
        found = json.loads(answer or b"{}")
    except ValueError:
        return {}
    return found if isinstance(found, dict) else {}
