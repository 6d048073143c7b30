"""Where an approved basket becomes an order: inside the turn, after the checkpoint that approved
it and before Slack is told (``bot.steps.turn``).

Any turn whose outcome orders a basket comes through here: the click that completed the
approvals, Lambda's retry of it, a later click that catches up a channel left behind. Each asks
the workspace's :class:`~bot.orders.place.OrderDesk`, which writes the session's order record
before calling the destination and returns what the record says after, so the thread shows the
one order there is (its link, or why it did not go, with Retry) however often it is asked.
"""

from __future__ import annotations

import asyncio
import dataclasses
import logging
import time
from typing import TYPE_CHECKING

from bot.orders.order import CartLine, Order, week_title
from bot.orders.place import OrderDesk
from bot.records.orders import OrderRecord, OrderRecordDamaged
from bot.slack.blocks import Ref
from bot.slack.delivery import Where
from bot.slack.outcome import OrderShown, Outcome, Report
from workflow.shop.basket import Basket, Item

if TYPE_CHECKING:
    from workflow.shop.pricing import PricedBasket

log = logging.getLogger(__name__)

DAMAGED = "its order record is damaged, so nothing more was sent"


def order_of(
    report: Report, basket: Basket, where: Where, now: float | None = None, carts: bool = False
) -> Order:
    """The order a report approves: the basket as approved, who asked, who approved, when
    (``now`` by the desk's clock, unless the mark says when); for a cart (``carts``), its
    products and the items without one."""
    mark = report.mark
    assert mark is not None  # an ordered basket is an answered one
    approvers = mark.approvals or ((mark.by,) if mark.by else ())
    at = int(time.time() if now is None else now) if mark.at is None else mark.at
    cart, left_out = cart_of(basket.items, mark.prices or report.prices) if carts else ((), ())
    return Order(
        order_id=where.session_id,
        team=where.tenant,
        channel=where.channel,
        title=week_title(at, report.request),
        lines=tuple(basket.items),
        requested_by=report.requested_by,
        approved_by=tuple(approvers),
        approved_at=at,
        thread_ts=mark.ts,
        cart=cart,
        left_out=left_out,
    )


def cart_of(
    items: list[Item], prices: PricedBasket | None
) -> tuple[tuple[CartLine, ...], tuple[str, ...]]:
    """The products ``items`` were priced with (each UPC once, how many summed, in the basket's
    order) and the names of the items that had none (not priced at all: every item)."""
    counts: dict[str, int] = {}
    left_out: list[str] = []
    for item in items:
        line = prices.line_for(item) if prices is not None else None
        if line is None or line.offer is None:
            left_out.append(item.name)
        else:
            counts[line.offer.upc] = counts.get(line.offer.upc, 0) + line.count
    return tuple(counts.items()), tuple(left_out)


def shown(record: OrderRecord, ended: str = "") -> OrderShown:
    """What the thread says of the record: placed (a link), or not (why, and Retry, whose
    value names the session and its outcome record ``ended``)."""
    failed = ""
    if record.state == "failed":
        failed = record.reason or "the destination refused it"
    elif record.state == "placing":
        failed = record.reason or "it is not known yet whether it went through"
    return OrderShown(
        destination=record.destination,
        url=record.url,
        failed=failed,
        retry=Ref(record.session, ended).to_value() if failed and ended else "",
        sha256=record.sha256,
        person=record.person,
        products=len(record.cart),
        left_out=record.left_out,
    )


async def place_order(
    desk: OrderDesk | None, where: Where, outcome: Outcome, ended: str = ""
) -> Outcome:
    """``outcome`` with its order placed, when it orders a basket; as it was otherwise.
    ``ended`` names the outcome record the turn will write (the Retry button reads it)."""
    if desk is None or not isinstance(outcome, Report):
        return outcome
    basket = outcome.ordered
    if basket is None:
        return outcome
    order = order_of(outcome, basket, where, desk.clock(), desk.destination.kind == "kroger")
    try:
        record = await asyncio.to_thread(desk.place, order)
    except OrderRecordDamaged as exc:
        log.error("%s", exc)
        failed = OrderShown(desk.destination.kind, failed=DAMAGED)  # no Retry: it would not help
        return dataclasses.replace(outcome, order=failed)
    return dataclasses.replace(outcome, order=shown(record, ended))
