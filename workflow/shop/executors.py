"""The weekly-shop graph's executors: what each step does with the basket.

    write-basket    basket 1 from the week's request; a revised basket for a change; each
                    checked against what the household doesn't eat (``workflow.shop.check``)
    count-approval  keeps an approval that did not complete the quorum, or one held for the undo
                    window, and asks about the same basket again; an Undo lets go of them all
    edit-basket     a person's edit as the basket of the same round, with no model call
                    (checked too: what breaks a rule is flagged, not refused)
    price-basket    matches each item not matched yet to a product at the household's store
                    (version 5: ``workflow.shop.pricing``), a chunk a superstep
    place-order     orders the approved basket, or says why nothing was ordered

``workflow.shop.graph`` wires them into each version of the graph, around its approve-basket
port. The port passes on only the person's answer, so the basket reaches place-order,
count-approval and the revising write-basket through shared state (scope ``shop``:
:data:`BASKET_KEY`, :data:`REQUEST_KEY`, :data:`APPROVALS_KEY`, :data:`PRICES_KEY`, a change
a round under :func:`change_key`). These keys and the executors' IDs and class names are in
every checkpoint (its graph signature): renaming one is a change to the graph.

count-approval keeps the last approval counted in shared state (the checkpoint holds it between
two clicks, however far apart) and sends the same basket back to the port: a new pending request
of the same round, one superstep (and checkpoint) later. A change clears it (write-basket), and
so does an edit (edit-basket), so a revised basket, or the same one after a change that changed
nothing, is approved afresh.

A change that gives back the basket it changes is no new round: write-basket passes the same
basket (same round) on to be asked about again, and says so (:data:`UNCHANGED`).
"""

from __future__ import annotations

from dataclasses import replace

from workflow.engine.executor import Executor, WorkflowContext, handler

from .basket import Basket, ShopProgress, ShopRequest, count
from .check import flagged, said_diet, week_diet, write_checked
from .decision import BasketDecision
from .household import Household
from .pricing import (
    CHUNK,
    NO_STORE,
    MorePrices,
    PricedBasket,
    Pricer,
    PricesUnavailable,
    kept_lines,
    matched,
)
from .shopper import Brief, Shopper, ShopperReply

SCOPE = "shop"
BASKET_KEY = "basket"
REQUEST_KEY = "request"
# The last approval counted of the basket now asked about (a BasketDecision: its approvals are
# everyone's so far); none before the first, and none again after a change.
APPROVALS_KEY = "approvals"
# The basket's prices (a PricedBasket, version 5): absent or None where nothing was priced.
PRICES_KEY = "prices"


def change_key(round: int) -> str:
    """The change asked of basket ``round``: plain text in state, one key a round, so that code
    from before these keys (which ignores them) can still read a checkpoint that has them. A
    change that changed nothing but stated a rule ("we are vegetarian") is kept there too, so
    that the rule holds for the rest of the week (:func:`asked_so_far`)."""
    return f"change-{round}"


def asked_so_far(ctx: WorkflowContext, round: int) -> list[str]:
    """The changes asked of baskets 1 to ``round``, oldest first (none before these keys)."""
    said = [ctx.read_state(change_key(n), scope=SCOPE) for n in range(1, round + 1)]
    return [text for text in said if isinstance(text, str) and text]


def _kept(ctx: WorkflowContext, round: int, change: str) -> None:
    """``change`` added to what basket ``round`` was asked (one that changed nothing, then one
    that did: both are the week's)."""
    before = ctx.read_state(change_key(round), scope=SCOPE)
    text = "; ".join(part for part in (before, change) if isinstance(part, str) and part)
    ctx.queue_state_update(change_key(round), text, scope=SCOPE)


# A change whose basket is the one it changes uses up no round: the same basket is asked about
# again (a new pending request of the same round), with this progress event to say so.
UNCHANGED_STEP = "basket unchanged"
UNCHANGED = "That didn't change the basket."

WRITE_BASKET = "write-basket"
COUNT_APPROVAL = "count-approval"
PLACE_ORDER = "place-order"
EDIT_BASKET = "edit-basket"
EDITED_STEP = "basket edited"
PRICE_BASKET = "price-basket"
PRICED_STEP = "basket priced"


class WriteBasket(Executor):
    """Writes basket 1 from the week's request, and revises the last basket for a change."""

    def __init__(self, shopper: Shopper) -> None:
        super().__init__(WRITE_BASKET)
        self.shopper = shopper

    @handler
    async def write(self, request: str, ctx: WorkflowContext) -> Basket:
        return await self._run_shopper(Brief(request), 1, ctx)

    @handler
    async def write_for(self, request: ShopRequest, ctx: WorkflowContext) -> Basket:
        """Basket 1 for a request that names who asked (kept in state for approval rules)."""
        ctx.queue_state_update(REQUEST_KEY, request, scope=SCOPE)
        return await self._run_shopper(Brief(request.text, household=request.household), 1, ctx)

    @handler
    async def revise(self, decision: BasketDecision, ctx: WorkflowContext) -> Basket:
        ctx.queue_state_update(APPROVALS_KEY, None, scope=SCOPE)  # a change: approved afresh
        current = ctx.read_state(BASKET_KEY, scope=SCOPE)
        if not isinstance(current, Basket):
            raise LookupError("no basket in state")
        request = ctx.read_state(REQUEST_KEY, scope=SCOPE)
        earlier, change = asked_so_far(ctx, current.round), decision.change or ""
        brief = Brief(
            request.text if isinstance(request, ShopRequest) else "",
            last_basket=current.lines,
            change=change,
            earlier=earlier,
            household=request.household if isinstance(request, ShopRequest) else Household(),
            last_items=tuple(current.items),
        )
        reply = await write_checked(self.shopper, brief)  # ShopperError: no basket
        if reply.items == current.items:
            said = f"Couldn't apply: {'; '.join(reply.unapplied)}. " if reply.unapplied else ""
            ctx.add_event(ShopProgress(UNCHANGED_STEP, said + UNCHANGED))
            if said_diet(change).rules:  # "we are vegetarian": it holds all the same
                _kept(ctx, current.round, change)
            return current  # asked again, the same round: a change that changes nothing is free
        basket = self._written(reply, current.round + 1, ctx)
        _kept(ctx, current.round, change)
        return basket

    async def _run_shopper(self, brief: Brief, round: int, ctx: WorkflowContext) -> Basket:
        reply = await write_checked(self.shopper, brief)  # ShopperError: no basket
        return self._written(reply, round, ctx)

    def _written(self, reply: ShopperReply, round: int, ctx: WorkflowContext) -> Basket:
        basket = Basket(items=reply.items, round=round)
        ctx.queue_state_update(BASKET_KEY, basket, scope=SCOPE)
        ctx.add_event(
            ShopProgress(
                "basket written" if round == 1 else "basket revised",
                _said(count(len(basket.items)), reply),
                output_tokens=reply.output_tokens,
            )
        )
        return basket


def _said(detail: str, reply: ShopperReply) -> str:
    """A step's detail, and what of the change could not be made: "12 items · couldn't apply:
    no fish" (the offline shopper's words; shown on the basket as plain text)."""
    if not reply.unapplied:
        return detail
    return f"{detail} · couldn't apply: {'; '.join(reply.unapplied)}"


class CountApproval(Executor):
    """Keeps an approval that did not complete the quorum, or one held for the undo window
    (version 3), and asks about the basket again; an Undo lets go of every approval so far."""

    def __init__(self) -> None:
        super().__init__(COUNT_APPROVAL)

    @handler
    async def count(self, decision: BasketDecision, ctx: WorkflowContext) -> Basket:
        basket = ctx.read_state(BASKET_KEY, scope=SCOPE)
        if not isinstance(basket, Basket):
            raise LookupError("no basket in state")
        ctx.queue_state_update(APPROVALS_KEY, None if decision.undo else decision, scope=SCOPE)
        return basket  # asked again: a new pending request of the same round


class EditBasket(Executor):
    """Writes a person's edit of the basket as the basket of the same round, with no model
    call, and asks about it again; the approvals so far start again (version 4)."""

    def __init__(self) -> None:
        super().__init__(EDIT_BASKET)

    @handler
    async def edit(self, decision: BasketDecision, ctx: WorkflowContext) -> Basket:
        current = ctx.read_state(BASKET_KEY, scope=SCOPE)
        if not isinstance(current, Basket) or decision.edit is None:
            raise LookupError("no basket in state, or no edit")
        request = ctx.read_state(REQUEST_KEY, scope=SCOPE)
        home = request.household if isinstance(request, ShopRequest) else Household()
        texts = [request.text if isinstance(request, ShopRequest) else ""]
        diet = week_diet(home, [*texts, *asked_so_far(ctx, current.round)])
        basket = Basket(items=flagged(decision.edit, diet), round=current.round)  # checked too
        ctx.queue_state_update(BASKET_KEY, basket, scope=SCOPE)
        ctx.queue_state_update(APPROVALS_KEY, None, scope=SCOPE)  # approved afresh
        ctx.add_event(ShopProgress(EDITED_STEP, count(len(basket.items))))
        return basket  # asked again: a new pending request of the same round


class PlaceOrder(Executor):
    """Orders the approved basket, or says why nothing was ordered."""

    def __init__(self) -> None:
        super().__init__(PLACE_ORDER)

    @handler
    async def place(self, decision: BasketDecision, ctx: WorkflowContext) -> None:
        basket = ctx.read_state(BASKET_KEY, scope=SCOPE)
        if not isinstance(basket, Basket):
            raise LookupError("no basket in state")
        if decision.approved:
            ctx.add_event(ShopProgress("order placed", count(len(basket.items))))
            ctx.yield_output(f"Ordered {count(len(basket.items))}.")
            return
        if decision.expired_at is not None:
            reason = "nobody answered in time"
        elif decision.change is None:
            reason = "rejected"
        else:
            reason = f"still a change after basket {decision.round}: {decision.change}"
        ctx.add_event(ShopProgress("order skipped", reason))
        ctx.yield_output(f"No order placed: {reason}")


class PriceBasket(Executor):
    """Matches the basket's items to products at the household's store (version 5), keeping
    what still holds of the last match (an edit or a change re-matches only what changed), at
    most :data:`CHUNK` items a superstep; passes the basket on to be asked about when every item
    has its line, or when the store could not price them (the basket shows why, and nothing
    blocks its approval). Without a pricer (a deploy with no store's API) it prices nothing."""

    def __init__(self, pricer: Pricer | None) -> None:
        super().__init__(PRICE_BASKET)
        self.pricer = pricer

    @handler
    async def price(self, basket: Basket, ctx: WorkflowContext) -> Basket | MorePrices:
        return await self._price(basket, ctx)

    @handler
    async def more(self, left: MorePrices, ctx: WorkflowContext) -> Basket | MorePrices:
        basket = ctx.read_state(BASKET_KEY, scope=SCOPE)
        if not isinstance(basket, Basket) or basket.round != left.round:
            raise LookupError("no basket of that round in state")
        return await self._price(basket, ctx)

    async def _price(self, basket: Basket, ctx: WorkflowContext) -> Basket | MorePrices:
        where = None if self.pricer is None else self.pricer.where()
        if self.pricer is None or where is None:
            said = (
                None if self.pricer is None else PricedBasket(round=basket.round, problem=NO_STORE)
            )
            ctx.queue_state_update(PRICES_KEY, said, scope=SCOPE)
            return basket
        before = ctx.read_state(PRICES_KEY, scope=SCOPE)
        kept = kept_lines(before if isinstance(before, PricedBasket) else None, where, basket)
        prices = PricedBasket(
            round=basket.round,
            store_id=where.store_id,
            store=where.store,
            budget_cents=where.budget_cents,
            lines=kept,
        )
        chunk = prices.left(basket)[:CHUNK]
        try:
            found = await self.pricer.offers(chunk) if chunk else []
        except PricesUnavailable as exc:
            # Said under the items (the prices' own line, in plain text), not as this step's
            # progress: "basket priced" beside it would be untrue.
            ctx.queue_state_update(PRICES_KEY, replace(prices, problem=exc.reason), scope=SCOPE)
            return basket  # shown without the missing prices; the approval waits for nothing
        prices = replace(prices, lines=(*prices.lines, *matched(chunk, found)))
        ctx.queue_state_update(PRICES_KEY, prices, scope=SCOPE)
        if not prices.complete(basket):
            return MorePrices(round=basket.round)  # the next chunk, after a checkpoint
        total = prices.total(basket.items)
        with_price = len(basket.items) - total.unpriced
        ctx.add_event(
            ShopProgress(PRICED_STEP, f"{with_price} of {count(len(basket.items))} priced")
        )
        return basket
