"""What one turn of a session did, as data for Slack: the outcome a step returns.

A step (a start, a click, a change; later a reminder or an expiry) returns one of these, and one
place turns it into Slack calls (``bot.slack.outbox.Outbox.deliver``):

    Tell      an ephemeral reply only the person who acted sees (a refusal, a stale click)
    Post      a message everyone sees, in the channel or in the basket's thread (a failure)
    Failed    the Post of a first basket that failed: the session's end, kept in the history
    Report    what the run did: outputs for the thread, new baskets with buttons, then the
              answered basket's new look (or its fresh buttons, when it is asked again
              unchanged); only a Report the channel fully shows earns a receipt
    Retired   a basket a deploy can no longer resume: why, and Start again, in its thread
    Damaged   a basket whose saved state is damaged: why, and Start again, in its thread
    Reordered an order placed again by its Retry button: that message now says where it went
    None      nothing to say

Texts in ``Tell`` and ``Post`` are our own mrkdwn (mentions we built); model- and user-written
text travels in ``Report.outputs``, ``Mark.note`` and the baskets, and is escaped when posted.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from workflow.engine.events import OutputEvent, RequestInfoEvent, WorkflowEvent
from workflow.errors import ExecutorFailed, WorkflowError
from workflow.shop.errors import ShopperError

from .blocks import slack_date

if TYPE_CHECKING:  # the workflow: imported by the lazy runs that make Reports, not by an ack
    from workflow.shop.basket import Basket, Item
    from workflow.shop.pricing import PricedBasket


APPROVED = "Approved"  # a Mark's verdict for an approved basket
EXPIRED = "Expired"  # ... and for one nobody answered in time


@dataclass(frozen=True)
class Tell:
    user: str
    text: str


@dataclass(frozen=True)
class Post:
    text: str
    thread_ts: str | None = None


@dataclass(frozen=True)
class Failed(Post):
    """A first basket that could not be written: said like any Post, and kept in the history
    as a ``failed`` outcome of ``request`` (``bot.records.history``)."""

    requested_by: str = ""
    request: str = ""
    replaces: str | None = None  # the draft that showed it being written: said there instead


@dataclass(frozen=True)
class Mark:
    """How the answered basket message reads now: the buttons replaced by who answered."""

    ts: str
    basket: Basket
    verdict: str
    by: str
    note: str = ""
    at: int | None = None  # when (default: now); an expiry's is when it was due
    request_id: str = ""  # the request it answered: its basket's timers are deleted
    approvals: tuple[str, ...] = ()  # an order a quorum approved: everyone who did, in order
    # Its prices as it was answered (shown on it still: what was approved, at what total).
    prices: PricedBasket | None = None


@dataclass(frozen=True)
class Settle:
    """A message whose button has done its work: its blocks replaced by ``text`` (ours)."""

    ts: str
    text: str


@dataclass(frozen=True)
class Retired:
    """A basket saved on a graph version a deploy removed (``workflow.engine.versions``): one
    sentence and a Start again button in its thread (``again`` is the button's value), and the
    basket's own buttons replaced, so nobody answers it twice."""

    thread_ts: str
    again: str
    basket: Basket | None


@dataclass(frozen=True)
class Damaged:
    """A basket whose session's checkpoints are damaged (tampered, corrupt, hidden behind stray
    objects): ``text`` (ours) and a Start again button in its thread (``again`` is the button's
    value). Nothing else changes: the basket keeps its buttons, which answer it again once its
    checkpoint is restored, and nothing is written or forgotten in S3."""

    text: str
    thread_ts: str
    again: str


@dataclass(frozen=True)
class OrderShown:
    """Where an approved basket's order went, for its thread (``bot.records.orders``): the
    destination and its link, or why it did not go (``failed``), with a Retry button whose
    value is the session."""

    destination: str  # canvas, instacart, webhook, kroger
    url: str = ""
    failed: str = ""
    retry: str = ""  # the Retry button's value (session and outcome record): none, no button
    sha256: str = ""  # the basket as ordered
    person: str = ""  # a cart's: whose (a Slack user ID, checked where it was read)
    products: int = 0  # a cart's: how many products it was sent
    left_out: tuple[str, ...] = ()  # a cart's: the items with no product, not in it


@dataclass(frozen=True)
class Reordered:
    """A Retry of an order that did not go through: its message (``ts``) now says where the
    order went (or, again, why not), above the items ordered."""

    ts: str
    text: str  # ours: "Ordered 17 items."
    items: list[Item]
    order: OrderShown


@dataclass(frozen=True)
class Report:
    """What a run did. ``unposted`` is said instead when a new message could not be posted
    (the answered basket then keeps its buttons: the way to retry)."""

    events: list[WorkflowEvent]
    unposted: Post
    requested_by: str = ""
    outputs: list[str] = field(default_factory=list)
    thread_ts: str | None = None
    mark: Mark | None = None
    settle: Settle | None = None
    request: str = ""  # what was asked (shown on each new basket beside who asked)
    household: str = ""  # the household it was asked for ("For 4 · no pork"), shown beside it
    ended: bool = False  # the run is over: its outcome is kept (``bot.records.history``)
    # Who has approved the basket asked about so far, of how many needed (a quorum): shown on
    # it ("Approved by @alice · 1 of 2 needed") while it waits for the others.
    approvals: tuple[str, ...] = ()
    needed: int = 1
    # Who approved it too but no longer counts: not an approver since Settings changed.
    uncounted: tuple[str, ...] = ()
    order: OrderShown | None = None  # an approved basket's order, once placed (or not)
    # The basket asked about is approved and held for its undo window until then (epoch
    # seconds): it shows Undo only, and its order timer is armed.
    held_until: int | None = None
    # Who last edited the basket asked about by hand, and what they changed (Edit items):
    # shown on it ("Basket 1 · edited by @bob: −pizza dough, milk 1 → 2 l").
    edited: tuple[str, str] | None = None
    # The prices of the basket asked about (``workflow.shop.pricing``): shown beside its items,
    # with its total; None where it was never priced.
    prices: PricedBasket | None = None
    # Our own lines for the thread, before the outputs: mrkdwn whose mentions we built from
    # IDs Slack gave ("Undo pressed by @carol: …"), never model or user text.
    said: tuple[str, ...] = ()
    # The message that showed basket ``draft_round`` while it was written (``bot.slack.draft``:
    # a /shop's basket 1, or the basket a change asked for): it becomes the basket, updated in
    # place, instead of a new message.
    draft_ts: str | None = None
    draft_round: int = 1

    @property
    def baskets(self) -> list[RequestInfoEvent]:
        """The requests the run asked about, each a basket to post with fresh buttons."""
        from workflow.shop.basket import Basket

        return [
            e for e in self.events if isinstance(e, RequestInfoEvent) and isinstance(e.data, Basket)
        ]

    @property
    def reasked(self) -> RequestInfoEvent | None:
        """The answered basket asked about again, unchanged (a change that changed nothing is
        the same round, ``workflow.shop.executors.UNCHANGED``; so is an approval a quorum still
        waits on): its message keeps its buttons, bound to the new request, and no new basket
        is posted."""
        mark = self.mark
        same = [e for e in self.baskets if mark is not None and e.data.round == mark.basket.round]
        return same[0] if same else None

    @property
    def ordered(self) -> Basket | None:
        """The basket this run ordered: the one it approved (its outcome lists the items), not
        one a quorum still waits on."""
        mark = self.mark
        if mark is None or mark.verdict != APPROVED or self.reasked is not None:
            return None
        return mark.basket

    @property
    def progress(self) -> str:
        """The run's last step, for the household ("basket written: 11 items"); the model's
        token count is for the logs (:attr:`written`)."""
        from workflow.shop.basket import ShopProgress

        steps = [e for e in self.events if isinstance(e, ShopProgress)]
        if not steps:
            return "waiting for an answer"
        last = steps[-1]
        return f"{last.step}: {last.detail}" if last.detail else last.step

    @property
    def written(self) -> str:
        """The run's last step with its detail ("basket written: 11 items, 88 output tokens"),
        for the logs."""
        from workflow.shop.basket import ShopProgress

        steps = [e for e in self.events if isinstance(e, ShopProgress)]
        if not steps:
            return "no step"
        last = steps[-1]
        tokens = "" if last.output_tokens is None else f", {last.output_tokens} output tokens"
        return f"{last.step}: {last.detail}{tokens}"


Outcome = Tell | Post | Report | Retired | Damaged | Reordered | None

# During a deploy or a rollback old and new code run side by side: a checkpoint the newer one
# wrote is fine, and waits for it (never "tampered", never "start again").
NEWER = (
    "This basket was saved by a newer version of weekly-shop; it will resume once that version "
    "is deployed again."
)


RETIRED = (
    "This basket was saved by a version of weekly-shop that has since been retired, so it can't "
    "be answered any more: *Start again* writes the same week's basket afresh."
)


BROKEN = (
    "This basket is damaged: its saved state did not pass its checks, so it can't be answered. "
    "*Start again* writes the same week's basket afresh."
)
STORE_DOWN = "I couldn't reach the basket store, so nothing changed. Try again in a minute."


def held_text(until: int) -> str:
    """What a click other than Undo on a held basket is told."""
    return (
        f"This basket is approved and will be ordered {slack_date(until)}. "
        "Press *Undo* on it to stop the order."
    )


def outputs_of(events: list[WorkflowEvent]) -> list[str]:
    return [str(e.data) for e in events if isinstance(e, OutputEvent)]


def describe_failure(error: BaseException | None) -> str:
    """A short, safe reason for a person; details stay in the logs."""
    cause = error.cause if isinstance(error, ExecutorFailed) else error
    if isinstance(cause, ShopperError):
        return cause.reason
    if isinstance(cause, WorkflowError):
        return "the basket could not be saved"
    return "something went wrong"
