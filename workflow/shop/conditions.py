"""The approve-basket port's edge conditions, one set per graph version
(``workflow.shop.graph``): which way an answer goes, another basket, an edit, asked again, or
the end. Each set's conditions are complements: every answer takes exactly one of them.
"""

from __future__ import annotations

from collections.abc import Callable

from .decision import BasketDecision


def answer_conditions(
    max_rounds: int,
) -> tuple[Callable[[BasketDecision], bool], Callable[[BasketDecision], bool]]:
    """The approve-basket port's two edge conditions: another basket, or the end. They are
    complements, so every answer takes exactly one of them."""

    def wants_another_basket(decision: BasketDecision) -> bool:
        return decision.change is not None and decision.round < max_rounds

    def is_final(decision: BasketDecision) -> bool:
        return not wants_another_basket(decision)

    return wants_another_basket, is_final


def quorum_conditions(
    max_rounds: int,
) -> tuple[
    Callable[[BasketDecision], bool],
    Callable[[BasketDecision], bool],
    Callable[[BasketDecision], bool],
]:
    """Version 2's three edge conditions on the approve-basket port: another basket, one more
    approval to count, or the end. Each answer takes exactly one of them."""
    wants_another_basket, _ = answer_conditions(max_rounds)

    def needs_more_approvals(decision: BasketDecision) -> bool:
        return not decision.quorum_reached

    def is_final(decision: BasketDecision) -> bool:
        return not wants_another_basket(decision) and decision.quorum_reached

    return wants_another_basket, needs_more_approvals, is_final


def undo_conditions(
    max_rounds: int,
) -> tuple[
    Callable[[BasketDecision], bool],
    Callable[[BasketDecision], bool],
    Callable[[BasketDecision], bool],
]:
    """Version 3's: version 2's, where an approval held for the undo window, and an Undo, go
    to count-approval too (which keeps the one, lets go of all for the other, and asks again).
    Each answer still takes exactly one of them."""
    wants_another_basket, _ = answer_conditions(max_rounds)

    def asks_again(decision: BasketDecision) -> bool:
        return not decision.quorum_reached or decision.held or decision.undo

    def is_final(decision: BasketDecision) -> bool:
        return not wants_another_basket(decision) and not asks_again(decision)

    return wants_another_basket, asks_again, is_final


def edit_conditions(
    max_rounds: int,
) -> tuple[
    Callable[[BasketDecision], bool],
    Callable[[BasketDecision], bool],
    Callable[[BasketDecision], bool],
    Callable[[BasketDecision], bool],
]:
    """Version 4's four edge conditions: another basket, an edit, asked again (version 3's),
    or the end. Each answer takes exactly one of them: an edit is neither a change nor an
    approval, so only the end would take it among version 3's, and the end excludes it here."""
    wants_another_basket, asks_again, is_final = undo_conditions(max_rounds)

    def is_edit(decision: BasketDecision) -> bool:
        return decision.edited

    def ends(decision: BasketDecision) -> bool:
        return is_final(decision) and not decision.edited

    return wants_another_basket, is_edit, asks_again, ends
