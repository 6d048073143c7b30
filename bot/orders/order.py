"""An approved basket as it leaves the bot, and what a destination answers.

Every destination (a Slack canvas checklist, an Instacart shopping-list page, a signed webhook,
a person's Kroger cart) is a :class:`Destination`: one call, ``place(order)``, which answers
:class:`Placed` or raises one of this module's errors:

    OrderError                 the order did not reach its destination (nothing to show)
    ├── DestinationRefused     the destination said no (a 4xx, Slack's ``ok: false``): retrying
    │                          the same call cannot help; ``reason`` is for the person
    ├── DestinationDown        it failed in a way a later retry may fix (a 5xx, a timeout before
    │                          anything was sent, a connection refused)
    └── OutcomeUnknown         the call may or may not have happened (a timeout after sending):
                               the caller calls again with the same ``order.order_id``

Exceptions never log themselves and never carry a key, a token or a secret in their text.
"""

from __future__ import annotations

import hashlib
import json
import random
import re
from collections.abc import Callable
from dataclasses import dataclass
from datetime import UTC, date, datetime
from typing import Literal, Protocol

from workflow.shop.basket import Item

DestinationKind = Literal["canvas", "instacart", "webhook", "kroger"]
DESTINATIONS: tuple[DestinationKind, ...] = ("canvas", "instacart", "webhook", "kroger")
CartLine = tuple[str, int]  # a product's 13-digit UPC, and how many


@dataclass(frozen=True)
class Order:
    """One approved basket, as every destination is sent it.

    ``order_id`` is the same for every attempt to place this basket (the session's ID): the
    idempotency key a destination is sent. ``title`` names the week ("Shopping for the week of
    7 December 2026"). ``basket_sha256`` is the SHA-256 of the items as ordered
    (:func:`basket_sha256`), so "what did we approve?" has one answer. ``cart`` is the products
    the basket was priced with at the household's store (each UPC once, with how many), and
    ``left_out`` the items that had none: what a cart is sent, and what the thread lists as not
    in it (empty where the basket was never priced); ``cart_person`` whose cart it goes to
    (a Slack user ID; "" for other destinations).
    """

    order_id: str
    team: str
    channel: str
    title: str
    lines: tuple[Item, ...]  # the basket's items, as approved
    requested_by: str
    approved_by: tuple[str, ...]
    approved_at: int  # Unix seconds
    thread_ts: str = ""  # the basket's message, which the thread of the order is under
    cart: tuple[CartLine, ...] = ()
    left_out: tuple[str, ...] = ()  # item names
    cart_person: str = ""

    @property
    def basket_sha256(self) -> str:
        return basket_sha256(self.lines)


DAY_NAMES = ("monday", "tuesday", "wednesday", "thursday", "friday", "saturday", "sunday")
_DAYS = re.compile(
    r"\b(mon|tue|wed|thu|fri|sat|sun)(?:day|sday|nesday|rsday|urday)?s?\b|\b(tomorrow)\b",
    re.IGNORECASE,
)


def dinners_day(at: int, request: str = "") -> date:
    """The first day the week's dinners are for: the first day named in ``request`` (a day of
    the week, or "tomorrow") on or after the day of ``at`` (UTC); none named, that day. So a
    basket approved on Friday 4 December for dinners "on Tuesday and Thursday" is for Tuesday 8."""
    day = datetime.fromtimestamp(at, UTC).date()
    ahead = []
    for found in _DAYS.finditer(request):
        if found[2]:
            ahead.append(1)
            continue
        named = next(i for i, name in enumerate(DAY_NAMES) if name.startswith(found[1].lower()))
        ahead.append((named - day.weekday()) % 7)
    return day.fromordinal(day.toordinal() + min(ahead, default=0))


def week_title(at: int, request: str = "") -> str:
    """``Shopping list · week of 7 December 2026``: the Monday of the week the dinners are for
    (:func:`dinners_day`: the first day ``request`` names, from the day of ``at``)."""
    day = dinners_day(at, request)
    monday = day.fromordinal(day.toordinal() - day.weekday())
    return f"Shopping list · week of {monday.day} {monday:%B %Y}"


def basket_sha256(lines: tuple[Item, ...]) -> str:
    """SHA-256 of the items as ordered: canonical JSON (sorted keys, no spaces, UTF-8)."""
    body = json.dumps(
        [line.to_json() for line in lines],
        sort_keys=True,
        separators=(",", ":"),
        ensure_ascii=False,
    )
    return hashlib.sha256(body.encode()).hexdigest()


# A destination's key (an API key, a signing secret) for a workspace: read when an order is
# placed, None when there is none. It may raise DestinationDown (the key store is unreachable).
KeyOf = Callable[[str], str | None]


def key_of(key: str | KeyOf) -> KeyOf:
    """``key`` as a :data:`KeyOf` (a fixed key serves every workspace)."""
    return key if callable(key) else lambda _team: key


def backoff(attempt: int) -> float:
    """Seconds to wait before attempt ``attempt`` (1, 2) of a call to a destination: 0.5 s, then
    1.5 s, each up to half again (jitter), so three attempts end within about 3 s plus their
    timeouts."""
    return 0.5 * 3.0 ** (attempt - 1) * (1 + random.random() / 2)


ATTEMPTS = 3  # a destination's HTTP call: tried three times at most
MAX_ANSWER = 64 * 1024  # bytes of a destination's answer read, at most


class NotSent(Exception):
    """The connection (TCP, TLS) failed: nothing of the order was sent."""


def with_retries(
    send: Callable[[], tuple[int, bytes]], sleep: Callable[[float], None], what: str
) -> tuple[int, bytes]:
    """``send`` (one HTTP call: its status and at most :data:`MAX_ANSWER` of its answer) tried
    up to :data:`ATTEMPTS` times, backing off: the first answer that is not a 429 or a 5xx (the
    caller judges it). A connection that fails (:class:`NotSent`) is tried again; so is one
    that sent and then failed (an ``OSError``: no answer in time), the same order again. After
    the last attempt: :class:`OutcomeUnknown` if the last that sent had no answer, else
    :class:`DestinationDown`. ``what`` names the destination in the reason."""
    unknown = False
    for attempt in range(ATTEMPTS):
        if attempt:
            sleep(backoff(attempt))
        try:
            status, answer = send()
        except NotSent:
            continue
        except OSError:  # sent, perhaps received: the next attempt sends the same again
            unknown = True
            continue
        if status != 429 and status < 500:
            return status, answer
        unknown = False  # it answered: nothing was placed
    if unknown:
        raise OutcomeUnknown(f"{what} did not answer in time")
    raise DestinationDown(f"{what} could not be reached or kept failing")


@dataclass(frozen=True)
class Placed:
    """What a destination did: ``url`` is what the thread links to ("" for a webhook), ``ref``
    the destination's own name for it (a canvas ID, the webhook's HTTP status)."""

    kind: DestinationKind
    url: str = ""
    ref: str = ""


class OrderError(Exception):
    """The order did not reach its destination; ``reason`` is short and safe to show."""

    def __init__(self, reason: str) -> None:
        super().__init__(reason)
        self.reason = reason


class DestinationRefused(OrderError):
    """The destination refused the order; the same call again cannot succeed."""


class DestinationDown(OrderError):
    """The destination failed in a way a later attempt may fix; nothing was placed."""


class OutcomeUnknown(OrderError):
    """The call may have been placed: call again with the same ``order_id``."""


class Destination(Protocol):
    """Where one workspace's orders go. ``repeats_safely``: whether sending an order again
    (with the same ``order_id``) places it once; False (a Kroger cart, which has no idempotency
    key) means an attempt whose outcome is unknown is never made again unless a person chooses
    to (``bot.orders.place``)."""

    @property
    def kind(self) -> DestinationKind: ...

    @property
    def repeats_safely(self) -> bool: ...

    def place(self, order: Order) -> Placed:
        """Place ``order``; raises :class:`OrderError` (one of its three kinds) otherwise."""
        ...
