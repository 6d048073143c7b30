"""A workspace's weekly run: one EventBridge Scheduler recurring schedule per workspace.

A workspace that saves a weekly run in its settings (channel, day, time, time zone, standing
request) gets one schedule, ``weekly-<team>``, in the basket timers' group (``TIMER_GROUP``): its
expression ``cron(<minute> <hour> ? * <DAY> *)`` with ``ScheduleExpressionTimezone`` set to the
run's IANA zone (Scheduler keeps the wall-clock time across daylight saving), flexible window
off, and as target this function, through the timers' role, with this ``Input``::

    {"weekly_shop_run": "<team and run, JSON>", "mac": "<HMAC-SHA256 of it>",
     "scheduled_time": "<aws.scheduler.scheduled-time>"}

The run travels in the payload, signed (a key of its own from the checkpoint key), so a firing
needs nothing read to know what to start. Scheduler replaces the ``<aws.scheduler.…>`` keywords
in the payload with the firing's values when it invokes the target ("Adding context attributes",
Scheduler's user guide; e.g. ``2022-03-22T18:59:43Z``): every delivery of one firing carries the
same scheduled time, and the session is keyed on team and that time, so two deliveries start one
basket. The scheduled time is not under the MAC (Scheduler writes it), so it is read strictly and
must be recent (at most LATEST old, Scheduler's retries and Lambda's included): a payload replayed
later starts nothing, and only a principal allowed to invoke the function can deliver one at all.
``<`` never appears inside the signed body (written ``\\u003c``), so a request that happens to
contain a keyword is not rewritten by Scheduler.

Saving settings calls :meth:`WeeklySchedules.arrange` (create, change, or delete with None);
removing the app calls :meth:`WeeklySchedules.delete`. The function may create, update, read
and delete ``weekly-*`` schedules of its group, and nothing else of them (serverless.yml).

(Over 300 lines: a run's checks, its signed payload and its schedule are read together.)

Errors::

    ValueError
     ├── InvalidWeeklyRun     a WeeklyRun value refused; .field says which (channel, day, ...)
     └── BadWeeklyPayload     a firing not signed by this app, altered, malformed, or stale
    WeeklyScheduleError       Scheduler refused or could not be reached (after botocore's retries)
"""

from __future__ import annotations

import hashlib
import hmac
import json
import logging
import re
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

from botocore.exceptions import BotoCoreError, ClientError

log = logging.getLogger(__name__)

RUN_KEY = "weekly_shop_run"
TIME_KEY = "scheduled_time"
SCHEDULED_TIME = "<aws.scheduler.scheduled-time>"  # Scheduler's context attribute
DAYS = ("mon", "tue", "wed", "thu", "fri", "sat", "sun")
RUN_FIELDS = ("channel", "day", "time", "timezone", "request")
MAX_REQUEST = 3000  # as a typed /shop request (ShopRequest.text)
# Scheduler retries a failed invoke for at most RETRY_AGE; Lambda's own retries of the async
# invocation add at most 4 minutes (maximumEventAge). A firing older than LATEST is no delivery.
RETRY_AGE = 3600
LATEST = 2 * 3600
EARLIEST = 300  # clock skew: a scheduled time this far ahead of ours is still taken
_TIME = re.compile(r"([01]\d|2[0-3]):([0-5]\d)")
_CHANNEL = re.compile(r"[CG][A-Z0-9]{2,31}")
_TEAM = re.compile(r"[0-9A-Za-z_.-]{1,57}")  # Scheduler's name pattern, 64 with "weekly-"
_ZONE = re.compile(r"UTC|[A-Z][A-Za-z]+(?:/[A-Za-z0-9_+-]+){1,2}")
_SCHEDULED = re.compile(r"\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}Z")


class InvalidWeeklyRun(ValueError):
    """A weekly run that cannot be saved; ``field`` is the one at fault (``channel``, ``day``,
    ``time``, ``timezone`` or ``request``) and the message says why, for the person."""

    def __init__(self, field: str, message: str) -> None:
        super().__init__(message)
        self.field = field


class BadWeeklyPayload(ValueError):
    """A weekly firing that is not one this app signed (forged, altered, malformed) or whose
    scheduled time is not a recent one."""


class WeeklyScheduleError(Exception):
    """Scheduler refused or could not be reached (after botocore's retries)."""


@dataclass(frozen=True)
class WeeklyRun:
    """When and where a workspace's weekly basket is written, and what it asks for.

    ``channel`` a channel ID (``C…`` or ``G…``); ``day`` ``mon`` … ``sun``; ``time`` ``HH:mm``,
    24-hour; ``timezone`` an IANA name (``Europe/London``); ``request`` 1 to 3,000 characters,
    not all blank. Raises :class:`InvalidWeeklyRun` naming the field."""

    channel: str
    day: str
    time: str
    timezone: str
    request: str

    def __post_init__(self) -> None:
        problems = run_problems(self.to_json())
        if problems:  # (the first; a form shows them all: run_problems)
            name, message = next(iter(problems.items()))
            raise InvalidWeeklyRun(name, message)

    def cron(self) -> str:
        """Scheduler's expression: minute, hour, any day of the month (``?``), every month, the
        run's day of the week, every year; read in :attr:`timezone`."""
        hour, minute = (int(part) for part in self.time.split(":"))
        return f"cron({minute} {hour} ? * {self.day.upper()} *)"

    def to_json(self) -> dict[str, str]:
        return {
            "channel": self.channel,
            "day": self.day,
            "time": self.time,
            "timezone": self.timezone,
            "request": self.request,
        }

    @classmethod
    def from_json(cls, data: Any) -> WeeklyRun:
        """The run ``to_json`` wrote; InvalidWeeklyRun for anything else (a field missing,
        one too many, a value refused)."""
        fields = RUN_FIELDS
        if not isinstance(data, dict):
            raise InvalidWeeklyRun("weekly", "The weekly run is not an object.")
        for name in fields:
            if name not in data:
                raise InvalidWeeklyRun(name, f"The weekly run has no {name}.")
        extra = sorted(str(name) for name in set(data) - set(fields))
        if extra:
            raise InvalidWeeklyRun("weekly", f"The weekly run has an unknown field {extra[0]!r}.")
        return cls(**{name: data[name] for name in fields})


def run_problems(run: dict[str, Any]) -> dict[str, str]:
    """Every problem of a weekly run's ``channel``, ``day``, ``time``, ``timezone`` and
    ``request`` at once, by field ({} for a run :class:`WeeklyRun` takes): a form shows them all
    in one answer."""
    found = {n: f"The {n} must be text." for n, v in run.items() if not isinstance(v, str)}
    channel, day, time, zone, request = (
        v if isinstance(v, str) else "" for v in map(run.get, RUN_FIELDS)
    )
    if not channel:
        found.setdefault("channel", "Choose a channel for the weekly run.")
    elif not _CHANNEL.fullmatch(channel):
        found.setdefault("channel", f"{channel[:40]!r} is not a channel ID.")
    if day not in DAYS:
        found.setdefault("day", f"The day must be one of {', '.join(DAYS)}.")
    if not _TIME.fullmatch(time):
        found.setdefault("time", 'The time must be HH:mm, 24-hour, such as "09:30".')
    if not _is_timezone(zone):
        found.setdefault(
            "timezone",
            f"The time zone must be an IANA name such as Europe/London. {zone[:50]!r} is not one.",
        )
    if not request.strip():
        found.setdefault("request", "Write what the weekly basket should be for.")
    elif len(request) > MAX_REQUEST:
        found.setdefault(
            "request",
            f"The standing request is {len(request):,} characters; at most {MAX_REQUEST:,}.",
        )
    return found


def _is_timezone(name: str) -> bool:
    # (imported here: the handler imports this module for is_weekly, on every cold start)
    from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

    # An Area/Location name (or UTC) that the tz database has: not a file that happens to be in
    # its folder (localtime, posixrules, posix/..., right/...); Scheduler takes 50 characters.
    if len(name) > 50 or not _ZONE.fullmatch(name):
        return False
    try:
        ZoneInfo(name)
    except (ZoneInfoNotFoundError, ValueError):  # ValueError: a path, not a key
        return False
    return True


@dataclass(frozen=True)
class WeeklyFiring:
    """One delivery of a weekly run: whose, what, and when it was scheduled (epoch seconds)."""

    team: str
    run: WeeklyRun
    scheduled_at: int


def schedule_name(team_id: str) -> str:
    """The workspace's one schedule (Scheduler: 64 characters at most, of ``[0-9A-Za-z_.-]``)."""
    if not isinstance(team_id, str) or not _TEAM.fullmatch(team_id):
        raise ValueError(f"team ID {str(team_id)[:40]!r} cannot name a schedule")
    return f"weekly-{team_id}"


def _mac(key: bytes, body: str) -> bytes:
    message = b"weekly-shop weekly run v1\n" + body.encode("utf-8", "surrogatepass")
    return hmac.new(key, message, hashlib.sha256).hexdigest().encode()


def to_payload(team_id: str, run: WeeklyRun, key: bytes) -> dict[str, str]:
    """The schedule's ``Input``, before Scheduler fills in the scheduled time."""
    body = json.dumps({"team": team_id, **run.to_json()}, sort_keys=True, separators=(",", ":"))
    body = body.replace("<", "\\u003c")  # only inside strings: still the same JSON
    return {RUN_KEY: body, "mac": _mac(key, body).decode(), TIME_KEY: SCHEDULED_TIME}


def is_weekly(event: dict[str, Any]) -> bool:
    return RUN_KEY in event


def from_payload(event: dict[str, Any], key: bytes, now: float | None = None) -> WeeklyFiring:
    """The firing an event carries; BadWeeklyPayload unless this app signed exactly this run,
    and (given ``now``) its scheduled time is between LATEST before and EARLIEST after now."""
    body, mac, when = (event.get(k) for k in (RUN_KEY, "mac", TIME_KEY))
    if set(event) != {RUN_KEY, "mac", TIME_KEY}:
        raise BadWeeklyPayload("not a weekly run payload")
    if not isinstance(body, str) or not isinstance(mac, str) or not isinstance(when, str):
        raise BadWeeklyPayload("a weekly run payload's fields are text")
    if not hmac.compare_digest(_mac(key, body), mac.encode("utf-8", "surrogatepass")):
        raise BadWeeklyPayload("the weekly run's MAC does not verify")
    try:
        fields = json.loads(body)
        team = fields.pop("team")
        schedule_name(team)
        run = WeeklyRun.from_json(fields)
    except (TypeError, ValueError, KeyError, AttributeError) as exc:
        raise BadWeeklyPayload(f"malformed weekly run: {exc}") from None
    if not _SCHEDULED.fullmatch(when):
        raise BadWeeklyPayload(f"scheduled time {when[:40]!r} is not Scheduler's")
    try:
        at = int(datetime.strptime(when, "%Y-%m-%dT%H:%M:%SZ").replace(tzinfo=UTC).timestamp())
    except ValueError:
        raise BadWeeklyPayload(f"scheduled time {when!r} is not a time") from None
    if now is not None and not now - LATEST <= at <= now + EARLIEST:
        raise BadWeeklyPayload(f"scheduled time {when} is not a recent firing")
    return WeeklyFiring(team, run, at)


def _code(exc: ClientError) -> str:
    return str(exc.response.get("Error", {}).get("Code", ""))


class WeeklySchedules:
    """The Scheduler side of the weekly runs. ``client`` is a boto3 ``scheduler`` client;
    ``group`` the schedule group; ``target_arn`` this function; ``role_arn`` the role Scheduler
    invokes it with; ``key`` the payload's MAC key."""

    def __init__(
        self, client: Any, *, group: str, target_arn: str, role_arn: str, key: bytes
    ) -> None:
        self.client = client
        self.group = group
        self.target_arn = target_arn
        self.role_arn = role_arn
        self.key = key

    def arrange(self, team_id: str, run: WeeklyRun | None) -> None:
        """Make the workspace's schedule fire ``run`` (create it, or change the one there), or
        delete it with None. Raises WeeklyScheduleError; ValueError for a team ID that cannot
        name a schedule."""
        if run is None:
            self.delete(team_id)
            return
        name = schedule_name(team_id)
        spec = self._spec(team_id, run)
        try:
            try:  # usually there is one to change: one request
                self.client.update_schedule(Name=name, GroupName=self.group, **spec)
            except ClientError as exc:
                if _code(exc) != "ResourceNotFoundException":
                    raise
                self.client.create_schedule(Name=name, GroupName=self.group, **spec)
        except ClientError as exc:
            if _code(exc) == "ConflictException":  # created meanwhile by another save: change it
                self._update_again(name, spec)
                return
            raise WeeklyScheduleError(f"arrange schedule: {exc}") from exc
        except BotoCoreError as exc:
            raise WeeklyScheduleError(f"arrange schedule: {exc}") from exc
        log.info("weekly run of %s arranged: %s %s", team_id, run.cron(), run.timezone)

    def _update_again(self, name: str, spec: dict[str, Any]) -> None:
        try:
            self.client.update_schedule(Name=name, GroupName=self.group, **spec)
        except (ClientError, BotoCoreError) as exc:
            raise WeeklyScheduleError(f"arrange schedule: {exc}") from exc

    def _spec(self, team_id: str, run: WeeklyRun) -> dict[str, Any]:
        """What CreateSchedule and UpdateSchedule both take (an update replaces every field)."""
        return {
            "ScheduleExpression": run.cron(),
            "ScheduleExpressionTimezone": run.timezone,
            "FlexibleTimeWindow": {"Mode": "OFF"},
            "State": "ENABLED",
            "Description": f"weekly-shop: the weekly basket of workspace {team_id}",
            "Target": {
                "Arn": self.target_arn,
                "RoleArn": self.role_arn,
                "Input": json.dumps(to_payload(team_id, run, self.key)),
                "RetryPolicy": {"MaximumEventAgeInSeconds": RETRY_AGE, "MaximumRetryAttempts": 185},
            },
        }

    def delete(self, team_id: str, written_before: float | None = None) -> bool:
        """Delete the workspace's schedule; False if there was none (or, with
        ``written_before``, only one last written at or after that epoch second: a removal
        retried after the workspace installed the app again keeps the new one). Raises
        WeeklyScheduleError."""
        name = schedule_name(team_id)
        try:
            if written_before is not None:
                got = self.client.get_schedule(Name=name, GroupName=self.group)
                if got["LastModificationDate"].timestamp() >= written_before:
                    return False
            self.client.delete_schedule(Name=name, GroupName=self.group)
        except ClientError as exc:
            if _code(exc) == "ResourceNotFoundException":
                return False
            raise WeeklyScheduleError(f"delete schedule: {exc}") from exc
        except BotoCoreError as exc:
            raise WeeklyScheduleError(f"delete schedule: {exc}") from exc
        log.info("weekly run of %s deleted", team_id)
        return True
