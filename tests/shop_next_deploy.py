"""The next deploy of the weekly shop, as the tests play it: a graph change, in three variants.

Version 6 of the graph puts a ``check-basket`` executor between ``write-basket`` and the
``price-basket`` step before the ``approve-basket`` port of version 5, the current one (it drops
an item listed twice). A deploy
that ships it declares what happens to baskets still waiting on version 4
(docs/changing-the-workflow.md):

    kept      version 5 stays beside version 6: waiting baskets finish on the graph they
              started on; new ones start on version 6
    carried   a carry moves waiting baskets to version 6 (the port has the same ID and types,
              so the pending request moves as it is, approvals counted so far and all)
    removed   version 5 is removed (and versions 1 to 4, which were carried to it): their
              baskets get Start again

Versions 1 to 4 stay as the current code declares them (carried on) where version 5 stays.

``install(name)`` makes ``workflow.shop.graph.shop_versions`` that deploy's, in this process (a
fresh interpreter runs it with ``python -m tests.lambda_invoke --deploy NAME``).
"""

from __future__ import annotations

from collections.abc import Callable

from workflow.engine.builder import RequestPort, Workflow, WorkflowBuilder, only
from workflow.engine.executor import Executor, WorkflowContext, handler
from workflow.engine.versions import WorkflowVersions
from workflow.persistence.checkpoint import RunSnapshot
from workflow.shop import conditions, executors, graph
from workflow.shop.basket import Basket, ShopProgress
from workflow.shop.decision import BasketDecision
from workflow.shop.pricing import MorePrices, Pricer
from workflow.shop.shopper import Shopper

CHECK_BASKET = "check-basket"
REMOVED_BECAUSE = "v5 baskets skipped the duplicate check"


class CheckBasket(Executor):
    """Drops an item the shopper listed twice, before anyone is asked to approve."""

    def __init__(self) -> None:
        super().__init__(CHECK_BASKET)

    @handler
    async def check(self, basket: Basket, ctx: WorkflowContext) -> Basket:
        seen: set[str] = set()
        items = [
            i for i in basket.items if not (i.name.lower() in seen or seen.add(i.name.lower()))
        ]
        checked = Basket(items=items, round=basket.round)
        ctx.queue_state_update(executors.BASKET_KEY, checked, scope=executors.SCOPE)
        ctx.add_event(ShopProgress("basket checked", f"{len(basket.items) - len(items)} dropped"))
        return checked


def build_v6(shopper: Shopper, max_rounds: int, pricer: Pricer | None = None) -> Workflow:
    wants_another_basket, is_edit, asks_again, is_final = conditions.edit_conditions(max_rounds)
    write_basket, check_basket = executors.WriteBasket(shopper), CheckBasket()
    price_basket = executors.PriceBasket(pricer)
    approve_basket: RequestPort[Basket, BasketDecision] = RequestPort(
        graph.APPROVE_BASKET, Basket, BasketDecision
    )
    edit_basket, count_approval = executors.EditBasket(), executors.CountApproval()
    place_order = executors.PlaceOrder()
    return (
        WorkflowBuilder(
            start=write_basket, registry=graph.shop_registry(), name=graph.NAME, version=6
        )
        .add_edge(write_basket, check_basket)
        .add_edge(check_basket, price_basket)
        .add_edge(price_basket, price_basket, condition=only(MorePrices))
        .add_edge(price_basket, approve_basket, condition=only(Basket))
        .add_edge(approve_basket, write_basket, condition=wants_another_basket)
        .add_edge(approve_basket, edit_basket, condition=is_edit)
        .add_edge(edit_basket, price_basket)
        .add_edge(approve_basket, count_approval, condition=asks_again)
        .add_edge(count_approval, approve_basket)
        .add_edge(approve_basket, place_order, condition=is_final)
        .with_output_from(place_order)
        .build()
    )


def v5_to_v6(snapshot: RunSnapshot) -> RunSnapshot:
    """A basket waiting at approve-basket waits at the same port in version 6."""
    return snapshot


def _current(shopper: Shopper, max_rounds: int, pricer: Pricer | None) -> WorkflowVersions:
    """Versions 1 to 5 as the current code declares them (``graph.shop_versions``)."""
    versions = WorkflowVersions(graph.NAME)
    versions.add(1, lambda: graph.build_shop_workflow(shopper, max_rounds))
    versions.add(
        2, lambda: graph.build_quorum_workflow(shopper, max_rounds), carry=graph.carry_v1_to_v2
    )
    versions.add(
        3, lambda: graph.build_undo_workflow(shopper, max_rounds), carry=graph.carry_v2_to_v3
    )
    versions.add(
        4, lambda: graph.build_edit_workflow(shopper, max_rounds), carry=graph.carry_v3_to_v4
    )
    versions.add(
        5,
        lambda: graph.build_priced_workflow(shopper, max_rounds, pricer),
        carry=graph.carry_v4_to_v5,
    )
    return versions


def kept(
    shopper: Shopper, max_rounds: int = graph.DEFAULT_MAX_ROUNDS, pricer: Pricer | None = None
) -> WorkflowVersions:
    versions = _current(shopper, max_rounds, pricer)
    versions.add(6, lambda: build_v6(shopper, max_rounds, pricer))
    return versions


def carried(
    shopper: Shopper, max_rounds: int = graph.DEFAULT_MAX_ROUNDS, pricer: Pricer | None = None
) -> WorkflowVersions:
    versions = _current(shopper, max_rounds, pricer)
    versions.add(6, lambda: build_v6(shopper, max_rounds, pricer), carry=v5_to_v6)
    return versions


def removed(
    shopper: Shopper, max_rounds: int = graph.DEFAULT_MAX_ROUNDS, pricer: Pricer | None = None
) -> WorkflowVersions:
    versions = WorkflowVersions(graph.NAME)
    versions.add(6, lambda: build_v6(shopper, max_rounds, pricer))
    versions.remove(5, reason=REMOVED_BECAUSE)
    versions.remove(4, reason=REMOVED_BECAUSE)
    versions.remove(3, reason=REMOVED_BECAUSE)
    versions.remove(2, reason=REMOVED_BECAUSE)
    versions.remove(1, reason=REMOVED_BECAUSE)
    return versions


DEPLOYS: dict[str, Callable[..., WorkflowVersions]] = {
    "kept": kept,
    "carried": carried,
    "removed": removed,
}


def install(name: str) -> None:
    """This process runs deploy ``name`` from now on."""
    graph.shop_versions = DEPLOYS[name]  # type: ignore[assignment]
