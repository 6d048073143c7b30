"""Placing an order exactly once: the order record around the destination's call.

The order step calls :meth:`OrderDesk.place` under the session lock, after the checkpoint that
approved the basket was written and before Slack is told. The timeline of one order, with the
process dying at each point (what the next delivery, a Lambda retry or any click, finds):

    1. create the record ``placing`` (If-None-Match)     died before: nothing; the next one
                                                         starts here
    2. call the destination, with the order ID as its    died before or during: ``placing``,
       idempotency key                                   outcome unknown (3 below)
    3. record its answer ``placed`` (If-Match)           died before: ``placing``, made; the
                                                         next finds it (canvas) or calls again
                                                         with the same key (webhook, Instacart)
    4. Slack is told (the turn), from the record         died before: ``placed``: the next
                                                         shows the record, calling nothing

A record found ``placing`` is resumed (:meth:`OrderDesk._resume`): a destination that can find
what an earlier attempt made (``find(order, since)``: a canvas, by the order's reference in its
title) is asked first,
and adopts it; otherwise the call is made again with the same order ID, which a webhook receiver
dedupes and an idempotent API honours. A record found ``placed`` or ``failed`` is the answer,
and nothing is called (a failure is placed again only by :meth:`OrderDesk.retry`, the thread's
Retry button).

A destination that does not ``repeats_safely`` (a Kroger cart: no idempotency key, and a cart
cannot be read back) is never called again on its own: an attempt found ``placing``, or one
whose call may have happened (:class:`OutcomeUnknown`), is recorded ``failed`` with the reason
saying so (:data:`MAY_BE_THERE`) and a Retry, which only the person can press. The cart's
lines are fixed by the first attempt (the record's ``cart``), so a Retry sends the same.

Errors: :class:`~bot.records.orders.OrderRecordDamaged` (a record that does not verify: nothing
is placed) and ``StoreError`` (S3) go up to the turn; a destination's own errors end in a
``failed`` record (refused, down) or leave ``placing`` (outcome unknown), and are said in the
thread with a Retry button either way.
"""

from __future__ import annotations

import dataclasses
import logging
import time
from collections.abc import Callable

from bot import metrics
from bot.records.orders import Found, OrderRecord, OrderRecordDamaged, Orders
from workflow.errors import StoreError

from .order import Destination, DestinationRefused, Order, OrderError, OutcomeUnknown, Placed

log = logging.getLogger(__name__)

# Said in the thread when an attempt on a destination that cannot repeat an order safely may
# have gone through: the person looks, then chooses.
MAY_BE_THERE = (
    "it is not known whether Kroger added these: they may already be in the cart. Look in the "
    "cart before you press Retry, which adds them again"
)


def as_recorded(order: Order, record: OrderRecord) -> Order:
    """``order`` as its first attempt sent it: the cart's lines and whose cart, from the record
    (a Retry rebuilds the order from the outcome record, which keeps no prices)."""
    if record.destination != "kroger":
        return order
    return dataclasses.replace(
        order, cart=record.cart, left_out=record.left_out, cart_person=record.person
    )


KIND_WORDS = {
    "canvas": "a Slack canvas",
    "instacart": "an Instacart page",
    "webhook": "the household's webhook",
    "kroger": "a Kroger cart",
}


class RetryRefused(Exception):
    """A Retry the desk will not make; ``reason`` says why, for the person who pressed it."""

    def __init__(self, reason: str) -> None:
        super().__init__(reason)
        self.reason = reason


class DestinationChanged(RetryRefused):
    """An order first tried at one destination, the workspace's orders going to another now:
    it is not sent there (its record, its cart's lines and what the thread says are the first
    destination's). ``reason`` says so, for the person."""

    def __init__(self, was: str, now: str) -> None:
        super().__init__(
            f"This order was for {KIND_WORDS.get(was, was)}, and orders now go to "
            f"{KIND_WORDS.get(now, now)}, so it was not sent again. Set where orders go back in "
            "Settings to retry it, or order the basket again from the Home tab."
        )


class NotYourCart(RetryRefused):
    """A Retry of a Kroger cart order by someone other than the cart's owner: only they can look
    in their cart first (an add cannot be read back), so only they choose to add again."""

    def __init__(self, person: str) -> None:  # a user ID the record checked: a safe mention
        super().__init__(
            f"Only <@{person}> can add these to their Kroger cart again: they can look in it "
            "first, so the choice is theirs."
        )


class OrderDesk:
    """Where orders go (``destination``, a workspace's) and their records (``orders``)."""

    def __init__(
        self,
        orders: Orders,
        destination: Destination,
        clock: Callable[[], float] = time.time,
    ) -> None:
        self.orders = orders
        self.destination = destination
        self.clock = clock

    def place(self, order: Order) -> OrderRecord:
        """Place ``order`` unless its record says it was: the record as it stands after."""
        whose = getattr(self.destination, "whose", None)
        if whose is not None and not order.cart_person:
            order = dataclasses.replace(order, cart_person=whose(order))
        record = OrderRecord(
            session=order.order_id,
            destination=self.destination.kind,
            state="placing",
            attempt=1,
            started_at=int(self.clock()),
            sha256=order.basket_sha256,
            items=len(order.lines),
            cart=order.cart,
            left_out=order.left_out,
            person=order.cart_person,
        )
        found = self.orders.create(order.team, record)
        if found is not None:
            return self._call(order, found)
        found = self._read(order)
        if found.record.sha256 != record.sha256:  # one order per session, ever
            raise OrderRecordDamaged(f"the order record of {order.order_id} is of another basket")
        if found.record.state != "placing":
            return found.record
        return self._resume(as_recorded(order, found.record), found)

    def retry(self, order: Order, by: str = "") -> OrderRecord:
        """The thread's Retry (pressed ``by`` someone): a failed order is placed again (attempt
        + 1); one placed, or one being placed, is left as it is. Raises
        :class:`DestinationChanged` for an order begun at another destination than today's, and
        :class:`NotYourCart` for a cart order retried by someone else than its owner."""
        found = self._read(order)
        if found.record.destination != self.destination.kind:
            raise DestinationChanged(found.record.destination, self.destination.kind)
        person = found.record.person
        if found.record.state == "failed" and person and by and by != person:
            raise NotYourCart(person)
        order = as_recorded(order, found.record)
        if found.record.state == "placing":
            return self._resume(order, found)
        if found.record.state != "failed":
            return found.record
        again = found.record.but(
            state="placing",
            attempt=found.record.attempt + 1,
            started_at=int(self.clock()),
            reason="",
            retry=False,
        )
        replaced = self.orders.replace(order.team, found, again)
        if replaced is None:  # changed under us: a lease lost; the next delivery resumes
            raise StoreError("the order record changed while it was retried")
        return self._call(order, replaced)

    def _read(self, order: Order) -> Found:
        found = self.orders.read(order.team, order.order_id)
        if found is None:  # created a moment ago by someone, and gone: nothing to trust
            raise StoreError(f"the order record of {order.order_id} vanished")
        return found

    def _resume(self, order: Order, found: Found) -> OrderRecord:
        """An attempt whose outcome nobody recorded: adopt what it made, or call again (or,
        where that could place it twice, say so and leave it to the person). One begun at
        another destination than today's is not sent to today's: its outcome is said unknown."""
        if found.record.destination != self.destination.kind:
            log.error("order %s: begun at another destination; not resumed", order.order_id)
            was = KIND_WORDS.get(found.record.destination, found.record.destination)
            reason = f"where orders go changed while it was sent to {was}: look there"
            return self._write(order, found, found.record.but(state="failed", reason=reason))
        if not self.destination.repeats_safely:
            log.error("order %s: an earlier attempt's outcome is unknown", order.order_id)
            record = found.record.but(state="failed", reason=MAY_BE_THERE, retry=True)
            return self._write(order, found, record)
        find = getattr(self.destination, "find", None)
        if find is not None:
            try:
                made = find(order, found.record.started_at)
            except OrderError as exc:
                return self._failed(order, found, exc)
            if made is not None:
                log.info("adopting what an earlier attempt made: %s", made.ref)
                return self._done(order, found, made)
        log.warning(
            "order %s: an earlier attempt's outcome is unknown; called again", order.order_id
        )
        return self._call(order, found)

    def _call(self, order: Order, found: Found) -> OrderRecord:
        try:
            placed = self.destination.place(order)
        except OutcomeUnknown as exc:  # stays placing: the next attempt resumes it
            log.error("order %s: outcome unknown: %s", order.order_id, exc.reason)
            if not self.destination.repeats_safely:
                record = found.record.but(state="failed", reason=MAY_BE_THERE, retry=True)
                return self._write(order, found, record)
            metrics.order("unknown", found.record.destination)
            return found.record.but(reason=exc.reason, retry=True)
        except OrderError as exc:
            return self._failed(order, found, exc)
        return self._done(order, found, placed)

    def _done(self, order: Order, found: Found, placed: Placed) -> OrderRecord:
        record = found.record.but(state="placed", url=placed.url, ref=placed.ref[:200])
        return self._write(order, found, record)

    def _failed(self, order: Order, found: Found, exc: OrderError) -> OrderRecord:
        log.error("order %s failed: %s", order.order_id, exc.reason)
        retry = not isinstance(exc, DestinationRefused)
        record = found.record.but(state="failed", reason=exc.reason[:500], retry=retry)
        return self._write(order, found, record)

    def _write(self, order: Order, found: Found, record: OrderRecord) -> OrderRecord:
        if self.orders.replace(order.team, found, record) is None:
            raise StoreError("the order record changed while the order was placed")
        # Counted once: only the writer whose If-Match won gets here with this state.
        unknown = record.state == "failed" and record.reason == MAY_BE_THERE
        metrics.order("unknown" if unknown else record.state, record.destination)
        return record
