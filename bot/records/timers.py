"""A waiting basket's timers: its reminders and its expiry, as EventBridge Scheduler schedules.

A waiting basket has one live timer, a one-time schedule (``at(...)``, flexible window off,
``ActionAfterCompletion: DELETE``) in one schedule group, whose target is this function with a
small signed payload (:class:`Timer`). Posting a basket arms its first timer; a reminder, when it
fires, arms the next (the next reminder, or the expiry); answering the basket deletes its timer.
A basket's timers take turns between two names derived from its request (``slot`` 0 and 1), so
a firing schedule's name, which Scheduler deletes some time after it fired, is never reused, and
an answer deletes both without looking anything up (two ``DeleteSchedule``). Nothing ever lists
every session on a timer.

    REMIND_AFTER   (6 h)   after the basket was posted, and again every REMIND_AFTER,
    MAX_REMINDERS  (2)     at most this many times, a reply in its thread mentions who can answer;
    EXPIRE_AFTER   (72 h)  after it was posted, the bot answers it "expired"
    ORDER_DELAY    (2 min) after the approval that completes it, a held basket's order goes
                           (its only timer while it is held: the undo window)
    (``bot.steps.reminders``).

A timer is delivered at least once (Scheduler, then Lambda's own retries), perhaps after the
basket was answered: ``bot.steps.reminders`` runs it as a turn of the session, under its lock, and a
timer whose request is no longer pending does nothing.
"""

from __future__ import annotations

import hashlib
import hmac
import json
import logging
from dataclasses import asdict, dataclass
from datetime import UTC, datetime
from typing import Any, Literal

from botocore.exceptions import BotoCoreError, ClientError

from workflow.persistence.store import validate_id

log = logging.getLogger(__name__)

TIMER_KEY = "weekly_shop_timer"  # the payload's one field besides its MAC
Kind = Literal["remind", "expire", "order"]  # "order": an approved basket's undo window ends
MIN_LEAD_SECONDS = 60  # a schedule is never set in the past: Scheduler wants a time to come
MAX_ATTEMPTS = (
    3  # a timer Lambda gave up on is armed again this many times at most (bot.steps.lost)
)


class BadTimer(ValueError):
    """A timer payload that is not one this app signed (forged, altered or malformed)."""


@dataclass(frozen=True)
class Plan:
    """When a basket's timers fire, from when it was posted (seconds; 0 turns a part off)."""

    remind_after: int = 6 * 3600
    max_reminders: int = 2
    expire_after: int = 72 * 3600

    def next(self, posted_at: int, reminded: int) -> tuple[Kind, int, int] | None:
        """(kind, reminder number, time) of the timer after ``reminded`` reminders, or None."""
        expires = posted_at + self.expire_after if self.expire_after > 0 else None
        n = reminded + 1
        at = posted_at + n * self.remind_after
        if self.remind_after > 0 and n <= self.max_reminders and (expires is None or at < expires):
            return "remind", n, at
        return ("expire", 0, expires) if expires is not None else None

    def expires_at(self, posted_at: int) -> int | None:
        return posted_at + self.expire_after if self.expire_after > 0 else None


@dataclass(frozen=True)
class Timer:
    """One firing: which basket (tenant, session, request; its channel and message), what kind,
    the reminder's number (0 for the expiry), when it was due, when the basket was posted (an
    order timer's: when it was posted held, its approval), which of the basket's two schedule
    names it has, and how often it was armed again after Lambda gave up on it."""

    tenant: str
    session: str
    request: str
    channel: str
    thread_ts: str
    kind: Kind
    n: int
    at: int
    posted_at: int
    slot: int = 0
    attempt: int = 0

    def following(self, plan: Plan) -> Timer | None:
        """The timer to arm once this reminder has fired, under the basket's other name."""
        upcoming = plan.next(self.posted_at, self.n) if self.kind == "remind" else None
        if upcoming is None:
            return None
        kind, n, at = upcoming
        changed = {"kind": kind, "n": n, "at": at, "slot": 1 - self.slot, "attempt": 0}
        return Timer(**{**asdict(self), **changed})


def first_timer(
    plan: Plan, tenant: str, session: str, request: str, channel: str, ts: str, posted_at: int
) -> Timer | None:
    """A basket just posted (message ``ts``, at ``posted_at``): its first timer, if any."""
    upcoming = plan.next(posted_at, 0)
    if upcoming is None:
        return None
    kind, n, at = upcoming
    return Timer(tenant, session, request, channel, ts, kind, n, at, posted_at)


def _mac(key: bytes, body: str) -> str:
    return hmac.new(key, b"weekly-shop timer v1\n" + body.encode(), hashlib.sha256).hexdigest()


def to_payload(timer: Timer, key: bytes) -> dict[str, Any]:
    body = json.dumps(asdict(timer), sort_keys=True, separators=(",", ":"))
    return {TIMER_KEY: body, "mac": _mac(key, body)}


def is_timer(event: dict[str, Any]) -> bool:
    return TIMER_KEY in event


def from_payload(event: dict[str, Any], key: bytes) -> Timer:
    """The timer an event carries; BadTimer unless this app signed exactly these fields."""
    body, mac = event.get(TIMER_KEY), event.get("mac")
    if not isinstance(body, str) or not isinstance(mac, str) or set(event) != {TIMER_KEY, "mac"}:
        raise BadTimer("not a timer payload")
    if not hmac.compare_digest(_mac(key, body), mac):
        raise BadTimer("the timer's MAC does not verify")
    try:
        timer = Timer(**json.loads(body))
        for value, what in (
            (timer.tenant, "tenant ID"),
            (timer.session, "session ID"),
            (timer.request, "request ID"),
        ):
            validate_id(value, what)
    except (TypeError, ValueError) as exc:
        raise BadTimer(f"malformed timer: {exc}") from None
    if timer.kind not in ("remind", "expire", "order") or timer.slot not in (0, 1):
        raise BadTimer(f"unknown timer kind {timer.kind!r} or slot {timer.slot!r}")
    return timer


def schedule_name(tenant: str, session: str, request: str, slot: int) -> str:
    """One of a basket's two schedule names (64 characters at most, of ``[0-9A-Za-z_.-]``),
    from its tenant, session and request, so that answering can delete them without a lookup."""
    digest = hashlib.sha256(f"{tenant}/{session}/{request}".encode()).hexdigest()[:40]
    return f"basket-{digest}-{slot}"


def at_expression(at: int) -> str:
    """Scheduler's one-time expression, in UTC (its default time zone)."""
    return f"at({datetime.fromtimestamp(at, UTC).strftime('%Y-%m-%dT%H:%M:%S')})"


class TimerError(Exception):
    """Scheduler refused or could not be reached (after botocore's retries)."""


class Timers:
    """The Scheduler side: arm a basket's timer, disarm its timers. ``client`` is a boto3
    ``scheduler`` client; ``target_arn`` this function; ``role_arn`` the role Scheduler assumes
    to invoke it (the only role the function may pass)."""

    def __init__(
        self,
        client: Any,
        *,
        group: str,
        target_arn: str,
        role_arn: str,
        key: bytes,
        plan: Plan,
        clock: Any,
    ) -> None:
        self.client = client
        self.group = group
        self.target_arn = target_arn
        self.role_arn = role_arn
        self.key = key
        self.plan = plan
        self.clock = clock

    def arm(self, timer: Timer, fire_at: int | None = None) -> None:
        """Create ``timer``'s schedule, to fire when it is due (or at ``fire_at``); one that
        exists already (a redelivery of the same step) is left as it is. Raises TimerError."""
        at = max(timer.at if fire_at is None else fire_at, int(self.clock()) + MIN_LEAD_SECONDS)
        try:
            self.client.create_schedule(
                Name=schedule_name(timer.tenant, timer.session, timer.request, timer.slot),
                GroupName=self.group,
                ScheduleExpression=at_expression(at),
                FlexibleTimeWindow={"Mode": "OFF"},
                ActionAfterCompletion="DELETE",
                Target={
                    "Arn": self.target_arn,
                    "RoleArn": self.role_arn,
                    "Input": json.dumps(to_payload(timer, self.key)),
                },
            )
        except ClientError as exc:
            if exc.response.get("Error", {}).get("Code") == "ConflictException":
                log.info("the session's timer is armed already")
                return
            raise TimerError(f"create schedule: {exc}") from exc
        except BotoCoreError as exc:
            raise TimerError(f"create schedule: {exc}") from exc

    def disarm(self, tenant: str, session: str, request: str) -> None:
        """Delete the basket's schedules (both names), wherever its timers had got to. Raises
        TimerError."""
        for slot in (0, 1):
            self.delete(schedule_name(tenant, session, request, slot))

    def delete(self, name: str) -> None:
        """Delete one schedule, if it is there. Raises TimerError."""
        try:
            self.client.delete_schedule(Name=name, GroupName=self.group)
        except ClientError as exc:
            if exc.response.get("Error", {}).get("Code") == "ResourceNotFoundException":
                return
            raise TimerError(f"delete schedule: {exc}") from exc
        except BotoCoreError as exc:
            raise TimerError(f"delete schedule: {exc}") from exc

    def pending(self) -> list[Timer]:
        """Every armed timer in the group (the sandbox's panel; never on a request's path),
        not the workspaces' weekly runs that share it (``bot.records.weekly``)."""
        out = []
        pages = self.client.get_paginator("list_schedules").paginate(
            GroupName=self.group, NamePrefix="basket-"
        )
        for page in pages:
            for listed in page.get("Schedules", []):
                got = self.client.get_schedule(Name=listed["Name"], GroupName=self.group)
                try:
                    out.append(from_payload(json.loads(got["Target"]["Input"]), self.key))
                except (BadTimer, KeyError, ValueError):
                    continue
        return sorted(out, key=lambda t: t.at)


class BasketTimers:
    """What a turn does with a basket's timers around telling Slack (``bot.steps.turn``): disarm the
    one of a basket answered, arm the first of a basket posted. A Scheduler failure is logged,
    never raised: the basket still works, without its reminders (a timer that fires for a basket
    no longer waiting does nothing)."""

    def __init__(self, timers: Timers | None) -> None:
        self.timers = timers

    def disarm(self, tenant: str, session: str, request_id: str) -> None:
        if self.timers is None:
            return
        try:
            self.timers.disarm(tenant, session, request_id)
        except TimerError as exc:
            log.error("could not delete the basket's timer: %s", exc)

    def arm_order(
        self,
        tenant: str,
        session: str,
        channel: str,
        request_id: str,
        ts: str,
        at: int,
        approved_at: int | None = None,
    ) -> None:
        """A held approval's timer: its order goes when it fires (``bot.steps.reminders``). Its
        ``posted_at`` is when the held basket was posted, ``approved_at``: the answered basket
        keeps its approval's time, not the order's. Raises TimerError: without it the basket
        would wait for nothing, so the turn fails and the next delivery, which catches the
        channel up, arms it again."""
        if self.timers is None:
            return
        posted = at if approved_at is None else approved_at
        self.timers.arm(Timer(tenant, session, request_id, channel, ts, "order", 0, at, posted))

    def arm(
        self, tenant: str, session: str, channel: str, request_id: str, ts: str, posted_at: int
    ) -> None:
        if self.timers is None:
            return
        timer = first_timer(
            self.timers.plan, tenant, session, request_id, channel, ts, posted_at=posted_at
        )
        if timer is None:
            return
        try:
            self.timers.arm(timer)
        except TimerError as exc:
            log.error("could not arm the basket's timer: %s", exc)
