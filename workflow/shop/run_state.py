"""What a run of the weekly-shop graph holds, read back for its callers (the bot's steps): the
week's request (:func:`shop_request`), the basket's prices (:func:`prices_of`), the approval
held for the undo window (:func:`held_of`), who has approved it (:func:`approvals_of`,
:func:`approved_since`) and its latest edit by hand (:func:`edit_of`). Each reads the shared
state the executors keep (``executors.py``'s keys) or the run's answered requests; the graph
itself, its versions and its types are ``graph.py``'s.
"""

from __future__ import annotations

from workflow.engine.runner import Run
from workflow.engine.state import scope_key
from workflow.persistence.checkpoint import AnsweredRequest, RunSnapshot

from .basket import Basket, ShopRequest
from .decision import BasketDecision
from .executors import APPROVALS_KEY, PRICES_KEY, REQUEST_KEY, SCOPE
from .pricing import PricedBasket


def shop_request(run: Run | RunSnapshot) -> ShopRequest | None:
    """The request a weekly-shop run (or a saved one) was started with (None when it was
    started from text)."""
    if isinstance(run, RunSnapshot):
        request = run.state.get(scope_key("", SCOPE), {}).get(REQUEST_KEY)
    else:
        request = run.read_state(REQUEST_KEY, SCOPE)
    return request if isinstance(request, ShopRequest) else None


def changes_of(run: Run) -> list[str]:
    """The changes asked of a run's baskets so far, in order (the rules they state hold for
    the baskets after them: ``check.week_diet``)."""
    return [
        done.response.change
        for done in run.answered.values()
        if isinstance(done.response, BasketDecision) and done.response.change
    ]


def prices_of(run: Run, round: int | None = None) -> PricedBasket | None:
    """The prices of the basket a run asks about (basket ``round``, if given): None before
    version 5, in a deploy with no store's API, or for another round's basket."""
    prices = run.read_state(PRICES_KEY, SCOPE)
    if not isinstance(prices, PricedBasket) or round not in (None, prices.round):
        return None
    return prices


def held_of(run: Run, round: int | None = None) -> BasketDecision | None:
    """The approval holding the basket a run asks about (basket ``round``, if given) for its
    undo window, or None: version 3's, while its order timer has not fired."""
    counted = run.read_state(APPROVALS_KEY, SCOPE)
    if not isinstance(counted, BasketDecision) or not counted.held:
        return None
    return counted if round in (None, counted.round) else None


def approvals_of(run: Run, round: int | None = None) -> list[str]:
    """Who has approved the basket a run is asking about (basket ``round``, if given), each
    once, in order: none in a version 1 run, after a change, or before the first approval."""
    counted = run.read_state(APPROVALS_KEY, SCOPE)
    if not isinstance(counted, BasketDecision) or round not in (None, counted.round):
        return []
    return list(dict.fromkeys(counted.approvals))


def approved_since(run: Run, round: int) -> list[str]:
    """Everyone who pressed Approve on basket ``round`` since its approvals last started again
    (a change, an edit, an Undo), each once, in order: the audit trail, not the count. Some of
    them may no longer count (an approver removed in Settings since: ``bot.steps.rules``)."""
    who: list[str] = []
    for answered in reversed(run.answered.values()):
        decision = answered.response
        if not isinstance(decision, BasketDecision) or decision.round != round:
            break
        if not decision.approved:
            break
        who.append(answered.by)
    return list(dict.fromkeys(reversed(who)))


def edit_of(run: Run, round: int | None = None) -> AnsweredRequest | None:
    """The latest edit by hand of the basket a run asks about (basket ``round``, if given): the
    answered request (who edited, the basket before, the decision with the items after); None
    when that basket was not edited since it was written."""
    for answered in reversed(run.answered.values()):
        decision, basket = answered.response, answered.data
        if not isinstance(decision, BasketDecision) or not isinstance(basket, Basket):
            continue
        if round is not None and basket.round != round:
            return None
        if decision.edited:
            return answered
        if decision.change is not None or not run.pending_requests:
            return None  # a revision since, or the end
    return None
