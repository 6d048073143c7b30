"""What builds the schedules: a waiting basket's timers (its reminders, expiry and undo window)
and each workspace's weekly run, both EventBridge Scheduler schedules in the timers' group,
when TIMER_GROUP, TIMER_TARGET_ARN and TIMER_ROLE_ARN say where (else none: nothing is armed).
The Scheduler client is made on its first call; the keys sign payloads that fire days later."""

from __future__ import annotations

import functools
import time
from collections.abc import Callable
from typing import TYPE_CHECKING

from bot.settings import Settings

from .clients import AwsClients

if TYPE_CHECKING:
    from bot.records.timers import Plan, Timers
    from bot.records.weekly import WeeklySchedules


class Schedules:
    """One workspace's view: its timers follow its ``plan`` (from its settings)."""

    def __init__(
        self,
        settings: Settings,
        aws: AwsClients,
        lasting_key: Callable[[bytes], bytes],
        plan: Callable[[], Plan],
        clock: Callable[[], float] = time.time,
    ) -> None:
        self.settings, self.aws, self.lasting_key, self.plan, self.clock = (
            settings,
            aws,
            lasting_key,
            plan,
            clock,
        )

    @functools.cached_property
    def timers(self) -> Timers | None:
        """A waiting basket's reminders and expiry (``bot.records.timers``)."""
        s = self.settings
        if not s.has_timers:
            return None
        from bot.records.timers import Timers

        return Timers(
            self.aws.scheduler,
            group=s.timer_group,
            target_arn=s.timer_target_arn,
            role_arn=s.timer_role_arn,
            key=self.lasting_key(b"weekly-shop timer v1"),
            plan=self.plan(),
            clock=self.clock,
        )

    @functools.cached_property
    def weekly(self) -> WeeklySchedules | None:
        """Each workspace's weekly run, one recurring schedule (``bot.records.weekly``)."""
        s = self.settings
        if not s.has_timers:
            return None
        from bot.records.weekly import WeeklySchedules

        return WeeklySchedules(
            self.aws.scheduler,
            group=s.timer_group,
            target_arn=s.timer_target_arn,
            role_arn=s.timer_role_arn,
            key=self.lasting_key(b"weekly-shop weekly run v1"),
        )
