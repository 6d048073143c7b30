"""One turn of a session: the crash-safety rules every trigger goes through, written once.

A start (``/shop``, the weekly schedule), a click and a change are each a :class:`Step`; a future
trigger (a reminder, an expiry) is one more. :func:`take_turn` runs a step like this:

    1. take the session lock and resume the latest checkpoint
    (``workflow.engine.respond.open_session``);
    2. the step acts on the run: starts it, answers its pending request, or refuses (changing
       nothing); or finds its work already done (a redelivery: Lambda's retry, a second click);
    3. a redelivery compares the receipt with the latest checkpoint: the channel shows it, and
       the step says so (or nothing); the channel is behind (the process that did the work died
       before telling Slack, perhaps between two checkpoints), and the saved work is run on and
       what the latest checkpoint holds is shown (:func:`catch_up`);
    4. a turn that approved a basket places its order, once (``bot.steps.order``: the order
       record is written before the destination is called);
    5. Slack is told inside the lock (``Outbox.deliver``), new messages before the answered
       basket's update; around it the turn disarms an answered basket's timers and arms a
       posted one's (``BasketTimers``: the outbox only talks to Slack);
    6. the receipt is written last, and only when the channel shows everything (a turn that
       ended the session writes its outcome record instead: ``bot.steps.record``);
    7. the lock is released, however the steps above ended; a failure anywhere becomes the
       step's own short message (``Step.refused``), never an exception Bolt would swallow.

A process that dies anywhere therefore leaves either nothing done, or a checkpoint ahead of the
receipt, which the next delivery of any step for that session repairs.
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Callable
from dataclasses import dataclass, replace
from typing import Protocol

from bot.logs import log_context
from bot.orders.place import OrderDesk
from bot.records.drafts import S3Drafts
from bot.records.history import History
from bot.records.receipts import Receipts
from bot.records.timers import BasketTimers
from bot.slack.delivery import Delivered, Where
from bot.slack.outbox import Outbox
from bot.slack.outcome import Outcome, Report, Retired
from workflow.engine.events import WorkflowEvent
from workflow.engine.respond import lock_taken_by, open_session
from workflow.engine.runner import Run, RunStatus
from workflow.engine.versions import WorkflowVersions
from workflow.errors import DuplicateDelivery, SessionBusy, StoreError, WorkflowError
from workflow.persistence.checkpoint import AnsweredRequest
from workflow.persistence.lock import SessionLock
from workflow.persistence.session import SessionCheckpoints

from .order import place_order
from .record import ended_name, record_turn
from .whom import as_shopped

log = logging.getLogger(__name__)

LOCK_POLL_FIRST = 0.2  # seconds before a busy lock is tried again; doubled each time
LOCK_POLL_MAX = 1.5


@dataclass(frozen=True)
class Redelivered:
    """The step's work was done before; ``answered`` is the request it answered, if any."""

    answered: AnsweredRequest | None = None


@dataclass(frozen=True)
class Sessions:
    """What a turn needs, built once per cold start (``Runtime.sessions``)."""

    workflow: Callable[[], WorkflowVersions]
    checkpoints: Callable[[str, str], SessionCheckpoints]
    lock: SessionLock
    lock_ttl_seconds: float
    receipts: Receipts
    outbox: Outbox
    history: History
    timers: BasketTimers
    orders: OrderDesk | None = None  # where an approved basket goes (None: nowhere, a test's)
    lock_wait_seconds: float = 0.0  # how long to wait for a lock another holds (``_waits``)
    clock: Callable[[], float] = time.time  # the bot's (``Runtime.clock``): when an approval holds
    offline: bool = False  # the offline shopper writes its baskets: its default number shows
    # Where a /shop's basket 1 is shown while it is written (``bot.steps.drafting``); None: not.
    drafts: S3Drafts | None = None


class Step(Protocol):
    """What one trigger does inside the session lock, and what it says in each case."""

    @property
    def owner(self) -> str:
        """Who holds the lock, for its object and the logs."""
        ...

    @property
    def work(self) -> str:
        """What this step does, the same in every retry of it (Lambda's redelivery of the same
        event), so that a retry takes over the lock of its own dead attempt ("": never)."""
        ...

    async def act(
        self, run: Run | None, workflow: WorkflowVersions, checkpoints: SessionCheckpoints
    ) -> Outcome | Redelivered:
        """Start or answer the run (None: the session has no checkpoint yet)."""
        ...

    @property
    def patient(self) -> bool:
        """Whether this step waits for its own earlier click's lock too (an edit: its modal
        has closed, so nothing else would bring it back); any step waits for another's."""
        ...

    def up_to_date(self, done: Redelivered) -> Outcome:
        """A redelivery that finds the channel showing the latest checkpoint."""
        ...

    def caught_up(self, run: Run, events: list[WorkflowEvent], done: Redelivered) -> Outcome:
        """What to show once a redelivery has run on the saved work of a lost process."""
        ...

    def failed(self, error: BaseException | None) -> Outcome:
        """The run failed (the model stopped early, a checkpoint could not be written); the
        request it was answering stays pending in the latest checkpoint."""
        ...

    def refused(self, error: Exception) -> Outcome:
        """The turn could not be taken or failed: busy, gone, tampered, S3 down, a bug."""
        ...


async def take_turn(sessions: Sessions, where: Where, step: Step) -> None:
    """Run ``step`` on the session at ``where`` under its lock, and tell Slack what it did."""
    with log_context(tenant=where.tenant, session=where.session_id):
        outcome: Outcome = None
        try:
            await _when_free(sessions, where, step)
            return
        except DuplicateDelivery:
            # The same event, delivered twice at once, is being answered by the other delivery:
            # nothing is said twice. Raised, so that Lambda retries this one a minute later (the
            # other done: nothing to do; the other dead: its lock is taken over then).
            log.warning("the same work is being done by another delivery; retried later")
            raise
        except SessionBusy as exc:
            log.info("session busy: %s", exc)
            outcome = step.refused(exc)
        except WorkflowError as exc:
            log.error("the turn failed: %s: %s", type(exc).__name__, exc)
            outcome = step.refused(exc)
        except Exception as exc:  # noqa: BLE001 - Bolt would swallow it; the person must hear
            log.exception("the turn failed")
            outcome = step.refused(exc)
        tell_slack(sessions, where, outcome)
        if isinstance(outcome, Retired):  # it waits on nothing now (nor on the Home tab)
            try:
                await asyncio.to_thread(sessions.receipts.forget, where.tenant, where.session_id)
            except StoreError as exc:
                log.error("could not forget the retired basket's receipt: %s", exc)


async def _when_free(sessions: Sessions, where: Where, step: Step) -> None:
    """The turn under the session lock, waiting for it while someone else holds it.

    Two answers at the same instant (two approvers, an edit and an approval): the second waits
    for the first (polling the lock with backoff, at most ``Sessions.lock_wait_seconds``, two S3
    requests a try) and then acts on the state the first left: its approval counted with the
    other, its edit applied to the basket as it is now, or told who answered. SessionBusy only
    once that time is up, or at once for a person's second click while their first is being
    answered (unless the step is :attr:`Step.patient`)."""
    checkpoints = sessions.checkpoints(where.tenant, where.session_id)
    workflow = sessions.workflow()
    give_up = time.monotonic() + sessions.lock_wait_seconds
    pause, entered = LOCK_POLL_FIRST, False
    while True:
        try:
            async with open_session(
                workflow,
                checkpoints,
                sessions.lock,
                owner=step.owner,
                ttl_seconds=sessions.lock_ttl_seconds,
                work=step.work,
            ) as run:
                entered = True
                result = await step.act(run, workflow, checkpoints)
                if isinstance(result, Redelivered):
                    result = await catch_up(sessions, where, checkpoints, run, step, result)
                ended = ended_name(checkpoints)
                result = await place_order(sessions.orders, where, result, ended)
                delivered = tell_slack(sessions, where, result)
                await record_turn(
                    sessions.history,
                    sessions.receipts,
                    checkpoints,
                    where,
                    result,
                    delivered,
                    sessions.clock,
                )
            return
        except SessionBusy as busy:
            if isinstance(busy, DuplicateDelivery):
                raise  # never waited for: the other delivery says everything (take_turn)
            own = lock_taken_by(busy) == step.owner and not step.patient
            if entered or own or time.monotonic() + pause > give_up:
                raise
            log.info("session busy (%s): waiting %.2f s", lock_taken_by(busy) or "?", pause)
        await asyncio.sleep(pause)
        pause = min(pause * 2, LOCK_POLL_MAX)


def tell_slack(sessions: Sessions, where: Where, outcome: Outcome) -> Delivered:
    """Say ``outcome`` in Slack; an answered basket's timers go first, and each basket posted
    gets its first timer once Slack has its message."""
    if isinstance(outcome, Report) and sessions.offline:  # how many it shopped for
        outcome = replace(outcome, household=as_shopped(outcome.household))
    mark = outcome.mark if isinstance(outcome, Report) else None
    if mark is not None and mark.request_id:
        sessions.timers.disarm(where.tenant, where.session_id, mark.request_id)
    delivered = sessions.outbox.deliver(where, outcome)
    for posted in delivered.posted:
        if posted.held_until is not None:  # its one timer: the order, unless Undo comes first
            sessions.timers.arm_order(
                where.tenant,
                where.session_id,
                where.channel,
                posted.request_id,
                posted.ts,
                posted.held_until,
                approved_at=posted.at,
            )
            continue
        sessions.timers.arm(
            where.tenant, where.session_id, where.channel, posted.request_id, posted.ts, posted.at
        )
    return delivered


async def catch_up(
    sessions: Sessions,
    where: Where,
    checkpoints: SessionCheckpoints,
    run: Run | None,
    step: Step,
    done: Redelivered,
) -> Outcome:
    """A redelivery: nothing to do if the channel shows the latest checkpoint; otherwise run on
    the saved work (a process may have died between two of its checkpoints) and show it."""
    if run is None:  # a step found its work done in a session that has no checkpoint: a bug
        raise LookupError("a redelivery on a session with no checkpoint")
    tenant, session = checkpoints.tenant_id, checkpoints.session_id
    shown = await asyncio.to_thread(sessions.receipts.shown, tenant, session)
    latest = checkpoints.last
    if latest is None or shown == latest.checkpoint_id:
        return step.up_to_date(done)
    if not run.pending_requests:  # perhaps ended: its outcome record is its receipt
        ended = await asyncio.to_thread(sessions.history.read, tenant, session, latest.created_at)
        if ended is not None and ended.checkpoint_id == latest.checkpoint_id and ended.shown:
            return step.up_to_date(done)
    log.warning("the channel is behind checkpoint %s; catching up", latest.checkpoint_id)
    events = [event async for event in run.watch()]
    if run.status is RunStatus.FAILED:
        log.error("finishing the saved run failed: %r", run.error)
        return step.failed(run.error)
    outcome = step.caught_up(run, events or run.pending_events(), done)
    if sessions.drafts is None:
        return outcome
    from .change_drafts import caught_up_report  # a change's draft, if one was left showing
    from .drafting import Drafting

    drafting = Drafting(sessions.drafts, sessions.outbox, where)
    return await asyncio.to_thread(caught_up_report, drafting, run, outcome)
