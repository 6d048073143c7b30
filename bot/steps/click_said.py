"""What a click is told when it answers nothing (``bot.steps.clicks`` answers the rest).

Four cases of a click's :class:`bot.steps.turn.Step`, each a short reason, the basket unchanged:

- an approval from someone a quorum has counted already (:func:`told_counted`): a
  :class:`Counted` redelivery of their own approval, so that a retry whose first attempt died
  before Slack was told first catches the channel up;
- its work was done before and the channel shows it (:func:`told_up_to_date`): Lambda's retry,
  a second click, an Undo too late, an edit already made or made stale by someone else's, an
  approval counted, an expired basket, "already answered";
- the run failed while answering (:func:`told_failed`): the buttons still work;
- the turn could not be taken (:func:`told_refused`): someone else answering, the person's own
  earlier click, a basket gone, from a newer or a retired version, damaged, S3 down, a bug.
"""

from __future__ import annotations

from dataclasses import dataclass

from bot.slack.blocks import slack_date
from bot.slack.outcome import (
    BROKEN,
    NEWER,
    STORE_DOWN,
    Damaged,
    Outcome,
    Post,
    Retired,
    Tell,
    describe_failure,
)
from bot.slack.payloads import GONE, Click
from workflow.engine.respond import lock_taken_by
from workflow.engine.runner import Run
from workflow.errors import (
    CheckpointConflict,
    CheckpointError,
    CheckpointFromNewerVersion,
    CheckpointNotFound,
    InvalidIdentifier,
    SessionBusy,
    StoreError,
    UnknownRequest,
    WorkflowVersionRemoved,
)
from workflow.shop.basket import Basket, count
from workflow.shop.decision import BasketDecision

from .edit import EDIT_MADE, STALE_EDIT, edited_since, same_edit
from .turn import Redelivered

BUSY = "Someone else is answering this basket right now."
EDIT_NOT_SAVED = (
    "Your edit wasn't saved: someone else was answering this basket all the while. "
    "Press Edit items to make it again."
)
OWN_CLICK = "Your earlier click on this basket is still being answered: its answer will show here."
WENT_WRONG = "Something went wrong answering that; nothing was ordered twice. Try again."
TOO_LATE = "Too late to undo: this basket was ordered."


def counted_text(so_far: int, needed: int) -> str:
    """What an approver who presses Approve again is told: it counts once."""
    more = count(max(needed - so_far, 0), "more approval")
    return f"Your approval of this basket is already counted ({so_far} of {needed}): {more} needed."


@dataclass(frozen=True)
class Counted(Redelivered):
    """An approval from someone already counted for this basket: ``answered`` is their own
    approval. Nothing is written; like any redelivery (Lambda's retry of their click), the turn
    first shows the latest checkpoint if the channel is behind it."""

    so_far: int = 0
    needed: int = 1


def told_counted(click: Click, run: Run, round: int, so_far: int, needed: int) -> Outcome | Counted:
    """This person's approval of the basket is already counted: their own answer, so that
    a retry of their click whose first attempt died before Slack was told catches up."""
    for answered in reversed(run.answered.values()):
        decision = answered.response
        if (
            answered.by == click.user
            and isinstance(decision, BasketDecision)
            and decision.approved
            and decision.round == round
        ):
            return Counted(answered, so_far=so_far, needed=needed)
    return Tell(click.user, counted_text(so_far, needed))


def expired_text(at: int) -> str:
    """What a click on an expired basket is told: that it expired, and when."""
    return f"This basket expired {slack_date(at)} because nobody answered it: nothing was ordered."


def told_up_to_date(click: Click, done: Redelivered) -> Outcome:
    """A redelivery that finds the channel showing the latest checkpoint: what became of the
    basket, and who answered it."""
    if click.kind == "undo":
        return Tell(click.user, TOO_LATE)
    answered = done.answered
    if answered is not None and same_edit(click, answered):
        return Tell(click.user, EDIT_MADE)
    if click.kind == "edit":
        return Tell(click.user, STALE_EDIT)
    decision = answered.response if answered is not None else None
    if isinstance(decision, BasketDecision) and decision.edited and answered is not None:
        return Tell(click.user, edited_since(answered.by))
    if isinstance(done, Counted):
        return Tell(click.user, counted_text(done.so_far, done.needed))
    decision = done.answered.response if done.answered else None
    if isinstance(decision, BasketDecision) and decision.expired_at is not None:
        return Tell(click.user, expired_text(decision.expired_at))
    by = done.answered.by if done.answered else ""
    return Tell(click.user, f"This basket was already answered{f' by <@{by}>' if by else ''}.")


def told_failed(click: Click, error: BaseException | None) -> Outcome:
    """The run failed while answering: said in the thread, the request still pending."""
    reason = describe_failure(error)
    text = f"<@{click.user}> Nothing changed: {reason}. The buttons above still work."
    return Post(text, click.message_ts)


def told_refused(click: Click, error: Exception) -> Outcome:
    """The turn could not be taken or failed: busy, gone, tampered, S3 down, a bug."""
    user, thread = click.user, click.message_ts
    if isinstance(error, SessionBusy | CheckpointConflict) and click.kind == "edit":
        return Tell(user, EDIT_NOT_SAVED)  # never lost silently: its modal has closed
    if isinstance(error, SessionBusy) and lock_taken_by(error) == user:
        return Tell(user, OWN_CLICK)  # a double click: the first one holds the lock
    if isinstance(error, SessionBusy | CheckpointConflict):
        return Tell(user, BUSY)  # (a conflict: another writer got there first)
    if isinstance(error, UnknownRequest | CheckpointNotFound | InvalidIdentifier):
        return Tell(user, GONE)
    if isinstance(error, CheckpointFromNewerVersion):
        return Tell(user, NEWER)
    if isinstance(error, WorkflowVersionRemoved):
        return _retired(click, error)
    if isinstance(error, CheckpointError):  # damaged (S3 itself down is StoreError)
        return Damaged(BROKEN, thread, click.ref.to_value())
    if isinstance(error, StoreError):
        return Post(STORE_DOWN, thread)
    return Post(WENT_WRONG, thread)


def _retired(click: Click, removed: WorkflowVersionRemoved) -> Retired:
    pending = removed.snapshot.requests.get(click.ref.request_id)
    basket = pending.data if pending is not None else None
    basket = basket if isinstance(basket, Basket) else None
    return Retired(click.message_ts, click.ref.to_value(), basket)
