"""An order as a signed webhook: a JSON POST to the household's own ``https://`` URL (Home
Assistant, n8n, Zapier, a shop's API), signed the way Slack signs its requests to us.

The body (``version`` 1; keys in this order, UTF-8 JSON)::

    {"version": 1, "order_id": "…", "workspace": "T…", "channel": "C…", "title": "…",
     "requested_by": "U…", "approved_by": ["U…"], "approved_at": "2026-12-03T17:02:00Z",
     "approved_at_unix": 1796..., "basket_sha256": "…",
     "items": [{"name": "chicken breast", "quantity": 500, "unit": "g", "note": "for Friday",
                "aisle": "meat and fish"}, …]}

Headers: ``Content-Type: application/json``, ``Idempotency-Key: <order_id>`` (the same on every
attempt and every retry of the order: a receiver keeps the first and acknowledges the others),
``X-Weekly-Shop-Request-Timestamp: <unix seconds>`` and ``X-Weekly-Shop-Signature:
v1=<hex HMAC-SHA256 of "v1:<timestamp>:<body>" with the webhook's signing secret>`` — Slack's
scheme (``v0:<timestamp>:<body>``, ``X-Slack-Signature``), with our version. :func:`verify` is
the receiver's check: constant-time, and at most five minutes old.

Delivery is at least once with a stable key: a 2xx is delivered; a 429, a 5xx, a connection
that fails or an answer that does not come in time is tried again (three attempts, backing off
with jitter, all within about 20 s of the Lambda invocation); a redirect is refused, never
followed (it could point anywhere); another 4xx is refused and not tried again. Each attempt
resolves and checks the URL again (``bot.orders.safe_url``) and connects to the address it
checked; at most 64 KiB of an answer is read. Errors say the status, never the secret.
"""

from __future__ import annotations

import hashlib
import hmac
import http.client
import json
import socket
import ssl
import time
from collections.abc import Callable, Mapping
from datetime import UTC, datetime
from typing import Any

from .order import (
    MAX_ANSWER,
    DestinationKind,
    DestinationRefused,
    KeyOf,
    NotSent,
    Order,
    Placed,
    key_of,
    with_retries,
)
from .safe_url import Resolver, Target, resolve_public, system_resolver

SIGNATURE = "X-Weekly-Shop-Signature"
TIMESTAMP = "X-Weekly-Shop-Request-Timestamp"
VERSION = "v1"
TOLERANCE = 300  # seconds a signature stays good (Slack's own: five minutes)


def body_of(order: Order) -> bytes:
    """The webhook's JSON body for ``order`` (version 1, see the module docstring)."""
    at = datetime.fromtimestamp(order.approved_at, UTC).strftime("%Y-%m-%dT%H:%M:%SZ")
    body: dict[str, Any] = {
        "version": 1,
        "order_id": order.order_id,
        "workspace": order.team,
        "channel": order.channel,
        "title": order.title,
        "requested_by": order.requested_by,
        "approved_by": list(order.approved_by),
        "approved_at": at,
        "approved_at_unix": order.approved_at,
        "basket_sha256": order.basket_sha256,
        "items": [line.to_json() for line in order.lines],
    }
    return json.dumps(body, ensure_ascii=False, separators=(",", ":")).encode()


def signature(secret: str, timestamp: int, body: bytes) -> str:
    base = f"{VERSION}:{timestamp}:".encode() + body
    return f"{VERSION}=" + hmac.new(secret.encode(), base, hashlib.sha256).hexdigest()


def verify(secret: str, timestamp: str, body: bytes, signed: str, now: float) -> bool:
    """The receiver's check of a delivery: signed with ``secret``, at most 5 minutes old."""
    try:
        at = int(timestamp)
    except ValueError:
        return False
    if abs(now - at) > TOLERANCE:
        return False
    return hmac.compare_digest(signature(secret, at, body), signed)


class _PinnedHTTPS(http.client.HTTPSConnection):
    """HTTPS to the checked address, with TLS (SNI and the certificate) for the host name."""

    def __init__(self, target: Target, context: ssl.SSLContext, timeout: float) -> None:
        super().__init__(target.host, target.port, timeout=timeout, context=context)
        self._target = target
        self._tls = context

    def connect(self) -> None:
        raw = socket.create_connection((self._target.address, self._target.port), self.timeout)
        self.sock = self._tls.wrap_socket(raw, server_hostname=self._target.host)


class WebhookDestination:
    """Orders become signed POSTs to ``url`` (checked at each attempt)."""

    kind: DestinationKind = "webhook"
    repeats_safely = True  # the receiver dedupes the order ID

    def __init__(
        self,
        url: str,
        secret: str | KeyOf,
        *,
        resolver: Resolver = system_resolver,
        pinned: Mapping[str, tuple[str, int]] | None = None,
        ca_file: str | None = None,
        timeout: float = 5.0,
        sleep: Callable[[float], None] = time.sleep,
        clock: Callable[[], float] = time.time,
    ) -> None:
        self.url, self._secret = url, key_of(secret)
        self.resolver, self.pinned = resolver, pinned or {}
        self.context = ssl.create_default_context(cafile=ca_file)
        self.timeout, self.sleep, self.clock = timeout, sleep, clock

    def place(self, order: Order) -> Placed:
        secret = self._secret(order.team)
        if not secret:
            raise DestinationRefused(
                "no webhook signing secret is saved: an admin can enter one in Settings"
            )
        body = body_of(order)
        # Sent with no answer in time: the same Idempotency-Key again, which a receiver dedupes.
        status, _ = with_retries(
            lambda: self._attempt(order, body, secret), self.sleep, "the webhook"
        )
        if 200 <= status < 300:
            return Placed("webhook", ref=str(status))
        if 300 <= status < 400:
            raise DestinationRefused("the webhook answered with a redirect, not followed")
        raise DestinationRefused(f"the webhook refused the order ({status})")

    def _attempt(self, order: Order, body: bytes, secret: str) -> tuple[int, bytes]:
        """One attempt: the URL resolved and checked again (DNS can change), then the POST."""
        target = resolve_public(self.url, self.resolver, self.pinned)
        if isinstance(target, str):
            raise DestinationRefused(f"the webhook URL {target}")
        return self._post(target, order, body, secret), b""

    def _post(self, target: Target, order: Order, body: bytes, secret: str) -> int:
        now = int(self.clock())
        connection = _PinnedHTTPS(target, self.context, self.timeout)
        try:
            try:
                connection.connect()
            except OSError as exc:
                raise NotSent(type(exc).__name__) from exc
            connection.request(
                "POST",
                target.path,
                body=body,
                headers={
                    "Content-Type": "application/json",
                    "User-Agent": "weekly-shop-webhook/1",
                    "Idempotency-Key": order.order_id,
                    TIMESTAMP: str(now),
                    SIGNATURE: signature(secret, now, body),
                },
            )
            answer = connection.getresponse()
            answer.read(MAX_ANSWER)  # bounded; the rest is never read
            return int(answer.status)
        finally:
            connection.close()
