"""What a turn writes once Slack was told: its receipt, or its outcome record (turn, line 6).

When the channel shows all of a turn, its receipt says which checkpoint it shows and which basket
waits, or is approved and held for its undo window, by whom, until when (``bot.records.receipts``,
for the next redelivery and the Home tab). A turn that ended its
session writes its outcome record instead (``bot.records.history``), shown or not: once shown,
that record is its receipt (``bot.steps.turn.catch_up`` reads it back), and its name
(:func:`ended_name`) is what a Retry of its order reads. A first basket that failed is kept as a
``failed`` record. A write that fails is logged, never raised: Slack was told already, and it only
costs a repost by the next click.
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Callable
from datetime import UTC, datetime

from bot.records.history import Ended, History, Kind, record_name
from bot.records.receipts import MAX_NAMED, Receipts, Waiting, request_excerpt
from bot.slack.delivery import Delivered, Where
from bot.slack.outcome import APPROVED, EXPIRED, Failed, Outcome, Report
from workflow.errors import StoreError
from workflow.persistence.session import SessionCheckpoints

log = logging.getLogger(__name__)


def ended_name(checkpoints: SessionCheckpoints) -> str:
    """The name of the outcome record a turn that ends the session writes (its latest
    checkpoint's time): what a Retry of its order reads back."""
    latest = checkpoints.last
    return "" if latest is None else record_name(checkpoints.session_id, latest.created_at)


async def record_turn(
    history: History,
    receipts: Receipts,
    checkpoints: SessionCheckpoints,
    where: Where,
    outcome: Outcome,
    delivered: Delivered,
    clock: Callable[[], float] = time.time,
) -> None:
    """After Slack was told: the receipt (which checkpoint the channel shows now, and the
    basket it waits on, for the Home tab), when the channel shows all of it. A turn that ended
    the session writes its outcome record instead, shown or not, which is its receipt from then
    on once shown (one PUT either way: a later full show writes the same record again)."""
    if isinstance(outcome, Failed):
        await _record_failed(history, where, outcome, clock)
    latest = checkpoints.last
    if latest is None:
        return
    tenant, session = checkpoints.tenant_id, checkpoints.session_id
    ended = None
    if isinstance(outcome, Report):
        ended = ended_of(outcome, where, latest.checkpoint_id, shown=bool(delivered), now=clock())
    if ended is None and not delivered:
        return
    posted = delivered.posted
    try:
        if ended is not None:
            await asyncio.to_thread(history.write, tenant, ended, latest.created_at)
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
                    held_until=last.held_until or 0,
                    approved_by=outcome.approvals[:MAX_NAMED] if last.held_until else (),
                )
            await asyncio.to_thread(
                receipts.mark_shown, tenant, session, latest.checkpoint_id, waiting
            )
    except StoreError as exc:  # only costs a repost by the next click
        log.error("could not record the shown checkpoint: %s", exc)


async def _record_failed(
    history: History, where: Where, failed: Failed, clock: Callable[[], float]
) -> None:
    """A first basket that failed ends its session: kept as a ``failed`` outcome."""
    now = datetime.fromtimestamp(clock(), UTC)
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
        await asyncio.to_thread(history.write, where.tenant, ended, now)
    except StoreError as exc:
        log.error("could not record the failed start: %s", exc)


def ended_of(
    report: Report, where: Where, checkpoint_id: str, *, shown: bool, now: float
) -> Ended | None:
    """The outcome record of a turn that ended its session (None for any other turn); ``now``
    by the bot's clock (``Sessions.clock``), for an answer that carries no time of its own."""
    mark = report.mark
    if not report.ended or mark is None:
        return None
    kinds: dict[str, Kind] = {APPROVED: "ordered", EXPIRED: "expired"}
    return Ended(
        session=where.session_id,
        checkpoint_id=checkpoint_id,
        kind=kinds.get(mark.verdict, "rejected"),
        at=int(now) if mark.at is None else mark.at,
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
