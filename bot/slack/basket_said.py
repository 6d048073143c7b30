"""What a turn's Report makes the basket's own message say: pure functions of the Report, which
the outbox (``bot.slack.outbox``) posts or updates.

    asked       a basket the run asks about: a new message with buttons for its request, or the
                answered one asked again unchanged (:func:`mark_ts`), its buttons bound anew
    answered    the answered basket: its buttons replaced by who answered, when, and the change
                they asked for, or that it expired, below what was asked
    retired     a basket whose graph version a deploy removed: why its buttons went

Each gives the message's text (notifications, screen readers) and its blocks
(``bot.slack.basket_message``).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from workflow.engine.events import RequestInfoEvent

from .basket_message import (
    answered_blocks,
    asked_for,
    basket_blocks,
    expired_blocks,
    retired_blocks,
)
from .blocks import Block, Ref, count, escape, people
from .outcome import EXPIRED, Mark, Report

if TYPE_CHECKING:
    from workflow.shop.basket import Basket


def asked_message(
    report: Report, event: RequestInfoEvent, session_id: str, max_rounds: int
) -> tuple[str, list[Block]]:
    """The basket ``event`` asks about, its buttons bound to that request in ``session_id``."""
    basket = event.data
    text = f"Basket {basket.round} of {max_rounds}: {count(len(basket.items))}"
    blocks = basket_blocks(
        round=basket.round,
        max_rounds=max_rounds,
        items=basket.items,
        requested_by=report.requested_by,
        request=report.request,
        progress=report.progress,
        ref=Ref(session_id, event.request_id),
        approvals=report.approvals,
        needed=report.needed,
        uncounted=report.uncounted,
        household=report.household,
        held_until=report.held_until,
        edited=report.edited,
        prices=report.prices if report.prices and report.prices.round == basket.round else None,
    )
    return text, blocks


def answered_message(
    report: Report, mark: Mark, max_rounds: int, at: int, session_id: str = ""
) -> tuple[str, list[Block]]:
    """The basket ``mark`` answered, as answered (or expired) ``at``: who answered, when, and the
    change they asked for, below what was asked, as the basket showed it; with ``session_id``,
    its feedback buttons kept (``bot.slack.feedback_buttons``)."""
    said = f": {escape(mark.note)}" if mark.note else ""
    basket = mark.basket
    known = report.requested_by or report.request
    asked = (
        asked_for(report.requested_by, report.request, household=report.household)
        if known
        else None
    )
    if mark.verdict == EXPIRED:
        return (
            f"Basket {basket.round} of {max_rounds}: expired, nothing ordered",
            expired_blocks(
                round=basket.round,
                max_rounds=max_rounds,
                items=basket.items,
                at=at,
                asked=asked,
                session_id=session_id,
            ),
        )
    by = people(mark.approvals or [mark.by])
    return (
        f"Basket {basket.round} of {max_rounds}: {mark.verdict} by {by}" + said,
        answered_blocks(
            round=basket.round,
            max_rounds=max_rounds,
            items=basket.items,
            verdict=mark.verdict,
            user=mark.by,
            at=at,
            note=mark.note,
            asked=asked,
            approvals=mark.approvals,
            prices=mark.prices,
            session_id=session_id,
        ),
    )


def retired_message(basket: Basket, max_rounds: int) -> tuple[str, list[Block]]:
    """A basket whose graph version a deploy removed: its buttons replaced by why they went."""
    blocks = retired_blocks(round=basket.round, max_rounds=max_rounds, items=basket.items)
    return f"Basket {basket.round}: retired", blocks


def mark_ts(report: Report, event: RequestInfoEvent) -> str | None:
    """The answered basket's message when ``event`` asks about it again unchanged; the draft
    message that showed it being written (``Report.draft_ts``), which becomes it; else None (a
    new message)."""
    if report.mark is not None and event is report.reasked:
        return report.mark.ts
    return report.draft_ts if event.data.round == report.draft_round else None
