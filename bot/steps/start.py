"""Where a ``/shop`` command, the weekly schedule or a Start again becomes a new session.

The session ID is derived from what Slack (the command's trigger ID) or EventBridge (the event ID)
sent, so a redelivered lazy invocation or a retried event finds the session already started:
it is a :class:`bot.steps.turn.Step` like a click, and ``bot.steps.turn`` posts basket 1 if the
first delivery died before the basket reached Slack, or does nothing if it did.
"""

from __future__ import annotations

import asyncio
import dataclasses
import logging
from dataclasses import dataclass

from bot.slack.delivery import Where
from bot.slack.outcome import NEWER, Failed, Outcome, Post, Report, Settle, Tell, describe_failure
from bot.slack.payloads import GONE, Click, Shop, session_id_for
from workflow.engine.events import WorkflowEvent
from workflow.engine.runner import Run, RunStatus
from workflow.engine.versions import WorkflowVersions
from workflow.errors import (
    CheckpointConflict,
    CheckpointError,
    CheckpointFromNewerVersion,
    CheckpointNotFound,
    InvalidIdentifier,
    SessionBusy,
    StoreError,
    WorkflowVersionRemoved,
)
from workflow.persistence.checkpoint import decode_snapshot
from workflow.persistence.session import SessionCheckpoints
from workflow.shop.basket import ShopRequest
from workflow.shop.household import Household
from workflow.shop.run_state import prices_of, shop_request
from workflow.shop.shopper_stream import DRAFT

from .drafting import Drafting
from .rules import Rules
from .turn import Redelivered, Sessions, take_turn
from .whom import household_line

log = logging.getLogger(__name__)
AGAIN = "Try /shop again."
TRY_AGAIN = f"I couldn't start a basket just now. {AGAIN}"


@dataclass(frozen=True)
class Start:
    """Basket 1 of ``request``, posted in the channel; with ``drafting``, shown while it is
    written, in the message that then becomes it (``bot.steps.drafting``)."""

    request: ShopRequest
    session_id: str
    drafting: Drafting | None = None

    @property
    def owner(self) -> str:
        return f"start:{self.session_id}"

    @property
    def work(self) -> str:
        return self.owner  # the session ID already names the command (or scheduled run)

    @property
    def patient(self) -> bool:
        return False

    def _who(self) -> str:
        return f"<@{self.request.requested_by}> " if self.request.requested_by else ""

    async def act(
        self, run: Run | None, workflow: WorkflowVersions, checkpoints: SessionCheckpoints
    ) -> Outcome | Redelivered:
        if run is not None:
            return Redelivered()
        drafting = self.drafting
        draft = None if drafting is None else await asyncio.to_thread(drafting.open, self.request)
        shown = DRAFT.set(draft)
        try:
            run = Run.start(workflow, self.request, checkpoints)
            events = [event async for event in run.watch()]
        except BaseException:
            if draft is not None:  # the turn says why; the draft must not say "being written"
                await asyncio.to_thread(draft.stop)
            raise
        finally:
            DRAFT.reset(shown)
        if draft is not None:  # written (or not): the basket or the reason takes its place
            await asyncio.to_thread(draft.status, "")
        if run.status is RunStatus.FAILED:
            log.error("first basket failed: %r", run.error)
            return Failed(
                f"{self._who()}No basket this time: {describe_failure(run.error)}. {AGAIN}",
                requested_by=self.request.requested_by,
                request=self.request.text,
                replaces=None if draft is None else draft.ts,
            )
        if drafting is not None and draft is not None:
            await asyncio.to_thread(drafting.settle, draft.ts)
        return self._report(events, run, None if draft is None else draft.ts)

    def _report(self, events: list[WorkflowEvent], run: Run, draft_ts: str | None = None) -> Report:
        unposted = Post(f"{self._who()}Your basket is written but I couldn't post it. {AGAIN}")
        asked = self.request
        return Report(
            events,
            unposted,
            requested_by=asked.requested_by,
            request=asked.text,
            household=household_line(asked),
            prices=prices_of(run),
            draft_ts=draft_ts,
        )

    def up_to_date(self, done: Redelivered) -> Outcome:
        log.info("session already started; redelivery ignored")
        return None

    def caught_up(self, run: Run, events: list[WorkflowEvent], done: Redelivered) -> Outcome:
        log.warning("basket 1 never reached Slack; posting it now")
        drafted = None if self.drafting is None else self.drafting.shown()
        if self.drafting is not None and drafted is not None:
            self.drafting.settle(drafted)
        return self._report(events, run, drafted)

    def failed(self, error: BaseException | None) -> Outcome:
        """A saved run that failed when a retry caught up on it: said where its draft, if it
        had one, would otherwise say "being written" for ever."""
        text = f"No basket this time: {describe_failure(error)}. {AGAIN}"
        drafted = None if self.drafting is None else self.drafting.shown()
        if drafted is None:
            return Post(text)
        asked = self.request
        return Failed(text, requested_by=asked.requested_by, request=asked.text, replaces=drafted)

    def refused(self, error: Exception) -> Outcome:
        if isinstance(error, SessionBusy | CheckpointConflict):
            return None  # another delivery of this start is doing it
        if isinstance(error, CheckpointFromNewerVersion):
            return Post(NEWER)
        return Post(TRY_AGAIN)


def cannot_post_here(channel: str) -> str:
    if channel.startswith("D"):
        return (
            "I can't post in this conversation. Try `/shop` in a channel, after adding me "
            "there with `/invite @weekly-shop`."
        )
    return "I can't post in this channel: add me with `/invite @weekly-shop`, then try again."


def start_command(sessions: Sessions, shop: Shop, household: Household | None = None) -> None:
    """A lazy listener's work: basket 1 of a ``/shop`` command, for the workspace's household,
    shown while it is written where the deploy keeps drafts."""
    home = household or Household()
    request = ShopRequest(text=shop.text, requested_by=shop.user, household=home)
    drafting = None
    if sessions.drafts is not None:
        drafting = Drafting(sessions.drafts, sessions.outbox, shop.where, household_line(request))
    asyncio.run(start_session(sessions, shop.where, request, drafting))


async def start_session(
    sessions: Sessions, where: Where, request: ShopRequest, drafting: Drafting | None = None
) -> None:
    """Write basket 1 for ``request`` and post it in the channel (or say why not).

    Before any lock or model call, one ``conversations.info`` asks Slack whether the bot may
    post here. Where it may not (a public channel it was never added to, a private channel or a
    DM between people it is not in), the person hears why through the command's response_url,
    which works wherever the command was typed, and nothing is started: no model call, no
    session, no lock. If Slack cannot say (a network error), the start goes on.
    """
    if where.reply_url and sessions.outbox.may_post(where.channel) is False:
        log.info("not a member of %s; nothing started", where.channel)
        sessions.outbox.reply(where.reply_url, cannot_post_here(where.channel))
        return
    await take_turn(sessions, where, Start(request, where.session_id, drafting))


# -- Start again: a basket whose graph version a deploy removed, or whose checkpoints are
# damaged (``bot.steps.clicks``), as a new session ------------------------------------------------

ALREADY_AGAIN = "This week was already started again: its basket is in the channel."
STILL_WAITING = "This basket can still be answered: use its own buttons."
NO_REQUEST = "I couldn't find what this basket was asked for. Start again with /shop."
BEING_STARTED = "Someone already pressed Start again: the new basket is on its way."
UNREADABLE = "I couldn't read this basket's saved request, so nothing started. Try again."


@dataclass(frozen=True)
class StartAgain(Start):
    """Basket 1 of a retired basket's request, in a session of its own; the Start again
    message loses its button once the basket is posted."""

    by: str = ""
    message_ts: str = ""
    delivery: str = ""  # the click's, so only a retry of this press takes its lock over

    @property
    def work(self) -> str:
        return f"again:{self.delivery}" if self.delivery else ""

    def _report(self, events: list[WorkflowEvent], run: Run, draft_ts: str | None = None) -> Report:
        settle = Settle(self.message_ts, f"<@{self.by}> started this week again.")
        return dataclasses.replace(super()._report(events, run, draft_ts), settle=settle)

    def up_to_date(self, done: Redelivered) -> Outcome:
        return Tell(self.by, ALREADY_AGAIN)

    def refused(self, error: Exception) -> Outcome:
        if isinstance(error, SessionBusy | CheckpointConflict):
            return Tell(self.by, BEING_STARTED)  # someone else's press is starting it
        return super().refused(error)


async def request_to_start_again(
    sessions: Sessions, tenant: str, session_id: str, request_id: str
) -> ShopRequest | str:
    """The request of a session saved on a graph version the code removed, or of one whose
    checkpoints are damaged; or what to tell the person instead. Only reads: neither session is
    ever written again by Start again.

    The clicked basket must still be what the session waits on: a session that older code
    answered after the Retired message was shown (a rollback in between) has moved on, and its
    week is not started twice.
    """
    try:
        run = await Run.resume(sessions.workflow(), sessions.checkpoints(tenant, session_id))
    except WorkflowVersionRemoved as removed:
        if request_id not in removed.snapshot.requests:
            return GONE
        return shop_request(removed.snapshot) or NO_REQUEST
    except CheckpointFromNewerVersion:
        return NEWER
    except (CheckpointNotFound, InvalidIdentifier):
        return GONE
    except CheckpointError:  # damaged: what an earlier checkpoint says was asked
        return await damaged_request(sessions, tenant, session_id, request_id)
    except StoreError as exc:
        log.warning("Start again: the session could not be read: %s", exc)
        return UNREADABLE
    return GONE if run is None or not run.pending_requests else STILL_WAITING


async def damaged_request(
    sessions: Sessions, tenant: str, session_id: str, request_id: str
) -> ShopRequest | str:
    """The request of a session whose newest checkpoint cannot be read or trusted, from its
    newest checkpoint that still verifies and decodes (every one is signed, and the request is
    in each from the first on); what to tell the person if none does, or if that one had
    answered the clicked basket or ended (its week is not started twice)."""
    checkpoints = sessions.checkpoints(tenant, session_id)
    registry = sessions.workflow().current().registry
    try:
        history = await checkpoints.history()  # oldest first; objects without metadata left out
        for info in reversed(history):
            try:
                record = await asyncio.to_thread(
                    checkpoints.store.read, tenant, session_id, info.checkpoint_id
                )
                if record is None:
                    continue
                checkpoints.verify(record)
                snapshot = decode_snapshot(record.state, registry)
            except CheckpointError:
                continue  # damaged too: an older one may not be
            if request_id in snapshot.answered or not (snapshot.requests or snapshot.queue):
                return GONE
            return shop_request(snapshot) or NO_REQUEST
    except StoreError as exc:
        log.warning("Start again: the damaged session's history could not be read: %s", exc)
        return UNREADABLE
    return NO_REQUEST


async def start_again(sessions: Sessions, rules: Rules, click: Click) -> None:
    """A Start again click: the retired (or damaged) session's request, started afresh.

    The new session's ID is derived from the retired one's, so a second click (by anyone) or a
    retried delivery finds it started, and the week gets one new basket; the retired session
    cannot be resumed, so it can order nothing.
    """
    refusal = rules.may_answer(click.user) or (None if click.ref.session_id else GONE)
    request = refusal or await request_to_start_again(
        sessions, click.tenant, click.ref.session_id, click.ref.request_id
    )
    if isinstance(request, str):
        sessions.outbox.tell(click.channel, click.user, request)
        return
    session_id = session_id_for("again", click.tenant, click.ref.session_id)
    where = Where(click.tenant, session_id, click.channel)
    step = StartAgain(
        request, session_id, by=click.user, message_ts=click.message_ts, delivery=click.delivery
    )
    await take_turn(sessions, where, step)
