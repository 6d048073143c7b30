"""Where a Slack click becomes a workflow response.

Approve, Reject and a submitted change all arrive here, in a lazy invocation with nothing in
memory. Who may answer at all (``APPROVER_IDS``) is checked before anything is read; then the
click is a :class:`bot.steps.turn.Step`: ``bot.steps.turn`` takes the session lock and resumes the
latest checkpoint, :class:`Answer` checks the click against the pending request and the requester,
and answers it with :func:`workflow.engine.respond.answer_pending`. Every refusal changes nothing
and leaves no lock; the person sees a short reason.
"""

from __future__ import annotations

from dataclasses import dataclass, replace

from bot.slack.blocks import slack_date
from bot.slack.delivery import Where
from bot.slack.outcome import (
    APPROVED,
    NEWER,
    Damaged,
    Mark,
    Outcome,
    Post,
    Report,
    Retired,
    Tell,
    describe_failure,
    outputs_of,
)
from bot.slack.payloads import GONE, Click, Kind
from workflow.engine.events import WorkflowEvent
from workflow.engine.respond import answer_pending, lock_taken_by
from workflow.engine.runner import Run, RunStatus
from workflow.engine.versions import WorkflowVersions
from workflow.errors import (
    CheckpointConflict,
    CheckpointError,
    CheckpointFromNewerVersion,
    CheckpointNotFound,
    InvalidIdentifier,
    RequestAlreadyAnswered,
    SessionBusy,
    StoreError,
    UnknownRequest,
    WorkflowVersionRemoved,
)
from workflow.persistence.checkpoint import PendingRequest
from workflow.persistence.session import SessionCheckpoints
from workflow.shop.basket import Basket, BasketDecision
from workflow.shop.graph import UNCHANGED, shop_request

from .rules import Rules
from .turn import Redelivered, Sessions, take_turn

__all__ = ["BUSY", "GONE", "OWN_CLICK", "Answer", "Click", "Kind", "answer_click"]

VERDICTS: dict[Kind, str] = {"approve": APPROVED, "reject": "Rejected", "change": "Change asked"}

BUSY = "Someone else is answering this basket right now."
OWN_CLICK = "Your earlier click on this basket is still being answered: its answer will show here."
BROKEN = (
    "This basket is damaged: its saved state did not pass its checks, so it can't be answered. "
    "*Start again* writes the same week's basket afresh."
)
WENT_WRONG = "Something went wrong answering that; nothing was ordered twice. Try again."
UNPOSTED = "I couldn't post everything to Slack just now. Press a button above to try again."
STORE_DOWN = "I couldn't reach the basket store, so nothing changed. Try again in a minute."


def verdict_of(decision: object) -> tuple[str, str]:
    """("Approved" / "Rejected" / "Change asked", the change) for a recorded decision."""
    if isinstance(decision, BasketDecision):
        if decision.expired_at is not None:
            return "Expired", ""
        if decision.approved:
            return APPROVED, ""
        if decision.change is not None:
            return "Change asked", decision.change
    return "Rejected", ""


@dataclass(frozen=True)
class Answer:
    """The click's answer to the pending request its button names."""

    click: Click
    rules: Rules

    @property
    def owner(self) -> str:
        return self.click.user

    @property
    def work(self) -> str:
        return f"click:{self.click.delivery}" if self.click.delivery else ""

    async def act(
        self, run: Run | None, workflow: WorkflowVersions, checkpoints: SessionCheckpoints
    ) -> Outcome | Redelivered:
        click = self.click
        if run is None:
            return Tell(click.user, GONE)
        try:
            request = run.pending_request(click.ref.request_id)
        except RequestAlreadyAnswered:
            return Redelivered(run.answered[click.ref.request_id])
        asked = shop_request(run)
        requester = asked.requested_by if asked is not None else ""
        refusal = self.rules.may_give(click.kind, click.user, requester, request.data.round)
        if refusal:
            return Tell(click.user, refusal)
        answered = await answer_pending(
            run, click.ref.request_id, self._decide, answered_by=click.user
        )
        if answered.run.status is RunStatus.FAILED:
            return self.failed(answered.run.error)
        mark = _mark(
            click.message_ts,
            request.data,
            VERDICTS[click.kind],
            click.user,
            click.change,
            request_id=click.ref.request_id,
        )
        return self._report(answered.events, outputs_of(answered.events), run, mark)

    def _decide(self, request: PendingRequest) -> BasketDecision:
        change = self.click.change if self.click.kind == "change" else None
        return BasketDecision(
            approved=self.click.kind == "approve", change=change, round=request.data.round
        )

    def _report(
        self, events: list[WorkflowEvent], outputs: list[str], run: Run, mark: Mark | None
    ) -> Report:
        unposted = Post(UNPOSTED, self.click.message_ts)
        thread = self.click.message_ts
        asked = shop_request(run)
        requester, text = (asked.requested_by, asked.text) if asked is not None else ("", "")
        report = Report(
            events,
            unposted,
            requester,
            outputs,
            thread_ts=thread,
            mark=mark,
            request=text,
            ended=not run.pending_requests,
        )
        if report.reasked is not None:  # said in the thread; the basket keeps its buttons
            report = replace(report, outputs=[UNCHANGED, *outputs])
        return report

    def up_to_date(self, done: Redelivered) -> Outcome:
        decision = done.answered.response if done.answered else None
        if isinstance(decision, BasketDecision) and decision.expired_at is not None:
            return Tell(self.click.user, expired_text(decision.expired_at))
        by = done.answered.by if done.answered else ""
        return Tell(
            self.click.user, f"This basket was already answered{f' by <@{by}>' if by else ''}."
        )

    def caught_up(self, run: Run, events: list[WorkflowEvent], done: Redelivered) -> Outcome:
        outputs = [] if run.pending_requests else [str(o) for o in run.outputs[-1:]]
        mark = None
        if done.answered is not None:
            answered = done.answered
            verdict, note = verdict_of(answered.response)
            expired = answered.response if isinstance(answered.response, BasketDecision) else None
            mark = _mark(
                self.click.message_ts,
                answered.data,
                verdict,
                answered.by,
                note,
                at=expired.expired_at if expired is not None else None,
                request_id=answered.request_id,
            )
        return self._report(events, outputs, run, mark)

    def failed(self, error: BaseException | None) -> Outcome:
        reason = describe_failure(error)
        text = f"<@{self.click.user}> Nothing changed: {reason}. The buttons above still work."
        return Post(text, self.click.message_ts)

    def refused(self, error: Exception) -> Outcome:
        user, thread = self.click.user, self.click.message_ts
        if isinstance(error, SessionBusy) and lock_taken_by(error) == user:
            return Tell(user, OWN_CLICK)  # a double click: the first one holds the lock
        if isinstance(error, SessionBusy | CheckpointConflict):
            return Tell(user, BUSY)  # (a conflict: another writer got there first)
        if isinstance(error, UnknownRequest | CheckpointNotFound | InvalidIdentifier):
            return Tell(user, GONE)
        if isinstance(error, CheckpointFromNewerVersion):
            return Tell(user, NEWER)
        if isinstance(error, WorkflowVersionRemoved):
            return self._retired(error)
        if isinstance(error, CheckpointError):  # damaged (S3 itself down is StoreError)
            return Damaged(BROKEN, thread, self.click.ref.to_value())
        if isinstance(error, StoreError):
            return Post(STORE_DOWN, thread)
        return Post(WENT_WRONG, thread)

    def _retired(self, removed: WorkflowVersionRemoved) -> Retired:
        pending = removed.snapshot.requests.get(self.click.ref.request_id)
        basket = pending.data if pending is not None else None
        basket = basket if isinstance(basket, Basket) else None
        return Retired(self.click.message_ts, self.click.ref.to_value(), basket)


def expired_text(at: int) -> str:
    """What a click on an expired basket is told: that it expired, and when."""
    return f"This basket expired {slack_date(at)} because nobody answered it: nothing was ordered."


def _mark(
    ts: str,
    basket: object,
    verdict: str,
    by: str,
    note: str,
    *,
    at: int | None = None,
    request_id: str = "",
) -> Mark | None:
    if not isinstance(basket, Basket):
        return None
    return Mark(ts, basket, verdict, by, note, at=at, request_id=request_id)


async def answer_click(sessions: Sessions, rules: Rules, click: Click) -> None:
    """Resume the clicked basket's session with the person's answer, and report in Slack."""
    refusal = rules.may_answer(click.user) or (None if click.ref.session_id else GONE)
    if refusal:
        sessions.outbox.tell(click.channel, click.user, refusal)
        return
    where = Where(click.tenant, click.ref.session_id, click.channel)
    await take_turn(sessions, where, Answer(click, rules))
