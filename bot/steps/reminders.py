"""Where a timer becomes a workflow response: a reminder in the basket's thread, or its expiry.

A timer (``bot.records.timers``) arrives as a new invocation, like a click, and is a
:class:`bot.steps.turn.Step` of its session: ``bot.steps.turn`` takes the session lock and resumes
the latest checkpoint, and
:class:`Fire` acts only if the timer's request is still the pending one:

- a **reminder** arms the next timer, then replies in the basket's thread, mentioning who can
  answer (``APPROVER_IDS``, else the requester; with a quorum, the approvers who have not
  approved yet, and how many more approvals it needs), once per reminder however often it is
  delivered (a marker object beside the session's checkpoints);
- the **order** timer of a basket held for its undo window gives the held approval again,
  released, so the basket is ordered (``bot.steps.order`` places it, once); one that finds the
  basket asked again (an Undo came first) does nothing;
- the **expiry** answers the pending request as expired (the audit trail records it, answered by
  ``weekly-shop``): the basket loses its buttons and says "Expired — nothing ordered", and the
  outcome is posted in its thread.

A timer delivered after the basket was answered does nothing. One that finds the session busy
(someone is answering it) raises :class:`TryLater`, so Lambda retries it. One delivered more
than :data:`EARLY_SECONDS` before its time (its signed ``at``: a replay, or a payload sent by
hand) acts on nothing: it is armed again for its time and the invocation ends. Scheduler, with
its flexible window off, delivers at the time or after, never before.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable
from dataclasses import dataclass

from bot import metrics
from bot.records.timers import Timer, TimerError, Timers
from bot.slack.blocks import people, slack_date
from bot.slack.delivery import Where
from bot.slack.outcome import APPROVED, EXPIRED, Mark, Outcome, Post, Report, outputs_of
from workflow.engine.events import WorkflowEvent
from workflow.engine.respond import answer_pending
from workflow.engine.runner import Run, RunStatus
from workflow.engine.versions import WorkflowVersions
from workflow.errors import CheckpointConflict, SessionBusy, StoreError
from workflow.persistence.session import SessionCheckpoints
from workflow.shop.basket import Basket, count
from workflow.shop.decision import BasketDecision
from workflow.shop.run_state import approvals_of, held_of, prices_of, shop_request

from .rules import Rules
from .turn import Redelivered, Sessions, take_turn
from .whom import household_line

log = logging.getLogger(__name__)

BOT = "weekly-shop"  # who answered an expired basket, in its audit trail
EARLY_SECONDS = 30  # a timer this much before its time still acts (clocks and Scheduler's second)
SETTINGS_WAIT_SECONDS = 3600  # a timer waiting for settings that can be read is tried this often
SETTINGS_WAIT_AT_MOST = 30 * 86400  # ... and for as long as its basket may live (the bucket's rule)


class TryLater(Exception):
    """The session was busy: raised out of the invocation so that Lambda retries the timer."""


@dataclass(frozen=True)
class Fire:
    """A timer's work on its session."""

    timer: Timer
    timers: Timers
    rules: Rules
    first_reminder: Callable[[Timer], bool]  # True the first time (``bot.records.receipts``)

    @property
    def owner(self) -> str:
        return BOT

    @property
    def work(self) -> str:
        t = self.timer
        return f"timer:{t.request}:{t.kind}{t.n}"

    @property
    def patient(self) -> bool:
        return False

    async def act(
        self, run: Run | None, workflow: WorkflowVersions, checkpoints: SessionCheckpoints
    ) -> Outcome | Redelivered:
        timer = self.timer
        if run is None:
            return None
        if timer.request not in run.pending_requests:
            answered = run.answered.get(timer.request)
            if timer.kind == "expire" and answered is not None and answered.by == BOT:
                return Redelivered(answered)  # this expiry's own answer: is Slack behind?
            if timer.kind == "order" and answered is not None and _released(answered.response):
                return Redelivered(answered)  # this order's own answer: is Slack behind?
            log.info("timer %s for a basket no longer waiting; nothing to do", self.work)
            return None
        if timer.kind == "remind":
            return await self._remind(run)
        if timer.kind == "order":
            return await self._order(run)
        return await self._expire(run)

    async def _order(self, run: Run) -> Outcome:
        """The undo window is over: the held approval is given again, released, and the
        basket is ordered (``bot.steps.order`` places it, once)."""
        timer = self.timer
        request = run.pending_requests[timer.request]
        held = held_of(run, request.data.round if isinstance(request.data, Basket) else None)
        if held is None:  # asked again since (Undo): this timer is not its
            log.info("order timer %s for a basket no longer held; nothing to do", self.work)
            return None
        answered = await answer_pending(
            run, timer.request, lambda _: held.released(), answered_by=held.approvals[-1]
        )
        if answered.run.status is RunStatus.FAILED:  # nothing saved: Lambda tries it again
            raise TryLater(f"{self.work}: the order failed: {answered.run.error!r}")
        approvals = tuple(dict.fromkeys(held.approvals))
        mark = Mark(
            timer.thread_ts,
            request.data,
            APPROVED,
            held.approvals[-1],
            at=self._approved_at,
            request_id=timer.request,
            approvals=approvals if len(approvals) > 1 else (),
            prices=prices_of(run, held.round),  # what was approved, at what total
        )
        return self._report(answered.events, outputs_of(answered.events), run, mark)

    @property
    def _approved_at(self) -> int | None:
        """When the held approval was given (the order timer's ``posted_at``): the answered
        basket keeps that time. None (now) for a timer armed before it said so (its
        ``posted_at`` was its ``at``)."""
        timer = self.timer
        return timer.posted_at if timer.kind == "order" and timer.posted_at < timer.at else None

    async def _remind(self, run: Run) -> Outcome:
        timer = self.timer
        following = timer.following(self.timers.plan)
        if following is not None:  # first, so a failure here is retried before anything is said
            await asyncio.to_thread(self.timers.arm, following)
        first = await asyncio.to_thread(self.first_reminder, timer)
        if not first:
            log.info("reminder %d was sent before; not again", timer.n)
            return None
        basket = run.pending_requests[timer.request].data
        return Post(self._reminder_text(run, basket), timer.thread_ts)

    def _reminder_text(self, run: Run, basket: object) -> str:
        request = shop_request(run)
        approved = approvals_of(run, basket.round if isinstance(basket, Basket) else None)
        who = sorted(self.rules.approvers - set(approved)) or (
            [request.requested_by]
            if request and request.requested_by and not self.rules.approvers
            else []
        )
        mentions = "".join(f"<@{u}> " for u in who)
        which = (
            f"Basket {basket.round} of {self.rules.max_rounds}"
            if isinstance(basket, Basket)
            else "This basket"
        )
        expires = self.timers.plan.expires_at(self.timer.posted_at)
        ends = f" It expires {slack_date(expires)} if nobody answers." if expires else ""
        needed = self.rules.quorum
        if needed <= 1:
            return f"{mentions}{which} is still waiting for an answer.{ends}"
        more = count(max(needed - len(approved), 1), "more approval")
        so_far = f" (approved by {people(approved)} so far)" if approved else ""
        return f"{mentions}{which} is still waiting for {more}{so_far}.{ends}"

    async def _expire(self, run: Run) -> Outcome:
        timer = self.timer
        answered = await answer_pending(
            run,
            timer.request,
            lambda request: BasketDecision.expired(request.data.round, timer.at),
            answered_by=BOT,
        )
        if answered.run.status is RunStatus.FAILED:  # nothing saved: Lambda tries it again
            raise TryLater(f"{self.work}: the expiry failed: {answered.run.error!r}")
        metrics.count("BasketsExpired")
        request = answered.run.answered[timer.request]
        return self._report(
            answered.events, outputs_of(answered.events), run, self._expired(request.data)
        )

    def _expired(self, basket: object) -> Mark | None:
        timer = self.timer
        if not isinstance(basket, Basket):
            return None
        return Mark(timer.thread_ts, basket, EXPIRED, BOT, at=timer.at, request_id=timer.request)

    def _report(
        self, events: list[WorkflowEvent], outputs: list[str], run: Run, mark: Mark | None
    ) -> Report:
        timer = self.timer
        asked = shop_request(run)
        requester = asked.requested_by if asked is not None else ""
        what = "was ordered" if mark is not None and mark.verdict == APPROVED else "expired"
        unposted = Post(f"This basket {what}, but I couldn't update it here.", timer.thread_ts)
        return Report(
            events,
            unposted,
            requester,
            outputs,
            thread_ts=timer.thread_ts,
            mark=mark,
            request=asked.text if asked is not None else "",
            household=household_line(asked) if asked is not None else "",
            ended=not run.pending_requests,
        )

    def up_to_date(self, done: Redelivered) -> Outcome:
        return None

    def caught_up(self, run: Run, events: list[WorkflowEvent], done: Redelivered) -> Outcome:
        outputs = [] if run.pending_requests else [str(o) for o in run.outputs[-1:]]
        answered = done.answered
        if answered is None:
            return self._report(events, outputs, run, None)
        decision = answered.response
        if isinstance(decision, BasketDecision) and decision.approved:  # the order's own answer
            approvals = tuple(dict.fromkeys(decision.approvals))
            mark = Mark(
                self.timer.thread_ts,
                answered.data,
                APPROVED,
                answered.by,
                at=self._approved_at,
                request_id=answered.request_id,
                approvals=approvals if len(approvals) > 1 else (),
                prices=prices_of(run, decision.round),
            )
            return self._report(events, outputs, run, mark)
        return self._report(events, outputs, run, self._expired(answered.data))

    def failed(self, error: BaseException | None) -> Outcome:
        """Finishing a lost expiry's saved run failed: Lambda tries the timer again."""
        raise TryLater(f"{self.work}: finishing the saved run failed: {error!r}")

    def refused(self, error: Exception) -> Outcome:
        """Busy, or S3 or Scheduler failing: raised, so Lambda retries the timer (and, once its
        retries are spent, sends it to the lost-runs queue). Anything else (a checkpoint that
        fails its checks, a retired version) would fail again: logged, and dropped."""
        if isinstance(error, TryLater):
            raise error
        if isinstance(error, SessionBusy | CheckpointConflict):
            raise TryLater(f"{self.work}: the session is busy") from error
        if isinstance(error, StoreError | TimerError):
            raise TryLater(f"{self.work}: {type(error).__name__}: {error}") from error
        log.error("timer %s dropped: %s: %s", self.work, type(error).__name__, error)
        return None


def _released(decision: object) -> bool:
    """An approval that ordered the basket (a held one, released by its timer)."""
    return (
        isinstance(decision, BasketDecision)
        and decision.approved
        and decision.quorum_reached
        and not decision.held
    )


async def fire(
    sessions: Sessions,
    timers: Timers,
    rules: Rules,
    timer: Timer,
    first_reminder: Callable[[Timer], bool],
) -> int:
    """Run ``timer`` on its session (``bot.handler`` verified its payload), if it is due: 0;
    else arm it again for its time (TimerError if that fails, so Lambda retries) and return
    how many seconds early it came, touching nothing else."""
    early = int(timer.at - timers.clock())
    if early > EARLY_SECONDS:
        log.warning(
            "timer %s:%s%d came %d s early: armed again", timer.request, timer.kind, timer.n, early
        )
        await asyncio.to_thread(timers.arm, timer)
        return early
    where = Where(timer.tenant, timer.session, timer.channel)
    await take_turn(sessions, where, Fire(timer, timers, rules, first_reminder))
    return 0


def wait_for_settings(timers: Timers, timer: Timer) -> bool:
    """A timer of a workspace whose settings cannot be read (``Rules.closed``) acts on nothing:
    no reminder naming the deploy's approvers, no held order sent where the deploy's defaults
    say. It is armed again ``SETTINGS_WAIT_SECONDS`` from now, so that once an admin saves the
    settings again it does what it would have (raises TimerError if that fails, so Lambda
    retries); one past ``SETTINGS_WAIT_AT_MOST`` after its time is dropped. Whether it was armed."""
    now = int(timers.clock())
    what = f"timer {timer.request}:{timer.kind}{timer.n}"
    if now - timer.at > SETTINGS_WAIT_AT_MOST:
        log.error("%s dropped: the workspace's settings could not be read for 30 days", what)
        return False
    log.error("%s held: the workspace's settings can't be read; armed again in an hour", what)
    timers.arm(timer, fire_at=now + SETTINGS_WAIT_SECONDS)
    return True
