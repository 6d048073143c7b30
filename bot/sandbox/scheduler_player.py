"""EventBridge Scheduler, played: moto stores the schedules, this delivers them at their time.

moto's Scheduler keeps schedules and never fires one. :class:`SchedulePlayer` is the part that
fires: a daemon thread that, each ``interval``, reads the schedules of the group (through the
Scheduler API, as anyone can) and, once the played clock (``clock``, the bot's) has passed one's
time, delivers it, exactly once, as Scheduler does (its user guide and Lambda's, "Invoke a Lambda
function on a schedule"):

- the target is invoked **asynchronously**, with the target's ``Input`` as the event, its context
  keywords (``<aws.scheduler.scheduled-time>``, ``-schedule-arn``, ``-execution-id``,
  ``-attempt-number``) replaced with the firing's values (``deliver``: the sandbox's async
  invocation of the real handler, ``Sandbox.invoke(lazy=True)``, retries and lost-runs queue
  included);
- a one-time schedule (``at(...)``) fires once; with ``ActionAfterCompletion: DELETE`` it is then
  deleted (here at its delivery: the bot's next timer of a basket has its other name, so nothing
  the delivery arms is deleted);
- a cron schedule (``cron(...)``) fires at each of its times in its ``ScheduleExpressionTimezone``
  (``schedule_times``), from when it was (last) written on. When the played clock jumps over
  several of them (a Fast-forward of days), only the latest is delivered: the earlier ones'
  scheduled times are in the past, which the bot refuses as stale (``bot.records.weekly``).

Fast-forward moves the played clock to the next schedule's time and asks for a pass at once
(:meth:`SchedulePlayer.tick`): a tick of the thread and one of Fast-forward may run together,
and the firing is claimed under one lock, so it is delivered once. Schedules whose target is not
``target_arn`` are claimed and skipped (logged): nothing else is played here.
"""

from __future__ import annotations

import json
import logging
import threading
import uuid
from collections.abc import Callable
from concurrent.futures import Future
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from botocore.exceptions import BotoCoreError, ClientError

from .schedule_times import NotPlayed, at_time, cron_after, utc_text

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class Upcoming:
    """A schedule's next firing as the player sees it: ``at`` (epoch seconds, played time) in
    ``timezone``; ``once`` for a one-time schedule; ``payload`` its Input (not yet filled in)."""

    name: str
    at: float
    timezone: str
    expression: str
    once: bool
    payload: dict[str, Any]


class SchedulePlayer:
    """Delivers ``group``'s schedules (``client``: a boto3 ``scheduler`` client) at their times on
    ``clock``, through ``deliver`` (the event of one async invocation of ``target_arn``)."""

    def __init__(
        self,
        client: Any,
        group: str,
        clock: Callable[[], float],
        deliver: Callable[[dict[str, Any]], Any],
        *,
        target_arn: str,
        interval: float = 1.0,
        on_change: Callable[[], None] = lambda: None,
    ) -> None:
        self.client, self.group, self.clock, self.deliver = client, group, clock, deliver
        self.target_arn = target_arn
        self.interval = interval
        self.on_change = on_change  # the schedules changed since the last pass (the page looks)
        self.seen: list[dict[str, Any]] = []  # the schedules as the last pass read them
        self._claim = threading.Lock()
        # (name, written, time) -> what ``deliver`` returned for it, once it has
        self._fired: dict[tuple[str, str, float], Future[Any]] = {}
        self._since: dict[tuple[str, str], float] = {}  # (name, written) -> played time first seen
        self._stop = threading.Event()
        self._wake = threading.Event()
        self._thread: threading.Thread | None = None

    # -- the thread ----------------------------------------------------------------------

    def start(self) -> SchedulePlayer:
        self._thread = threading.Thread(target=self._run, name="scheduler-player", daemon=True)
        self._thread.start()
        return self

    def stop(self) -> None:
        """Stop the thread (its pass under way finishes first)."""
        self._stop.set()
        self._wake.set()
        if self._thread is not None:
            self._thread.join(timeout=10)

    def wake(self) -> None:
        """Look again now rather than at the next interval (the played clock jumped)."""
        self._wake.set()

    def _run(self) -> None:
        while not self._stop.is_set():
            try:
                self.tick()
            except (ClientError, BotoCoreError) as exc:  # moto stopping, or refusing: next pass
                log.warning("the schedule player could not read the schedules: %s", exc)
            except Exception:  # noqa: BLE001 - one bad schedule must not stop the others' times
                log.exception("the schedule player's pass failed")
            self._wake.wait(self.interval)
            self._wake.clear()

    # -- one pass ------------------------------------------------------------------------

    def tick(self) -> list[str]:
        """Deliver every schedule due by now on the played clock; the names this pass
        delivered (not those another pass had claimed)."""
        now = self.clock()
        delivered = []
        schedules = self._schedules()
        versions = {(s["Name"], _written(s)) for s in schedules}
        with self._claim:
            changed = versions != {(s["Name"], _written(s)) for s in self.seen}
            self.seen = schedules
        if changed:
            self.on_change()
        for schedule in schedules:
            upcoming = self._upcoming(schedule, now)
            if upcoming is None or upcoming.at > now:
                continue
            if self._deliver(schedule, upcoming):
                delivered.append(upcoming.name)
        return delivered

    def delivery(self, name: str, at: float) -> Future[Any] | None:
        """The firing of ``name`` at ``at``, whichever pass delivered it: done with what
        ``deliver`` returned once it has (None if it was not delivered)."""
        with self._claim:
            found = [f for (n, _, t), f in self._fired.items() if (n, t) == (name, at)]
        return found[-1] if found else None

    def upcoming(self, read: bool = True) -> list[Upcoming]:
        """Every schedule's next firing, the soonest first (Fast-forward; the Timers panel,
        ``read=False``: from the schedules as the last pass read them)."""
        now = self.clock()
        with self._claim:
            seen = self.seen
        found = [self._upcoming(s, now) for s in (self._schedules() if read else seen)]
        return sorted((u for u in found if u is not None), key=lambda u: u.at)

    def _schedules(self) -> list[dict[str, Any]]:
        found = []
        pages = self.client.get_paginator("list_schedules").paginate(GroupName=self.group)
        for page in pages:
            for listed in page.get("Schedules", []):
                try:
                    got = self.client.get_schedule(Name=listed["Name"], GroupName=self.group)
                except ClientError as exc:  # deleted since it was listed
                    if exc.response.get("Error", {}).get("Code") == "ResourceNotFoundException":
                        continue
                    raise
                if got.get("State", "ENABLED") == "ENABLED":
                    found.append(got)
        return found

    def _upcoming(self, schedule: dict[str, Any], now: float) -> Upcoming | None:
        """The schedule's next firing not yet delivered (for a cron one: the latest due by
        ``now``, else the next to come), or None (one-time and delivered, or not played)."""
        name, expression = schedule["Name"], schedule["ScheduleExpression"]
        zone = schedule.get("ScheduleExpressionTimezone") or "UTC"
        written = _written(schedule)
        try:
            payload = json.loads(schedule.get("Target", {}).get("Input") or "{}")
            if expression.startswith("at("):
                at = at_time(expression, zone)
                if (name, written, at) in self._fired:
                    return None
                return Upcoming(name, at, zone, expression, True, payload)
            with self._claim:
                since = self._since.setdefault((name, written), now)
                fired = [t for (n, w, t) in self._fired if (n, w) == (name, written)]
            due = cron_after(expression, zone, max([since, *fired]))
            while due is not None and (later := cron_after(expression, zone, due)) is not None:
                if later > now:
                    break
                due = later  # jumped over several: the latest due
        except (NotPlayed, ValueError) as exc:
            log.warning("schedule %s is not played: %s", name, exc)
            return None
        return None if due is None else Upcoming(name, due, zone, expression, False, payload)

    def _deliver(self, schedule: dict[str, Any], upcoming: Upcoming) -> bool:
        """Claim the firing (False: delivered already, by the thread or Fast-forward), delete a
        one-time schedule that asks for it, and invoke the target."""
        key = (upcoming.name, _written(schedule), upcoming.at)
        done: Future[Any] = Future()
        with self._claim:
            if key in self._fired:
                return False
            self._fired[key] = done
            if upcoming.once and schedule.get("ActionAfterCompletion") == "DELETE":
                try:
                    self._delete(upcoming.name)
                except BaseException as exc:  # not delivered: the next pass tries again
                    del self._fired[key]
                    done.set_exception(exc)
                    raise
        target = schedule.get("Target", {})
        if target.get("Arn") != self.target_arn:
            log.warning("schedule %s targets %s: not played", upcoming.name, target.get("Arn"))
            done.set_result(None)
            return False
        text = str(target.get("Input") or "{}")
        for keyword, value in (
            ("scheduled-time", utc_text(upcoming.at)),
            ("schedule-arn", str(schedule.get("Arn", ""))),
            ("execution-id", uuid.uuid4().hex[:16]),
            ("attempt-number", "1"),
        ):
            text = text.replace(f"<aws.scheduler.{keyword}>", value)
        log.info("schedule %s fired (%s)", upcoming.name, utc_text(upcoming.at))
        try:
            done.set_result(self.deliver(json.loads(text)))
        except BaseException as exc:
            done.set_exception(exc)
            raise
        return True

    def _delete(self, name: str) -> None:
        try:
            self.client.delete_schedule(Name=name, GroupName=self.group)
        except ClientError as exc:
            if exc.response.get("Error", {}).get("Code") != "ResourceNotFoundException":
                raise


def _written(schedule: dict[str, Any]) -> str:
    """When the schedule was last written: a version of it, so that one written again (a new
    weekly time, a basket's timer name reused) is a new schedule to the player."""
    when = schedule.get("LastModificationDate") or schedule.get("CreationDate")
    return when.isoformat() if isinstance(when, datetime) else str(when)
