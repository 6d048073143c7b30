"""How an answered basket reads: the verdict a click gave it ("Approved", "Change asked"), who
gave it, with which approvals and prices (``bot.steps.clicks`` marks the basket's message with
it), and what an Undo says in the thread."""

from __future__ import annotations

from typing import Any

from bot.slack.outcome import APPROVED, Mark
from bot.slack.payloads import Kind
from workflow.engine.runner import Run
from workflow.shop.basket import Basket
from workflow.shop.decision import BasketDecision
from workflow.shop.pricing import PricedBasket
from workflow.shop.run_state import prices_of

VERDICTS: dict[Kind, str] = {
    "approve": APPROVED,
    "reject": "Rejected",
    "change": "Change asked",
    "undo": "Undone",
    "edit": "Edited",
}


def undone_text(user: str) -> str:
    """Said in the thread when an approver's Undo stops a held order: who pressed it (a mention
    of the ID Slack gave with the click: ours, so it goes as mrkdwn, ``Report.said``)."""
    return (
        f"Undo pressed by <@{user}>: nothing was ordered, and the basket waits for approval again."
    )


def verdict_of(decision: object) -> tuple[str, str]:
    """("Approved" / "Rejected" / "Change asked", the change) for a recorded decision."""
    if isinstance(decision, BasketDecision):
        if decision.expired_at is not None:
            return "Expired", ""
        if decision.undo:
            return VERDICTS["undo"], ""
        if decision.edited:
            return VERDICTS["edit"], ""
        if decision.approved:
            return APPROVED, ""
        if decision.change is not None:
            return "Change asked", decision.change
    return "Rejected", ""


def mark_of(ts: str, basket: object, verdict: str, by: str, note: str, **kw: Any) -> Mark | None:
    """How the answered basket reads now (``kw``: Mark's ``at``, ``request_id``, ``approvals``,
    ``prices``); None for a request that asked about no basket."""
    return Mark(ts, basket, verdict, by, note, **kw) if isinstance(basket, Basket) else None


def prices_for(run: Run, basket: object) -> PricedBasket | None:
    """The prices of ``basket`` still in the run (none once a change priced the next one)."""
    return prices_of(run, basket.round) if isinstance(basket, Basket) else None


def ordered_by(decision: object) -> tuple[str, ...]:
    """Everyone whose approval ordered the basket, when a quorum of more than one did (none
    for one approver: "Approved by @bob", as before quorums)."""
    if isinstance(decision, BasketDecision) and decision.approved and decision.quorum_reached:
        approvals = tuple(dict.fromkeys(decision.approvals))
        return approvals if len(approvals) > 1 else ()
    return ()
