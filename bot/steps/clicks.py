"""Where a Slack click becomes a workflow response.

Approve, Reject, a submitted change and a submitted edit (Edit items) all arrive here, in a
lazy invocation with nothing in memory. Who may answer at all (``APPROVER_IDS``) is checked
before anything is read; then the click is a :class:`bot.steps.turn.Step`: ``bot.steps.turn``
takes the session lock and resumes the latest checkpoint, :class:`Answer` checks the click
against the pending request and the requester, and answers it with
:func:`workflow.engine.respond.answer_pending`. Every refusal changes nothing and leaves no lock;
the person sees a short reason (``bot.steps.click_said``: what a redelivery, a failed run or a
turn that could not be taken says).

A quorum (``Rules.approvals_needed`` above 1): an approval carries everyone's so far, read from
the checkpoint under the lock, and the rule at this click. One that leaves the basket short is
counted and the basket asked again (a new request, the same message, its buttons rebound, "Approved
by @alice · 1 of 2 needed"); the same person again is told their approval is counted, and nothing
is written; a click on the buttons before that re-ask answers the basket's request now pending.

An edit (Edit items, ``bot.steps.edit`` fills its form in) is applied to the pending request's
basket only if that is the basket the form showed (its SHA-256): the edited basket is asked
about again, the same round and the same message, the approvals starting again (graph version
4's ``edit-basket``). A click from a screen still showing the basket before an edit is told who
edited it since, and approves nothing it did not see.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable
from dataclasses import dataclass, replace

from bot import metrics
from bot.slack.delivery import Where
from bot.slack.outcome import Mark, Outcome, Post, Report, Tell, held_text, outputs_of
from bot.slack.payloads import GONE, Click, Kind
from workflow.engine.events import WorkflowEvent
from workflow.engine.respond import answer_pending
from workflow.engine.runner import Run, RunStatus
from workflow.engine.versions import WorkflowVersions
from workflow.errors import RequestAlreadyAnswered
from workflow.persistence.checkpoint import AnsweredRequest, PendingRequest
from workflow.persistence.session import SessionCheckpoints
from workflow.shop.basket import Basket, Item, ShopProgress
from workflow.shop.decision import BasketDecision
from workflow.shop.executors import UNCHANGED, UNCHANGED_STEP
from workflow.shop.run_state import approvals_of, approved_since, held_of, prices_of, shop_request

from .change_drafts import ChangeDraft, settled_report, showing
from .click_marks import VERDICTS, mark_of, ordered_by, prices_for, undone_text, verdict_of
from .click_said import told_counted, told_failed, told_refused, told_up_to_date
from .drafting import Drafting
from .edit import edited_by, edited_for, same_edit
from .rules import Rules
from .turn import Redelivered, Sessions, take_turn
from .whom import household_line

__all__ = ["GONE", "Answer", "Click", "Kind", "answer_click", "undone_text"]

UNPOSTED = "I couldn't post everything to Slack just now. Press a button above to try again."
NOTHING_TO_UNDO = "There is nothing to undo: this basket is waiting for approval."


@dataclass(frozen=True)
class Answer:
    """The click's answer to the pending request its button names."""

    click: Click
    rules: Rules
    clock: Callable[[], float] = time.time  # the bot's: an approval is held from its now
    drafting: Drafting | None = None  # where a change's basket is shown while it is written

    @property
    def owner(self) -> str:
        return self.click.user

    @property
    def work(self) -> str:
        return f"click:{self.click.delivery}" if self.click.delivery else ""

    @property
    def patient(self) -> bool:
        """An edit waits even for its own person's earlier click: its modal has closed."""
        return self.click.kind == "edit"

    async def act(
        self, run: Run | None, workflow: WorkflowVersions, checkpoints: SessionCheckpoints
    ) -> Outcome | Redelivered:
        click = self.click
        if run is None:
            return Tell(click.user, GONE)
        try:
            request = run.pending_request(click.ref.request_id)
        except RequestAlreadyAnswered:
            done = run.answered[click.ref.request_id]
            if same_edit(click, done):
                return Redelivered(done)  # a retry of this edit's lazy run
            followed = self._asked_again(run, done)
            if isinstance(followed, Redelivered):
                return followed
            request = followed
        held = held_of(run, request.data.round)
        if held is not None and click.kind != "undo":
            return Tell(click.user, held_text(held.hold_until or 0))
        if held is None and click.kind == "undo":
            return Tell(click.user, NOTHING_TO_UNDO)
        approvals = self.rules.counting(approvals_of(run, request.data.round))
        needed = self.rules.quorum
        if click.kind == "approve" and click.user in approvals and len(approvals) < needed:
            return told_counted(click, run, request.data.round, len(approvals), needed)
        asked = shop_request(run)
        requester = asked.requested_by if asked is not None else ""
        refusal = self.rules.may_give(click.kind, click.user, requester, request.data.round)
        if refusal:
            return Tell(click.user, refusal)
        edited = edited_for(click, request.data)
        if isinstance(edited, str):
            return Tell(click.user, edited)
        priced = prices_of(run, request.data.round)  # the answered basket's, before a change's
        draft = self._draft(run, request)
        decide = self._decide(approvals, edited)
        answered = await showing(
            draft, answer_pending(run, request.request_id, decide, answered_by=click.user)
        )
        if answered.run.status is RunStatus.FAILED:
            if draft is not None:
                await asyncio.to_thread(draft.stop)
            return self.failed(answered.run.error)
        decision = answered.run.answered[request.request_id].response
        metrics.answered(decision, click.message_ts, self.clock())
        mark = mark_of(
            click.message_ts,
            request.data,
            VERDICTS[click.kind],
            click.user,
            click.change,
            request_id=request.request_id,
            approvals=ordered_by(answered.run.answered[request.request_id].response),
            prices=priced,
        )
        report = self._report(answered.events, outputs_of(answered.events), run, mark)
        return await asyncio.to_thread(settled_report, report, draft)

    def _draft(self, run: Run, request: PendingRequest) -> ChangeDraft | None:
        """A change's draft of the basket it asks for (posted once the model is asked; a
        catch-up on its saved work finds it: ``turn.catch_up``)."""
        click, drafting = self.click, self.drafting
        if click.kind != "change" or drafting is None or not isinstance(request.data, Basket):
            return None
        round = request.data.round + 1
        return ChangeDraft.of(drafting, run, request.request_id, round, click.user, click.change)

    def _asked_again(self, run: Run, done: AnsweredRequest) -> PendingRequest | Redelivered:
        """The clicked request was answered before. If that answer was an approval a quorum
        still waited on, the same basket was asked again: the click (from a screen not yet
        updated, or sent while that approval was being counted) answers the request now pending
        for it. Otherwise it is a redelivery of a click whose work is done, or a late one."""
        decision = done.response
        asked_again = isinstance(decision, BasketDecision) and (
            not decision.quorum_reached or decision.held or decision.undo
        )
        if asked_again and isinstance(decision, BasketDecision):
            for pending in run.pending_requests.values():
                if isinstance(pending.data, Basket) and pending.data.round == decision.round:
                    return pending
            return Redelivered(list(run.answered.values())[-1])  # what became of it since
        return Redelivered(done)

    def _decide(
        self, approvals: list[str], edited: list[Item] | None = None
    ) -> Callable[[PendingRequest], BasketDecision]:
        """The click's answer: an approval names everyone's so far that still counts
        (``Rules.counting``) and this person's, and the approvals the basket needs now
        (``Rules.quorum``); an edit, the items it leaves."""
        click = self.click

        def decide(request: PendingRequest) -> BasketDecision:
            if click.kind == "undo":
                return BasketDecision.undone(request.data.round)
            if edited is not None:
                return BasketDecision.edited_to(edited, request.data.round)
            approved = click.kind == "approve"
            decision = BasketDecision(
                approved=approved,
                change=click.change if click.kind == "change" else None,
                round=request.data.round,
                approvals=tuple(dict.fromkeys((*approvals, click.user))) if approved else (),
                needed=self.rules.quorum,
            )
            hold = self.rules.hold_seconds
            if approved and decision.quorum_reached and hold > 0:  # the undo window
                return replace(decision, hold_until=int(self.clock()) + hold)
            return decision

        return decide

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
            household=household_line(asked) if asked is not None else "",
            ended=not run.pending_requests,
            approvals=tuple(approvals_of(run)),
            uncounted=self._uncounted(run),
            needed=self.rules.quorum,
            held_until=held.hold_until if (held := held_of(run)) is not None else None,
            edited=edited_by(run),
            prices=prices_of(run),
        )
        changed = mark is not None and mark.verdict == VERDICTS["change"]
        if changed and report.reasked is not None:  # said in the thread; it keeps its buttons
            said = next(  # "Couldn't apply: no fish. That didn't change the basket."
                (
                    e.detail
                    for e in events
                    if isinstance(e, ShopProgress) and e.step == UNCHANGED_STEP
                ),
                UNCHANGED,
            )
            report = replace(report, outputs=[said, *outputs])
        if mark is not None and mark.verdict == VERDICTS["undo"]:
            report = replace(report, said=(undone_text(mark.by),))
        return report

    def _uncounted(self, run: Run) -> tuple[str, ...]:
        """Who approved the basket now asked about but no longer counts (not an approver now)."""
        waiting = [p.data for p in run.pending_requests.values() if isinstance(p.data, Basket)]
        if not waiting:
            return ()
        given = approved_since(run, waiting[0].round)
        return tuple(user for user in given if not self.rules.counts(user))

    def up_to_date(self, done: Redelivered) -> Outcome:
        return told_up_to_date(self.click, done)

    def caught_up(self, run: Run, events: list[WorkflowEvent], done: Redelivered) -> Outcome:
        outputs = [] if run.pending_requests else [str(o) for o in run.outputs[-1:]]
        mark = None
        if done.answered is not None:
            answered = done.answered
            verdict, note = verdict_of(answered.response)
            expired = answered.response if isinstance(answered.response, BasketDecision) else None
            mark = mark_of(
                self.click.message_ts,
                answered.data,
                verdict,
                answered.by,
                note,
                at=expired.expired_at if expired is not None else None,
                request_id=answered.request_id,
                approvals=ordered_by(answered.response),
                prices=prices_for(run, answered.data),
            )
        return self._report(events, outputs, run, mark)

    def failed(self, error: BaseException | None) -> Outcome:
        return told_failed(self.click, error)

    def refused(self, error: Exception) -> Outcome:
        return told_refused(self.click, error)


async def answer_click(sessions: Sessions, rules: Rules, click: Click) -> None:
    """Resume the clicked basket's session with the person's answer, and report in Slack."""
    refusal = rules.may_answer(click.user) or (None if click.ref.session_id else GONE)
    if refusal:
        sessions.outbox.tell(click.channel, click.user, refusal)
        return
    where = Where(click.tenant, click.ref.session_id, click.channel)
    drafting = None
    if sessions.drafts is not None and click.kind == "change":
        drafting = Drafting(sessions.drafts, sessions.outbox, where)
    await take_turn(sessions, where, Answer(click, rules, sessions.clock, drafting))
