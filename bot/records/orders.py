"""One order record per approved basket: written before its destination is called, so that the
order is placed once whatever the crashes, retries and double clicks.

    <orders prefix><tenant>/<session>      signed JSON, ~1-3 KB (``weekly-shop-orders/``)

The record's life, each write conditional (the session lock is held around all of it, so the
conditions guard against a lost lease, not against a second click):

    placing   created with ``If-None-Match: *`` before the first call (``attempt`` 1, when it
              started): whoever finds it already there does not call as if it were new, but
              resumes from what the record says
    placed    the destination's answer (its URL, its reference), ``If-Match`` the placing one
    failed    the destination refused, or stayed down after its own retries (``reason``, and
              whether a Retry may help), ``If-Match``; a Retry writes ``placing`` again with
              ``attempt`` + 1, ``If-Match`` the failed one

A record found ``placing`` is an attempt whose outcome nobody recorded: the process died before
the call, during it or after it before the record (``bot.steps.order`` decides per destination
what to do: look for what the call made, or call again with the same idempotency key).

A record is signed (HMAC-SHA256, a key derived from the checkpoint signing key) and checked
field by field when read: a record that does not verify is never taken for a missing one: it
is an error (:class:`OrderRecordDamaged`), so that nothing is ordered a second time because
a record was edited. Records live beside the checkpoints (a sibling prefix, outside their 30-day
rule: they are kept as long as the outcome records, ``HISTORY_DAYS``) and are deleted with their
workspace (``bot.steps.uninstall``).
"""

from __future__ import annotations

import dataclasses
import hashlib
import hmac
import json
import threading
from dataclasses import dataclass
from typing import Any, Literal, Protocol

from workflow.errors import StoreError
from workflow.persistence.s3_client import claim_marker, get_object, replace_marker
from workflow.persistence.s3_keys import sibling_prefix
from workflow.persistence.store import validate_id
from workflow.persistence.values import AllFields, check_bool, check_int, check_str, fields_of

from .slack_shapes import check_link, check_slack_ids

State = Literal["placing", "placed", "failed"]
STATES: tuple[State, ...] = ("placing", "placed", "failed")
Destination = Literal["canvas", "instacart", "webhook", "kroger"]
DESTINATION_KINDS: tuple[Destination, ...] = ("canvas", "instacart", "webhook", "kroger")
MAX_URL = 2000
MAX_LINES = 500  # a basket's items at most (workflow.shop.basket.MAX_ITEMS)
MAX_NAME = 500  # an item's name (workflow.shop.basket.MAX_ITEM_LENGTH)
MAX_QUANTITY = 9999  # one product over several items: 24 each at most (products.MAX_COUNT)
NEWER = ("cart", "left_out", "person")  # absent from records written before carts (read as empty)


def orders_prefix(checkpoint_prefix: str) -> str:
    """``weekly-shop/`` → ``weekly-shop-orders/`` (``orders/`` for the bucket's root)."""
    return sibling_prefix(checkpoint_prefix, "orders")


class OrderRecordDamaged(StoreError):
    """An order record that does not verify: nothing is placed until someone looks."""


@dataclass(frozen=True, slots=True, kw_only=True)
class OrderRecord(AllFields):
    """Where one session's order stands. ``sha256`` is the basket as ordered
    (``bot.orders.order.basket_sha256``); ``url`` and ``ref`` are the destination's answer
    (a canvas's link and ID, an Instacart page, a webhook's HTTP status). ``cart`` and
    ``left_out`` are what a cart is sent, and ``person`` whose cart, fixed by the first attempt
    so a Retry sends the same to the same cart (``bot.orders.order.Order``)."""

    session: str
    destination: Destination
    state: State
    attempt: int  # 1, then one more per Retry
    started_at: int  # epoch seconds the current attempt started
    sha256: str
    items: int  # how many items were ordered
    url: str = ""
    ref: str = ""
    reason: str = ""  # a failed one: why, in words for the person
    retry: bool = False  # a failed one: whether a Retry may help
    cart: tuple[tuple[str, int], ...] = ()  # (UPC, how many)
    left_out: tuple[str, ...] = ()  # the names of items with no product
    person: str = ""  # whose cart (a Slack user ID): a cart's only

    def __post_init__(self) -> None:
        validate_id(self.session, "session ID")
        if self.destination not in DESTINATION_KINDS:
            raise ValueError(f"OrderRecord.destination must be one of {DESTINATION_KINDS}")
        if self.state not in STATES:
            raise ValueError(f"OrderRecord.state must be one of {STATES}")
        check_int(self.attempt, "OrderRecord.attempt", ge=1)
        check_int(self.started_at, "OrderRecord.started_at", ge=0)
        check_str(self.sha256, "OrderRecord.sha256", min_length=64, max_length=64)
        if any(c not in "0123456789abcdef" for c in self.sha256):
            raise ValueError("OrderRecord.sha256 must be lowercase hex")
        check_int(self.items, "OrderRecord.items", ge=0)
        check_str(self.url, "OrderRecord.url", max_length=MAX_URL)
        check_link(self.url, "OrderRecord.url")
        check_str(self.ref, "OrderRecord.ref", max_length=200)
        check_str(self.reason, "OrderRecord.reason", max_length=500)
        check_bool(self.retry, "OrderRecord.retry")
        _check_cart(self)
        if self.person:
            check_slack_ids("OrderRecord.person", user=check_str(self.person, "OrderRecord.person"))

    @classmethod
    def from_json(cls, data: Any) -> OrderRecord:
        names = [f.name for f in dataclasses.fields(cls)]
        data = fields_of(data, "OrderRecord", names, [n for n in names if n not in NEWER])
        return cls(**data)

    def but(self, **changes: Any) -> OrderRecord:
        return dataclasses.replace(self, **changes)


def _check_cart(record: OrderRecord) -> None:
    """``cart``: at most :data:`MAX_LINES` pairs of a 13-digit UPC, each once, and 1 to
    :data:`MAX_QUANTITY`; ``left_out``: at most as many names (JSON's lists read as tuples)."""
    cart, names = record.cart, record.left_out
    if not isinstance(cart, list | tuple) or not isinstance(names, list | tuple):
        raise ValueError("OrderRecord.cart and left_out must be lists")
    if len(cart) > MAX_LINES or len(names) > MAX_LINES:
        raise ValueError(f"OrderRecord.cart and left_out hold at most {MAX_LINES}")
    lines = []
    for line in cart:
        if not isinstance(line, list | tuple) or len(line) != 2:
            raise ValueError("OrderRecord.cart's lines are [UPC, quantity]")
        upc, quantity = line
        if not isinstance(upc, str) or len(upc) != 13 or not upc.isascii() or not upc.isdigit():
            raise ValueError("OrderRecord.cart's UPCs are 13 digits")
        lines.append((upc, check_int(quantity, "OrderRecord.cart quantity", ge=1)))
        if quantity > MAX_QUANTITY:
            raise ValueError(f"OrderRecord.cart's quantities are at most {MAX_QUANTITY}")
    if len({upc for upc, _ in lines}) != len(lines):
        raise ValueError("OrderRecord.cart names each UPC once")
    for name in names:
        check_str(name, "OrderRecord.left_out", min_length=1, max_length=MAX_NAME)
    object.__setattr__(record, "cart", tuple(lines))
    object.__setattr__(record, "left_out", tuple(names))


def _sign(key: bytes, tenant: str, body: dict[str, Any]) -> str:
    data = json.dumps([tenant, body], sort_keys=True, separators=(",", ":")).encode()
    return hmac.new(key, data, hashlib.sha256).hexdigest()


def encode(key: bytes, tenant: str, record: OrderRecord) -> bytes:
    body = record.to_json()
    return json.dumps({"order": body, "mac": _sign(key, tenant, body)}).encode()


def decode(key: bytes, tenant: str, session: str, raw: bytes) -> OrderRecord:
    """The record in ``raw``; :class:`OrderRecordDamaged` unless this app signed it for
    ``tenant`` and ``session``."""
    try:
        data = json.loads(raw)
        body, mac = data["order"], data["mac"]
        if not isinstance(mac, str) or not hmac.compare_digest(mac, _sign(key, tenant, body)):
            raise ValueError("signature")
        record = OrderRecord.from_json(body)
    except (ValueError, TypeError, KeyError) as exc:
        raise OrderRecordDamaged(f"the order record of {session} is damaged") from exc
    if record.session != session:
        raise OrderRecordDamaged(f"the order record of {session} names another session")
    return record


@dataclass(frozen=True)
class Found:
    """A record and the version it was read at (an ETag), to replace it conditionally."""

    record: OrderRecord
    version: str


class Orders(Protocol):
    def create(self, tenant: str, record: OrderRecord) -> Found | None:
        """Write ``record`` unless the session has one: its version, or None if it had."""
        ...

    def replace(self, tenant: str, found: Found, record: OrderRecord) -> Found | None:
        """Replace ``found`` with ``record`` if nobody changed it since: None otherwise."""
        ...

    def read(self, tenant: str, session: str) -> Found | None:
        """The session's record, or None; :class:`OrderRecordDamaged` if it does not verify."""
        ...


class InMemoryOrders:
    """The twin of :class:`S3Orders`, for the console and unit tests."""

    def __init__(self) -> None:
        self._records: dict[tuple[str, str], Found] = {}
        self._lock = threading.Lock()
        self._versions = 0

    def _version(self) -> str:
        self._versions += 1
        return f'"{self._versions}"'

    def create(self, tenant: str, record: OrderRecord) -> Found | None:
        with self._lock:
            if (tenant, record.session) in self._records:
                return None
            found = self._records[tenant, record.session] = Found(record, self._version())
            return found

    def replace(self, tenant: str, found: Found, record: OrderRecord) -> Found | None:
        with self._lock:
            now = self._records.get((tenant, record.session))
            if now is None or now.version != found.version:
                return None
            new = self._records[tenant, record.session] = Found(record, self._version())
            return new

    def read(self, tenant: str, session: str) -> Found | None:
        return self._records.get((tenant, session))


class S3Orders:
    def __init__(self, bucket: str, prefix: str, s3_client: Any, key: bytes) -> None:
        self.s3 = s3_client
        self.bucket = bucket
        self.prefix = prefix
        self.key = key

    def _key(self, tenant: str, session: str) -> str:
        tenant = validate_id(tenant, "tenant ID")
        return f"{self.prefix}{tenant}/{validate_id(session, 'session ID')}"

    def create(self, tenant: str, record: OrderRecord) -> Found | None:
        key = self._key(tenant, record.session)
        etag = claim_marker(self.s3, self.bucket, key, encode(self.key, tenant, record), "order")
        return None if etag is None else Found(record, etag)

    def replace(self, tenant: str, found: Found, record: OrderRecord) -> Found | None:
        key = self._key(tenant, record.session)
        body = encode(self.key, tenant, record)
        etag = replace_marker(self.s3, self.bucket, key, body, found.version, "order")
        return None if etag is None else Found(record, etag)

    def read(self, tenant: str, session: str) -> Found | None:
        got = get_object(self.s3, self.bucket, self._key(tenant, session), "order")
        if got is None:
            return None
        return Found(decode(self.key, tenant, session, got[0]), got[1])
