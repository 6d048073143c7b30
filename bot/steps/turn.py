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
    6. the receipt is written last, and only when the channel shows everything;
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
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Protocol

from bot.logs import log_context
from bot.orders.place import OrderDesk
from bot.records.history import Ended, History, Kind, record_name
from bot.records.receipts import Receipts, Waiting, request_excerpt
from bot.records.timers import BasketTimers
from bot.slack.delivery import Delivered, Where
from bot.slack.outbox import Outbox
from bot.slack.outcome import APPROVED, EXPIRED, Failed, Outcome, Report, Retired
from workflow.engine.events import WorkflowEvent
from workflow.engine.respond import lock_taken_by, open_session
from workflow.engine.runner import Run, RunStatus
from workflow.engine.versions import WorkflowVersions
from workflow.errors import SessionBusy, StoreError, WorkflowError
from workflow.persistence.checkpoint import AnsweredRequest
from workflow.persistence.lock import SessionLock
from workflow.persistence.session import SessionCheckpoints

from .order import place_order

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
                    result = await catch_up(sessions, checkpoints, run, step, result)
                ended = _ended_name(checkpoints)
                result = await place_order(sessions.orders, where, result, ended)
                delivered = tell_slack(sessions, where, result)
                await _record(sessions, checkpoints, where, result, delivered)
            return
        except SessionBusy as busy:
            own = lock_taken_by(busy) == step.owner and not step.patient
            if entered or own or time.monotonic() + pause > give_up:
                raise
            log.info("session busy (%s): waiting %.2f s", lock_taken_by(busy) or "?", pause)
        await asyncio.sleep(pause)
        pause = min(pause * 2, LOCK_POLL_MAX)


def _ended_name(checkpoints: SessionCheckpoints) -> str:
    """The name of the outcome record a turn that ends the session writes (its latest
    checkpoint's time): what a Retry of its order reads back."""
    latest = checkpoints.last
    return "" if latest is None else record_name(checkpoints.session_id, latest.created_at)


def tell_slack(sessions: Sessions, where: Where, outcome: Outcome) -> Delivered:
    """Say ``outcome`` in Slack; an answered basket's timers go first, and each basket posted
    gets its first timer once Slack has its message."""
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
            )
            continue
        sessions.timers.arm(
            where.tenant, where.session_id, where.channel, posted.request_id, posted.ts, posted.at
        )
    return delivered


async def catch_up(
    sessions: Sessions,
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
    return step.caught_up(run, events or run.pending_events(), done)


async def _record_failed(sessions: Sessions, where: Where, failed: Failed) -> None:
    """A first basket that failed ends its session: kept as a ``failed`` outcome."""
    now = datetime.now(UTC)
    ended = Ended(
        session=where.session_id,
        checkpoint_id="",
        kind="failed",
        at=int(now.timestamp()),
        answered_by="",
        requested_by=failed.requested_by,
        request=failed.request[:3000],
        round=1,
        items=[],
        channel=where.channel,
        ts="",
    )
    try:
        await asyncio.to_thread(sessions.history.write, where.tenant, ended, now)
    except StoreError as exc:
        log.error("could not record the failed start: %s", exc)


async def _record(
    sessions: Sessions,
    checkpoints: SessionCheckpoints,
    where: Where,
    outcome: Outcome,
    delivered: Delivered,
) -> None:
    """After Slack was told: the receipt (which checkpoint the channel shows now, and the
    basket it waits on, for the Home tab), when the channel shows all of it. A turn that ended
    the session writes its outcome record instead, shown or not, which is its receipt from then
    on once shown (one PUT either way: a later full show writes the same record again)."""
    if isinstance(outcome, Failed):
        await _record_failed(sessions, where, outcome)
    latest = checkpoints.last
    if latest is None:
        return
    tenant, session = checkpoints.tenant_id, checkpoints.session_id
    ended = None
    if isinstance(outcome, Report):
        ended = ended_of(outcome, where, latest.checkpoint_id, shown=bool(delivered))
    if ended is None and not delivered:
        return
    posted = delivered.posted
    try:
        if ended is not None:
            await asyncio.to_thread(sessions.history.write, tenant, ended, latest.created_at)
        else:
            waiting = None
            if posted and isinstance(outcome, Report):
                last = posted[-1]
                waiting = Waiting(
                    request_id=last.request_id,
                    channel=where.channel,
                    ts=last.ts,
                    round=last.round,
                    requested_by=outcome.requested_by,
                    posted_at=last.at,
                    request=request_excerpt(outcome.request),
                )
            await asyncio.to_thread(
                sessions.receipts.mark_shown, tenant, session, latest.checkpoint_id, waiting
            )
    except StoreError as exc:  # only costs a repost by the next click
        log.error("could not record the shown checkpoint: %s", exc)


def ended_of(report: Report, where: Where, checkpoint_id: str, *, shown: bool) -> Ended | None:
    """The outcome record of a turn that ended its session (None for any other turn)."""
    mark = report.mark
    if not report.ended or mark is None:
        return None
    kinds: dict[str, Kind] = {APPROVED: "ordered", EXPIRED: "expired"}
    return Ended(
        session=where.session_id,
        checkpoint_id=checkpoint_id,
        kind=kinds.get(mark.verdict, "rejected"),
        at=int(time.time()) if mark.at is None else mark.at,
        answered_by=mark.by,
        requested_by=report.requested_by,
        request=report.request,
        round=mark.basket.round,
        items=mark.basket.to_json()["items"],
        channel=where.channel,
        ts=mark.ts,
        shown=shown,
        approved_by=mark.approvals if mark.verdict == APPROVED else (),
        **_order_fields(report),
    )


def _order_fields(report: Report) -> dict[str, str]:
    """What the outcome record keeps of the order: where it went, its link, its basket."""
    order = report.order
    if order is None or report.ordered is None:
        return {}
    url = "" if order.failed else order.url
    return {"destination": order.destination, "order_url": url, "sha256": order.sha256}
