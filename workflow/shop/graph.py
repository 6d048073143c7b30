"""The weekly-shop workflow: write a basket, price it, ask for approval, revise, edit or order.

Version 5, the current one (prices: each basket matched to products at the household's store):

    input ─> write-basket ─> price-basket ─> approve-basket ─┬─ change ─> write-basket
                  edit-basket ─> price-basket ─┘  ▲          ├─ an edit ─> edit-basket
                  (price-basket ⟲ MorePrices)     │          ├─ too few ─> count-approval ─┐
                                                  │          └─ otherwise ─> place-order   │
                                                  └────────────────────────────────────────┘

Version 4's edges, with price-basket between each basket written (write-basket, edit-basket)
and the port: it matches at most ``pricing.CHUNK`` items a superstep, sending itself
``MorePrices`` until every item has its line, so a crash resumes from what was matched.
count-approval asks about the same basket, already priced, with no step between. Version 4's
runs are carried to version 5 as they are (:func:`carry_v4_to_v5`): a basket posted before
prices shows none until a change or an edit writes the next one, which is priced.

Version 4 (Edit items: a person's edit of the basket, no model call):

    input ─> write-basket ─> approve-basket ─┬─ change, round < max ──────> write-basket
                                             ├─ an edit ──────────────────> edit-basket ──┐
                                             ├─ approved, too few so far ─> count-approval ─┤
                                             │  (or held, or an Undo: version 3's)          │
                                             └─ otherwise ────────────────> place-order    │
                            (the same round, asked again) ◀────────────────────────────────┘

edit-basket writes the edited basket as the basket of the same round (a hand edit uses up none
of the model's rounds) and clears the approvals, like a change. Version 3's runs are carried to
version 4 as they are (:func:`carry_v3_to_v4`): the same port, executors and types.

Version 3: version 2's graph, where an approval held for the undo window and an Undo go to
count-approval too (:func:`undo_conditions`).

Version 2 (a quorum: a basket is ordered once enough different people approved it):

    input ─> write-basket ─> approve-basket ─┬─ change, round < max ──────> write-basket
                  ▲                          ├─ approved, too few so far ─> count-approval ─┐
                  │                          └─ otherwise ────────────────> place-order ─> output
                  │                  (the same basket, asked again) ◀───────────────────────┘

Version 1, kept so that its runs can be carried (it has no count-approval: one approval
orders):

    input ─> write-basket ─> approve-basket ─┬─ change, round < max ─> write-basket
                                             └─ otherwise ───────────> place-order ─> output

An approval carries everyone who has approved the basket so far and how many it needs
(``BasketDecision.approvals``, ``needed``: the household's rule at that click), so the port's
edges decide from the answer alone, and the approval that completes the quorum goes straight to
place-order in one superstep, as in version 1. One that does not is counted: count-approval keeps
it in shared state and asks about the same basket again. Version 1's waiting runs are carried to
version 2 as they are (:func:`carry_v1_to_v2`).

What each executor does, and what it keeps in shared state, is ``executors.py``'s (a change that
gives back the basket it changes, for one, is no new round). The port's conditions
(``conditions.py``) never overlap and together cover every answer.

Here: each version's builder, the carries between versions, :func:`shop_versions` (every version
this code resumes) and the types a checkpoint may hold (:func:`shop_registry`). What a run of
the graph holds, read back for its callers, is ``run_state.py``'s.
"""

from __future__ import annotations

from workflow.engine.builder import RequestPort, Workflow, WorkflowBuilder, only
from workflow.engine.versions import WorkflowVersions
from workflow.persistence.checkpoint import RunSnapshot
from workflow.persistence.registry import TypeRegistry

from .basket import (
    BASKET_VERSION,
    REQUEST_VERSION,
    Basket,
    ShopRequest,
    basket_from_v1,
    request_from_v1,
)
from .conditions import (
    answer_conditions,
    edit_conditions,
    quorum_conditions,
    undo_conditions,
)
from .decision import BasketDecision
from .executors import (
    CountApproval,
    EditBasket,
    PlaceOrder,
    PriceBasket,
    WriteBasket,
)
from .pricing import MorePrices, PricedBasket, Pricer
from .shopper import Shopper

NAME = "weekly-shop"  # the workflow's name in every checkpoint
DEFAULT_MAX_ROUNDS = 3
APPROVE_BASKET = "approve-basket"


DECISION_VERSION = 5  # BasketDecision: 2 added expired_at, 3 approvals and needed, 4 hold_until
# and undo, 5 edit (each written only when set: a version 3 or 4 value reads as it is)


def shop_registry() -> TypeRegistry:
    registry = TypeRegistry()
    registry.register(ShopRequest, version=REQUEST_VERSION, upgrades={1: request_from_v1})
    registry.register(Basket, version=BASKET_VERSION, upgrades={1: basket_from_v1})
    registry.register(PricedBasket, version=1)
    registry.register(MorePrices, version=1)
    registry.register(
        BasketDecision,
        version=DECISION_VERSION,
        upgrades={
            1: lambda v: {**v, "expired_at": None},
            2: lambda v: {**v, "approvals": [], "needed": 1},  # one approval was enough
            3: lambda v: v,  # held by nobody
            4: lambda v: v,  # no edit
        },
    )
    return registry


def shop_versions(
    shopper: Shopper, max_rounds: int = DEFAULT_MAX_ROUNDS, pricer: Pricer | None = None
) -> WorkflowVersions:
    """Every version of the graph this code resumes; new runs start on the newest.

    A change to the graph adds a version here (and keeps the old one, or carries its runs to
    the new one), never edits a shipped one in place: README.md, "Changing the workflow".
    """
    versions = WorkflowVersions(NAME)
    versions.add(1, lambda: build_shop_workflow(shopper, max_rounds))
    versions.add(2, lambda: build_quorum_workflow(shopper, max_rounds), carry=carry_v1_to_v2)
    versions.add(3, lambda: build_undo_workflow(shopper, max_rounds), carry=carry_v2_to_v3)
    versions.add(4, lambda: build_edit_workflow(shopper, max_rounds), carry=carry_v3_to_v4)
    versions.add(
        5, lambda: build_priced_workflow(shopper, max_rounds, pricer), carry=carry_v4_to_v5
    )
    return versions


def carry_v4_to_v5(snapshot: RunSnapshot) -> RunSnapshot:
    """A version 4 run as version 5's: unchanged (its pending request waits at approve-basket,
    which version 5 has with the same ID and types; a queued basket or answer goes to an
    executor version 5 has too). It holds no prices, so its basket shows none, as it was
    posted, until a change or an edit writes the next one through price-basket. Carried, not
    kept, so that the carries from versions 1 to 3 still lead to the current graph."""
    return snapshot


def carry_v3_to_v4(snapshot: RunSnapshot) -> RunSnapshot:
    """A version 3 run as version 4's: unchanged (its pending request waits at approve-basket,
    which version 4 has with the same ID and types; its queued messages go to executors version
    4 has too). Carried so that a basket posted before this deploy can be edited like any."""
    return snapshot


def carry_v2_to_v3(snapshot: RunSnapshot) -> RunSnapshot:
    """A version 2 run as version 3's: unchanged (the same executors and edges; nothing of it
    is held). Carried so that its next approval may be held for the undo window like any."""
    return snapshot


def carry_v1_to_v2(snapshot: RunSnapshot) -> RunSnapshot:
    """A version 1 run as version 2's: unchanged. Its pending request waits at approve-basket,
    which version 2 has with the same ID and types; its queued messages go to write-basket or
    place-order, which version 2 has too; it has no approvals, so the next approval is counted
    from none under the household's rule at that click (a quorum set since applies to it).

    Carried rather than kept: a basket posted before this deploy would otherwise order on one
    approval however many the household asks for."""
    return snapshot


def build_priced_workflow(
    shopper: Shopper, max_rounds: int = DEFAULT_MAX_ROUNDS, pricer: Pricer | None = None
) -> Workflow:
    """Version 5 of the graph: version 4 with price-basket before the port (the module
    docstring). Without a pricer the step prices nothing and the basket shows no prices."""
    wants_another_basket, is_edit, asks_again, is_final = edit_conditions(max_rounds)
    write_basket, price_basket = WriteBasket(shopper), PriceBasket(pricer)
    approve_basket: RequestPort[Basket, BasketDecision] = RequestPort(
        APPROVE_BASKET, Basket, BasketDecision
    )
    edit_basket, count_approval, place_order = EditBasket(), CountApproval(), PlaceOrder()
    return (
        WorkflowBuilder(start=write_basket, registry=shop_registry(), name=NAME, version=5)
        .add_edge(write_basket, price_basket)
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


def build_edit_workflow(shopper: Shopper, max_rounds: int = DEFAULT_MAX_ROUNDS) -> Workflow:
    """Version 4 of the graph: version 3 plus edit-basket (the module docstring)."""
    wants_another_basket, is_edit, asks_again, is_final = edit_conditions(max_rounds)
    write_basket = WriteBasket(shopper)
    approve_basket: RequestPort[Basket, BasketDecision] = RequestPort(
        APPROVE_BASKET, Basket, BasketDecision
    )
    edit_basket, count_approval, place_order = EditBasket(), CountApproval(), PlaceOrder()
    return (
        WorkflowBuilder(start=write_basket, registry=shop_registry(), name=NAME, version=4)
        .add_edge(write_basket, approve_basket)
        .add_edge(approve_basket, write_basket, condition=wants_another_basket)
        .add_edge(approve_basket, edit_basket, condition=is_edit)
        .add_edge(edit_basket, approve_basket)
        .add_edge(approve_basket, count_approval, condition=asks_again)
        .add_edge(count_approval, approve_basket)
        .add_edge(approve_basket, place_order, condition=is_final)
        .with_output_from(place_order)
        .build()
    )


def build_undo_workflow(shopper: Shopper, max_rounds: int = DEFAULT_MAX_ROUNDS) -> Workflow:
    """Version 3 of the graph: version 2's executors and edges, and its conditions (the undo
    window, :func:`undo_conditions`)."""
    return build_quorum_workflow(shopper, max_rounds, version=3)


def build_quorum_workflow(
    shopper: Shopper, max_rounds: int = DEFAULT_MAX_ROUNDS, version: int = 2
) -> Workflow:
    """Version 2 of the graph: version 1 plus count-approval (the module docstring); with
    ``version=3``, the undo window's conditions."""
    conditions = undo_conditions if version == 3 else quorum_conditions
    wants_another_basket, needs_more_approvals, is_final = conditions(max_rounds)
    write_basket = WriteBasket(shopper)
    approve_basket: RequestPort[Basket, BasketDecision] = RequestPort(
        APPROVE_BASKET, Basket, BasketDecision
    )
    count_approval = CountApproval()
    place_order = PlaceOrder()
    return (
        WorkflowBuilder(start=write_basket, registry=shop_registry(), name=NAME, version=version)
        .add_edge(write_basket, approve_basket)
        .add_edge(approve_basket, write_basket, condition=wants_another_basket)
        .add_edge(approve_basket, count_approval, condition=needs_more_approvals)
        .add_edge(count_approval, approve_basket)
        .add_edge(approve_basket, place_order, condition=is_final)
        .with_output_from(place_order)
        .build()
    )


def build_shop_workflow(shopper: Shopper, max_rounds: int = DEFAULT_MAX_ROUNDS) -> Workflow:
    """Version 1 of the graph, built from code in every process that runs or resumes it."""
    wants_another_basket, is_final = answer_conditions(max_rounds)
    write_basket = WriteBasket(shopper)
    approve_basket: RequestPort[Basket, BasketDecision] = RequestPort(
        APPROVE_BASKET, Basket, BasketDecision
    )
    place_order = PlaceOrder()
    return (
        WorkflowBuilder(start=write_basket, registry=shop_registry(), name=NAME, version=1)
        .add_edge(write_basket, approve_basket)
        .add_edge(approve_basket, write_basket, condition=wants_another_basket)
        .add_edge(approve_basket, place_order, condition=is_final)
        .with_output_from(place_order)
        .build()
    )
