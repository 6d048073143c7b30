"""A Change…'s draft message: the basket it asks for, shown while the model writes it (issue
36, 2), in a message of its own that then becomes that basket (``bot.steps.drafting`` claims,
posts and records it, as it does a /shop's).

:class:`ChangeDraft` is what ``workflow.shop.shopper_stream.DRAFT`` holds while a click's run
writes the change (:func:`showing`). What it says is true whatever happens:

- the model asked: posted, "@bob asked for a change of basket 1", then each operation as it
  ends ("Removing pizza bases", "Adding 1 l oat milk"), an added item flagged as the basket
  flags it;
- basket 2 came of it: the outbox updates this message into basket 2 (``Report.draft_ts``,
  :func:`settled_report`), also when a later step (any click, a timer) catches up on the
  change's saved work after its process died (:func:`caught_up_report`);
- no basket came of it (the run failed, broke, or left the basket as it was): it says so, and is
  forgotten, so that the next change of that basket posts its own;
- Lambda gave up on the run: ``drafting.said_lost`` says so there.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable
from dataclasses import replace
from typing import TYPE_CHECKING, TypeVar

from bot.records.drafts import change_draft
from bot.slack.draft import Draft
from bot.slack.outcome import Outcome, Report
from workflow.shop.decision import BasketDecision
from workflow.shop.run_state import changes_of, shop_request
from workflow.shop.shopper_stream import DRAFT

from .drafting import Drafting, light_client
from .whom import household_line

if TYPE_CHECKING:
    from workflow.engine.runner import Run
    from workflow.shop.basket import Item, ShopRequest
    from workflow.shop.revision import Change

T = TypeVar("T")

UNCHANGED_DRAFT = (
    "No new basket came of this change: it left the basket as it was, and that one is asked "
    "about again."
)


class ChangeDraft:
    """The draft of the basket a Change… asks for (issue 36, 2): what ``DRAFT`` holds while the
    click's run writes it. Its message is posted only once the model is asked (:meth:`begin`,
    from ``shopper_stream``): a change past the last round, or one the offline shopper answers
    at once, posts none. The operations stream into it ("Removing pizza dough", "Adding 1 l oat
    milk"); the revised basket then takes its place (:meth:`settled`), or it says why none came.
    A redelivered click finds the same message (its object is named for the answered request)."""

    def __init__(
        self, drafting: Drafting, request: ShopRequest, change: tuple[str, str], round: int
    ):
        self.drafting, self.request, self.change, self.round = drafting, request, change, round
        self.draft: Draft | None = None
        self.begun = False
        self.basket = False  # found already recorded as becoming the basket: never said failed

    @classmethod
    def of(
        cls, drafting: Drafting, run: Run, answered: str, round: int, by: str, change: str
    ) -> ChangeDraft | None:
        """The draft of basket ``round`` that the change ``change`` (of request ``answered``, by
        ``by``) asks for; None for a run started from text (no request to show)."""
        request = shop_request(run)
        if request is None:
            return None
        shown = replace(
            drafting,
            household=household_line(request),
            said=(*changes_of(run), change),
            name=change_draft(answered),
        )
        return cls(shown, request, (by, change), round)

    def find(self) -> ChangeDraft:
        """The draft an earlier delivery of the click posted and recorded, if any (a retry
        that finds the click's run done: the basket goes there, or it says none came)."""
        ts = self.drafting.shown()
        self.basket = ts is not None and self.drafting.becomes_basket()
        if ts is not None:
            request, where = self.request, self.drafting.where
            asked = (request.requested_by, request.text, self.drafting.household)
            web = self.drafting.outbox.web
            draft = Draft(light_client(web), where.channel, ts, asked, round=self.round)
            draft.change, draft.final = self.change, web
            self.draft = draft
        self.begun = True
        return self

    def begin(self) -> None:
        if not self.begun:  # once: a second ask (a rule broken) writes into the same draft
            self.begun = True
            self.draft = self.drafting.open(self.request, self.change, self.round)

    def __call__(self, items: list[Item]) -> None:
        if self.draft is not None:
            self.draft(items)

    def changed(self, changes: list[Change]) -> None:
        if self.draft is not None:
            self.draft.changed(changes)

    def flush(self) -> None:
        if self.draft is not None:
            self.draft.flush()

    def stop(self, said: str = "") -> None:
        """No basket came of the change (the run failed or broke, or the change left the basket
        as it was): the draft says so for good, and is forgotten, so that the next change of
        the same basket (a new click) posts its own instead of rewriting this one."""
        if self.draft is not None and self.draft.stop(said):
            self.drafting.forget()

    def settled(self, written: bool) -> str | None:
        """After the run: with ``written`` (basket ``round`` came of the change), the draft's
        ts, recorded as becoming that basket; else the draft says no basket came, and None."""
        draft = self.draft
        if draft is None:
            return None
        if not written:
            if not self.basket:
                self.stop(UNCHANGED_DRAFT)
            return None
        draft.status("")
        self.drafting.settle(draft.ts)
        return draft.ts


async def showing(draft: ChangeDraft | None, work: Awaitable[T]) -> T:
    """``work`` (a click's run) with ``draft`` shown while the shopper writes; if it breaks,
    the draft says no basket came of it (the turn says why)."""
    token = DRAFT.set(draft)
    try:
        return await work
    except BaseException:
        if draft is not None:
            await asyncio.to_thread(draft.stop)
        raise
    finally:
        DRAFT.reset(token)


def settled_report(report: Report, draft: ChangeDraft | None) -> Report:
    """``report`` posting the basket a change asked for in its draft, once that basket came;
    else the draft says none came (:meth:`ChangeDraft.settled`)."""
    if draft is None or draft.draft is None:
        return report
    written = any(event.data.round == draft.round for event in report.baskets)
    return replace(report, draft_ts=draft.settled(written), draft_round=draft.round)


def caught_up_report(drafting: Drafting, run: Run, outcome: Outcome) -> Outcome:
    """A step's catch-up on saved work (its own, or a change's whose process died): if the run's
    last change left a draft recorded, the basket it asked for goes there, or it says none came;
    a draft already recorded as becoming its basket is left as it is."""
    changes = [
        done
        for done in run.answered.values()
        if isinstance(done.response, BasketDecision) and done.response.change is not None
    ]
    if not isinstance(outcome, Report) or not changes or outcome.draft_ts is not None:
        return outcome
    last, decision = changes[-1], changes[-1].response
    draft = ChangeDraft.of(
        drafting, run, last.request_id, decision.round + 1, last.by, decision.change or ""
    )
    return settled_report(outcome, None if draft is None else draft.find())
