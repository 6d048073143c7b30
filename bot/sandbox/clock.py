"""Time passing, played: the bot's clock in the sandbox, the tests and the bench.

A basket's timers act only when due (``bot.steps.reminders``: a timer delivered early is armed
again). The clock runs with real time, and the sandbox's Scheduler (``scheduler_player``) fires a
schedule once it passes its time. Nobody waits six hours for a reminder, though: Fast-forward,
the tests' ``fire`` and the bench move this clock to the timer's time first
(:meth:`PlayedClock.reach`), as if the hours had passed, and then it is delivered. The bot is
given the clock at its cold start (``Runtime.clock``), and so is the fake Slack (a canvas found
again after a crash is looked for from the bot's time); it never moves backwards.

S3 (moto) keeps real time. A session lock's lease is read against when S3 wrote it (at most
900 s after, ``workflow.persistence.s3_lock``), so a lock taken before a jump of more than that
looks expired to the bot afterwards: another click may take it over (one of them, the writes
are conditional), and the checkpoints' own conditional writes still let one writer win. Tests
of a held lock move the clock by a minute, not by hours.
"""

from __future__ import annotations

import time


class PlayedClock:
    """``time.time()``, plus however far it was moved ahead."""

    def __init__(self) -> None:
        self.ahead = 0.0

    def __call__(self) -> float:
        return time.time() + self.ahead

    def reach(self, at: float) -> None:
        """From now on, it is at least ``at`` (epoch seconds)."""
        self.ahead = max(self.ahead, at - time.time())
