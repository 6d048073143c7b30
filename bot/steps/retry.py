"""Where the thread's Retry button places an order that did not go through, once more.

A Retry is a turn of its session like any click (the session lock: never beside the approve
that is still placing it, nor beside another Retry), but it answers no request: it reads the
session's outcome record (named by the button), asks the workspace's
:class:`~bot.orders.place.OrderDesk` to place the order again (a failed record is written
``placing`` with the next attempt, ``If-Match``; a placed one is only shown), rewrites the
outcome record with where it went, and then the message with the Retry button says so. A second
Retry, a double click, or one after the order went, calls nothing and shows the order there is.
"""

from __future__ import annotations

import asyncio
import dataclasses
import logging

from bot.orders.order import Order, week_title
from bot.orders.place import OrderDesk, RetryRefused
from bot.records.history import Ended, History
from bot.slack.blocks import count
from bot.slack.delivery import Where
from bot.slack.outcome import Outcome, Reordered, Tell
from bot.slack.payloads import Click
from workflow.engine.events import WorkflowEvent
from workflow.engine.runner import Run
from workflow.engine.versions import WorkflowVersions
from workflow.persistence.session import SessionCheckpoints

from .order import shown
from .rules import Rules
from .turn import Redelivered, Sessions, take_turn

log = logging.getLogger(__name__)

NOTHING = "There is no order here to retry."
BUSY = "This order is being placed right now: its answer will show here."
FAILED = "The order could not be retried just now. Try again in a minute."


def order_of_ended(ended: Ended, where: Where) -> Order:
    """The order an outcome record keeps: the same ID, lines and approvers as the first time,
    so the destination is sent the same order with the same idempotency key."""
    basket = ended.basket()
    return Order(
        order_id=ended.session,
        team=where.tenant,
        channel=ended.channel,
        title=week_title(ended.at, ended.request),
        lines=tuple(basket.items),
        requested_by=ended.requested_by,
        approved_by=ended.approved_by or ((ended.answered_by,) if ended.answered_by else ()),
        approved_at=ended.at,
        thread_ts=ended.ts,
    )


@dataclasses.dataclass(frozen=True)
class RetryOrder:
    """The Retry click on the message at ``click.message_ts``; ``click.ref`` names the session
    and its outcome record."""

    click: Click
    desk: OrderDesk
    history: History

    @property
    def owner(self) -> str:
        return self.click.user

    @property
    def work(self) -> str:
        return f"retry:{self.click.delivery}" if self.click.delivery else ""

    @property
    def patient(self) -> bool:
        return False

    async def act(
        self, run: Run | None, workflow: WorkflowVersions, checkpoints: SessionCheckpoints
    ) -> Outcome | Redelivered:
        click, tenant = self.click, self.click.tenant
        name = click.ref.request_id
        ended = await asyncio.to_thread(self.history.read_name, tenant, name)
        if ended is None or ended.session != click.ref.session_id or ended.kind != "ordered":
            return Tell(click.user, NOTHING)
        where = Where(tenant, ended.session, ended.channel)
        order = order_of_ended(ended, where)
        try:
            record = await asyncio.to_thread(self.desk.retry, order, click.user)
        except RetryRefused as exc:
            return Tell(click.user, exc.reason)
        said = shown(record, name)
        url = "" if said.failed else said.url
        again = dataclasses.replace(
            ended, destination=said.destination, order_url=url, sha256=said.sha256
        )
        if again != ended:
            await asyncio.to_thread(self.history.rewrite, tenant, name, again)
        text = f"Ordered {count(len(order.lines))}."
        return Reordered(click.message_ts, text, list(ended.basket().items), said)

    def up_to_date(self, done: Redelivered) -> Outcome:
        return None

    def caught_up(self, run: Run, events: list[WorkflowEvent], done: Redelivered) -> Outcome:
        return None

    def failed(self, error: BaseException | None) -> Outcome:
        return Tell(self.click.user, FAILED)

    def refused(self, error: Exception) -> Outcome:
        from workflow.errors import SessionBusy

        return Tell(self.click.user, BUSY if isinstance(error, SessionBusy) else FAILED)


async def retry_order(sessions: Sessions, rules: Rules, click: Click) -> None:
    """Place the clicked order again, if it did not go through; say where it went."""
    refusal = rules.may_answer(click.user)
    if refusal or sessions.orders is None or not click.ref.session_id:
        sessions.outbox.tell(click.channel, click.user, refusal or NOTHING)
        return
    where = Where(click.tenant, click.ref.session_id, click.channel)
    step = RetryOrder(click, sessions.orders, sessions.history)
    await take_turn(sessions, where, step)
