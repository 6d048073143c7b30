"""An order as an Instacart shopping-list page: the household opens it, picks a store, checks out.

Instacart Developer Platform, "Create shopping list page" (docs.instacart.com/developer_platform_
api/api/products/create_shopping_list_page)::

    POST <server>/idp/v1/products/products_link
    Authorization: Bearer <the workspace's API key>     Accept, Content-Type: application/json
    {"title": "Shopping list · week of 7 December 2026", "link_type": "shopping_list",
     "expires_in": 30,
     "line_items": [{"name": "chicken breast", "quantity": 500, "unit": "g",
                     "display_text": "500 g chicken breast"}, …]}
    → 200 {"products_link_url": "https://customers.dev.instacart.tools/store/shopping_lists/…"}

``title`` and ``line_items`` are required, each line item needs a ``name`` (what Instacart
matches products by), ``display_text`` is what the page shows (the amount and the name: an
item's note, why it is there or what it breaks, is ours, never part of what is bought);
``expires_in`` is in days (at most 365; a shopping list has no default, so we say 30: a week's
list outlives its week).
Development and production are different servers with different keys (:data:`SERVERS`); a
development key is refused by production and the other way round (401).

Once: the API takes no idempotency key, and a page is not an order (the household checks out from
it). The order record keeps the link (Instacart's own advice: "cache the generated URL and reuse
it"), so a redelivery, a retry or the Home tab shows the same page. Only a process that dies after
Instacart answered and before the record says so calls again: a second page is made, the first
is never shown, nothing is bought twice.

Answers: 401/403 (a wrong or revoked key) and other 4xx are refused, not tried again, and said in
our words; a 429, a 5xx or a connection that fails is tried again (three attempts, backing off
with jitter, as the webhook does); no answer in time after sending is an unknown outcome. At most
64 KiB of an answer is read; redirects are not followed. The key is in no error and no log line.
"""

from __future__ import annotations

import http.client
import json
import time
from collections.abc import Callable
from typing import Any, Literal
from urllib.parse import urlsplit

from .order import (
    MAX_ANSWER,
    DestinationDown,
    DestinationKind,
    DestinationRefused,
    KeyOf,
    NotSent,
    Order,
    Placed,
    key_of,
    with_retries,
)

InstacartServer = Literal["development", "production"]
SERVERS: dict[InstacartServer, str] = {
    "development": "https://connect.dev.instacart.tools",
    "production": "https://connect.instacart.com",
}
PATH = "/idp/v1/products/products_link"
EXPIRES_IN_DAYS = 30
MAX_LINK = 3000  # a Slack link button's url: at most 3,000 characters
PIECES = "each"  # an item counted in pieces ("3 carrots") has no unit of its own


def body_of(order: Order) -> bytes:
    """The products_link request for ``order``: one line item per item, in the basket's order."""
    items: list[dict[str, Any]] = []
    for item in order.lines:
        shown = " ".join(part for part in (item.amount, item.name) if part)
        line: dict[str, Any] = {"name": item.name, "display_text": shown}
        if item.quantity is not None:
            line["quantity"] = item.quantity
            line["unit"] = item.unit or PIECES
        items.append(line)
    body = {
        "title": order.title,
        "link_type": "shopping_list",
        "expires_in": EXPIRES_IN_DAYS,
        "line_items": items,
    }
    return json.dumps(body, ensure_ascii=False, separators=(",", ":")).encode()


class InstacartDestination:
    """Orders become shopping-list pages, made with the workspace's API key (``api_key``: one
    for all, or read per workspace when an order is placed) on ``base_url`` (:data:`SERVERS`;
    a local stand-in's in the tests and the sandbox)."""

    kind: DestinationKind = "instacart"
    repeats_safely = True  # a second page is one nobody is shown (docs/orders.md)

    def __init__(
        self,
        api_key: str | KeyOf,
        base_url: str = SERVERS["production"],
        *,
        timeout: float = 5.0,
        sleep: Callable[[float], None] = time.sleep,
    ) -> None:
        parts = urlsplit(base_url)
        if parts.scheme not in ("https", "http") or not parts.hostname:
            raise ValueError("the Instacart server must be an http(s) URL")
        self._key, self.base_url = key_of(api_key), base_url.rstrip("/")
        self.timeout, self.sleep = timeout, sleep

    def place(self, order: Order) -> Placed:
        key = self._key(order.team)
        if not key:
            raise DestinationRefused(
                "no Instacart API key is saved: an admin can enter one in Settings"
            )
        body = body_of(order)
        # Sent with no answer in time: calling again makes at most a spare page.
        status, answer = with_retries(lambda: self._post(key, body), self.sleep, "Instacart")
        if 200 <= status < 300:
            return Placed("instacart", url=self._link(answer), ref="products_link")
        if status in (401, 403):
            raise DestinationRefused(
                f"Instacart refused the workspace's API key ({status}): enter it again in Settings"
            )
        raise DestinationRefused(f"Instacart refused the shopping list ({status})")

    def _link(self, answer: bytes) -> str:
        try:
            found = json.loads(answer).get("products_link_url")
        except (ValueError, AttributeError):
            found = None
        scheme = urlsplit(found).scheme if isinstance(found, str) else ""
        # https from Instacart; the local stand-in's own page is http on 127.0.0.1.
        allowed = ("https",) if self.base_url.startswith("https:") else ("https", "http")
        if not isinstance(found, str) or scheme not in allowed or len(found) > MAX_LINK:
            raise DestinationDown("Instacart answered without a link to the list")
        return found

    def _post(self, key: str, body: bytes) -> tuple[int, bytes]:
        parts = urlsplit(self.base_url)
        https = parts.scheme == "https"
        kind = http.client.HTTPSConnection if https else http.client.HTTPConnection
        connection = kind(parts.hostname or "", parts.port, timeout=self.timeout)
        try:
            try:
                connection.connect()
            except OSError as exc:
                raise NotSent(type(exc).__name__) from exc
            connection.request(
                "POST",
                parts.path.rstrip("/") + PATH,
                body=body,
                headers={
                    "Authorization": f"Bearer {key}",
                    "Accept": "application/json",
                    "Content-Type": "application/json",
                    "User-Agent": "weekly-shop/1",
                },
            )
            answer = connection.getresponse()
            return int(answer.status), answer.read(MAX_ANSWER)
        finally:
            connection.close()
