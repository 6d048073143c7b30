"""What the Kroger Public API's answers become: stores as plain values, products as the
workflow's offers (``workflow.shop.products.Offer``, read in one place: :func:`product_of`), and the
errors of :mod:`bot.orders.kroger`. An answer is read field by field; one without what the bot
relies on (a store's ``locationId``, a product's 13-digit UPC) is :class:`KrogerDown`, and a
field of the wrong type is read as missing. Prices are cents: Kroger's ``promo`` of 0 means no
promotion (as the ``kroger-api`` package reads it; Kroger's own pages do not say).

Errors, none of which carries the client secret or a token::

    KrogerError                 what was asked of Kroger did not give an answer to use
    ├── KrogerRefused           Kroger said no, and asking again will not help; ``reason``
    │   ├── BadZip              …the ZIP code is not one (five digits)
    │   ├── BadTerm             …the search term is too short or too long
    │   ├── UnknownLocation     …no Kroger store has that ``locationId``
    │   ├── TokenRefused        …a customer's access token (401): refresh it once, then retry
    │   └── NotConnected        …a customer's code or refresh token: they must connect again
    ├── RateLimited             the day's calls are used up; ``retry_after`` seconds
    ├── KrogerDown              no answer in time, a 5xx, a connection refused, an answer that
    │   │                       is not the API's shape: a later try may work
    │   └── AnswerLost          …the request went out and no answer came (a cart add's is
    │                           CartOutcomeUnknown instead)
    └── CartOutcomeUnknown      a cart add was sent and no answer came (or a 5xx): the items may
                                be in the cart; never add them again without the person choosing
"""

from __future__ import annotations

import json
import math
import re
from dataclasses import dataclass
from typing import Any

from workflow.shop.products import (
    MAX_AISLE_LENGTH,
    MAX_BRAND_LENGTH,
    MAX_DESCRIPTION_LENGTH,
    MAX_SIZE_LENGTH,
    STOCK_LEVELS,
    Offer,
)


class KrogerError(Exception):
    """What was asked of Kroger gave no answer to use; the text is safe to show a person."""


class KrogerRefused(KrogerError):
    def __init__(self, reason: str) -> None:
        super().__init__(reason)
        self.reason = reason


class BadZip(KrogerRefused):
    pass


class BadTerm(KrogerRefused):
    pass


class UnknownLocation(KrogerRefused):
    pass


class TokenRefused(KrogerRefused):
    pass


class NotConnected(KrogerRefused):
    pass


class CartOutcomeUnknown(KrogerError):
    pass


class RateLimited(KrogerError):
    def __init__(self, retry_after: int) -> None:
        super().__init__(f"Kroger's daily limit of calls is used up: try again in {retry_after} s")
        self.retry_after = retry_after


class KrogerDown(KrogerError):
    pass


class AnswerLost(KrogerDown):
    pass


@dataclass(frozen=True)
class Store:
    location_id: str
    name: str
    address: str  # "1420 Vine St, Cincinnati, OH 45202"
    chain: str


# A bearer token as RFC 6750 writes one (b64token: letters, digits, -._~+/, then = padding):
# anything else, a CR or LF above all, would go into an HTTP header, and http.client's refusal
# of it would carry the token into a traceback and the logs.
TOKEN = re.compile(r"[A-Za-z0-9\-._~+/]{1,4096}=*")


def token_of(value: object) -> str | None:
    """``value`` if it is a bearer token we may send in a header, else None."""
    return value if isinstance(value, str) and TOKEN.fullmatch(value) else None


def json_of(status: int, answer: bytes) -> dict[str, Any]:
    if status != 200:
        raise KrogerRefused(f"Kroger refused the request ({status})")
    try:
        found = json.loads(answer)
    except ValueError as exc:
        raise KrogerDown("Kroger's answer was not JSON") from exc
    if not isinstance(found, dict):
        raise KrogerDown("Kroger's answer was not an object")
    return found


def data_of(status: int, answer: bytes) -> list[dict[str, Any]]:
    data = json_of(status, answer).get("data")
    if not isinstance(data, list) or not all(isinstance(entry, dict) for entry in data):
        raise KrogerDown("Kroger's answer had no list of results")
    return data


def _dict(value: Any) -> dict[str, Any]:
    return value if isinstance(value, dict) else {}


def _first(value: Any) -> dict[str, Any]:
    return _dict(value[0]) if isinstance(value, list) and value else {}


def _text(value: Any) -> str:
    return value.strip() if isinstance(value, str) else ""


def store_of(entry: dict[str, Any]) -> Store:
    address = _dict(entry.get("address"))
    line = ", ".join(
        part
        for part in (
            _text(address.get("addressLine1")),
            _text(address.get("city")),
            f"{_text(address.get('state'))} {_text(address.get('zipCode'))}".strip(),
        )
        if part
    )
    location_id = _text(entry.get("locationId"))
    if not location_id:
        raise KrogerDown("Kroger answered a store without a locationId")
    return Store(location_id, _text(entry.get("name")), line, _text(entry.get("chain")))


def _cents(value: Any) -> int | None:
    """Dollars as cents; None for none, 0 (Kroger's "no promotion"), not a number, or not a
    finite one (JSON as Python reads it takes ``1e999`` and ``NaN``)."""
    if isinstance(value, bool) or not isinstance(value, int | float):
        return None
    if not math.isfinite(value) or value <= 0:
        return None
    return round(value * 100)


def product_of(entry: dict[str, Any]) -> Offer:
    """A product of a Products answer as the workflow's :class:`~workflow.shop.products.Offer`
    (the one place a Kroger product becomes one). Raises :class:`KrogerDown` for one the bot
    cannot read (no 13-digit UPC, no description, a price past a grocery's): the caller leaves
    it out of the search's answer."""
    item = _first(entry.get("items"))
    price, inventory = _dict(item.get("price")), _dict(item.get("inventory"))
    aisle = _first(entry.get("aisleLocations"))
    upc = _text(entry.get("upc"))
    if not re.fullmatch(r"\d{13}", upc):
        raise KrogerDown("Kroger answered a product without a 13-digit UPC")
    stock = _text(inventory.get("stockLevel")) or None
    try:
        return Offer(
            product_id=_text(entry.get("productId")) or upc,
            upc=upc,
            description=_text(entry.get("description"))[:MAX_DESCRIPTION_LENGTH],
            brand=_text(entry.get("brand"))[:MAX_BRAND_LENGTH],
            size=_text(item.get("size"))[:MAX_SIZE_LENGTH],
            regular_cents=_cents(price.get("regular")),
            promo_cents=_cents(price.get("promo")),
            stock_level=stock if stock in STOCK_LEVELS else None,
            aisle=_text(aisle.get("description"))[:MAX_AISLE_LENGTH],
        )
    except ValueError as exc:
        raise KrogerDown("Kroger answered a product the bot cannot read") from exc
