"""When an EventBridge Scheduler schedule is due: its ``at(...)`` or ``cron(...)`` expression read
in its ``ScheduleExpressionTimezone`` (UTC when it names none), as ``scheduler_player`` plays it.

Scheduler's user guide ("Schedule types"): a one-time schedule is ``at(yyyy-mm-ddThh:mm:ss)``, a
wall-clock time in the schedule's zone; a cron schedule is ``cron(minutes hours day-of-month month
day-of-week year)``, one of the two days ``?``, days of the week ``1``-``7`` (``1`` is Sunday) or
``SUN``-``SAT``, months ``1``-``12`` or ``JAN``-``DEC``; ``*``, ``,``, ``-`` and ``/`` as in cron.
Across daylight saving time the wall-clock time is kept: a time that does not exist that day (the
spring gap) is skipped, one that happens twice (the autumn overlap) runs once. ``L``, ``W``, ``#``
and ``rate(...)`` are not played here (:class:`NotPlayed`): this app writes none of them.
"""

from __future__ import annotations

import re
from datetime import UTC, date, datetime, timedelta
from zoneinfo import ZoneInfo

MONTHS = ("JAN", "FEB", "MAR", "APR", "MAY", "JUN", "JUL", "AUG", "SEP", "OCT", "NOV", "DEC")
DAYS = ("SUN", "MON", "TUE", "WED", "THU", "FRI", "SAT")  # Scheduler's 1..7
_AT = re.compile(r"at\((\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2})\)")
_CRON = re.compile(r"cron\(([^()]*)\)")
SEARCH_DAYS = 8 * 366  # a cron that matches no day in this long (30 February) never fires


class NotPlayed(ValueError):
    """An expression this player does not play (or that is not Scheduler's at all)."""


def _exists(local: datetime) -> bool:
    """Whether a wall-clock time happens in its zone (not in the spring-forward gap)."""
    there = local.astimezone(UTC).astimezone(local.tzinfo)
    return there.replace(tzinfo=None) == local.replace(tzinfo=None)


def at_time(expression: str, timezone: str = "UTC") -> float:
    """The epoch second a one-time schedule is due."""
    found = _AT.fullmatch(expression)
    if found is None:
        raise NotPlayed(f"not a one-time expression: {expression[:60]!r}")
    local = datetime.strptime(found.group(1), "%Y-%m-%dT%H:%M:%S")
    return local.replace(tzinfo=ZoneInfo(timezone or "UTC")).timestamp()


def _values(field: str, low: int, high: int, names: tuple[str, ...] = ()) -> set[int]:
    """The numbers a cron field allows; ``names`` stand for ``low``, ``low + 1``, …"""

    def number(text: str) -> int:
        upper = text.upper()
        value = low + names.index(upper) if upper in names else int(text)
        if not low <= value <= high:
            raise NotPlayed(f"{text!r} is out of {low}-{high}")
        return value

    allowed: set[int] = set()
    for part in field.split(","):
        span, _, step_text = part.partition("/")
        step = int(step_text) if step_text else 1
        if span in ("*", "?"):
            first, last = low, high
        elif "-" in span:
            first, last = (number(x) for x in span.split("-", 1))
        else:
            first = number(span)
            last = high if step_text else first
        if step < 1 or first > last:
            raise NotPlayed(f"cron field {field!r}")
        allowed.update(range(first, last + 1, step))
    return allowed


class Cron:
    """A parsed ``cron(...)`` expression; :meth:`after` gives its next time."""

    def __init__(self, expression: str, timezone: str = "UTC") -> None:
        found = _CRON.fullmatch(expression.strip())
        fields = found.group(1).split() if found else []
        if len(fields) != 6:
            raise NotPlayed(f"not a six-field cron expression: {expression[:60]!r}")
        minutes, hours, dom, month, dow, year = fields
        unnamed = re.sub("|".join(DAYS), "", dow.upper())  # (WED has a W)
        if any(c in dom.upper() for c in "LW") or any(c in unnamed for c in "L#"):
            raise NotPlayed(f"L, W and # are not played: {expression[:60]!r}")
        if (dom == "?") == (dow == "?"):
            raise NotPlayed("one of day-of-month and day-of-week must be '?', not both")
        try:
            self.minutes = sorted(_values(minutes, 0, 59))
            self.hours = sorted(_values(hours, 0, 23))
            self.dom = None if dom == "?" else _values(dom, 1, 31)
            self.months = _values(month, 1, 12, MONTHS)
            self.dow = None if dow == "?" else _values(dow, 1, 7, DAYS)
            self.years = _values(year, 1970, 2199)
        except ValueError as exc:
            raise NotPlayed(f"{expression[:60]!r}: {exc}") from None
        self.zone = ZoneInfo(timezone or "UTC")

    def _day(self, day: date) -> bool:
        if day.year not in self.years or day.month not in self.months:
            return False
        if self.dom is not None:
            return day.day in self.dom
        return self.dow is not None and (day.isoweekday() % 7) + 1 in self.dow

    def after(self, moment: float) -> float | None:
        """The first time strictly after ``moment`` (epoch seconds) it is due, or None."""
        start = datetime.fromtimestamp(moment, self.zone)
        for offset in range(SEARCH_DAYS):
            day = start.date() + timedelta(days=offset)
            if not self._day(day):
                continue
            for hour in self.hours:
                for minute in self.minutes:
                    local = datetime(day.year, day.month, day.day, hour, minute, tzinfo=self.zone)
                    # fold 0: the first of a time that happens twice; the gap's are skipped
                    if _exists(local) and local.timestamp() > moment:
                        return local.timestamp()
        return None


def cron_after(expression: str, timezone: str, moment: float) -> float | None:
    """The first time after ``moment`` that ``expression`` is due in ``timezone``."""
    return Cron(expression, timezone).after(moment)


def utc_text(moment: float) -> str:
    """Scheduler's form of a scheduled time, e.g. ``2022-03-22T18:59:43Z``."""
    return datetime.fromtimestamp(moment, UTC).strftime("%Y-%m-%dT%H:%M:%SZ")
