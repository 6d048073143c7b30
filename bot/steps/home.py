"""Where the app's Home tab is read and published, and where Repeat this order starts a basket.

Opening the Home tab (``app_home_opened``) publishes, for that person and workspace, what waits
and what became of the last baskets (``bot.slack.home_view``). What it reads, all under the
workspace's own prefixes and never a checkpoint's payload:

    1 LIST     the newest outcome records' names (``bot.records.history``, at most 1,000: which
               sessions ended, and the outcomes to show), and after them the feedback records'
               (``bot.records.feedback``), each with when it was written
    ≤ 10 GET   the outcomes shown
    ≤ 10 GET   the newest feedback of the last 4 weeks (none when there is none)
    1 LIST     the sessions' objects (one page per 1,000 objects: sessions live 30 days at
               most, a waiting one keeps about three), each receipt with when it was written
    ≤ 20 HEAD  the newest receipts of sessions not ended: each says which basket waits

so a workspace with 500 past outcomes costs what one with 1 costs, and one with 300 baskets
waiting what one with 20 costs (the tab says older ones were not read). A failed first basket
never appeared in its channel: only the person who asked for it sees it among the outcomes.

Undo, on a basket approved and held for its undo window, is that basket's own Undo: the session
and request come from the button, the channel and message from the session's receipt (never
from the button), only a member of that channel may press it, and it is one turn of the session
under its lock (``bot.steps.clicks``), refused as on the basket once the order went. What the
basket's button would tell the person in the channel is said on their Home tab instead.

Show items and Hide items publish it again with one outcome's items open. Repeat this order
starts a new session in the order's channel whose basket 1 is that order again, through the
normal turn (lock, approvers, reminders), without a model call: its shopper hands back the
recorded items.

(A little over 300 lines: what the Home tab reads, within its request budget, and Repeat
this order, which starts from what it shows, stay together.)
"""

from __future__ import annotations

import asyncio
import dataclasses
import logging
from collections.abc import Callable
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any

from bot.records.feedback import feedback_beside, newest_said
from bot.records.history import session_of
from bot.slack.home_view import FEEDBACK_DAYS, MAX_OUTCOMES, failed_view, home_view
from bot.slack.outbox import Outbox
from bot.slack.settings_summary import problem_notice, settings_rows
from workflow.errors import StoreError

from .rules import closed_text

if TYPE_CHECKING:
    from slack_sdk import WebClient

    from bot.records.history import History
    from bot.records.receipts import Receipts, Waiting
    from bot.records.timers import Timers
    from bot.records.workspace_settings import WorkspaceSettings
    from bot.records.workspace_settings_store import Loaded
    from bot.settings import Settings
    from bot.slack.payloads import Click
    from workflow.persistence.store import CheckpointStore
    from workflow.shop.shopper import Brief, ShopperReply

    from .turn import Sessions

log = logging.getLogger(__name__)

LISTED = 1000  # outcome names listed to know which sessions ended (one LIST page)
# Receipts HEADed, newest first. The tab shows 10 waiting baskets (MAX_WAITING, within the
# 100-block view); 20 leaves room for those in channels the viewer is not in. HEADs run one
# after another, tens of ms each inside AWS, so 20 stay well under a second of the lazy
# Lambda's time, where 300 took several and a few thousand passed its timeout.
READ_WAITING = 20
UNREADABLE = "I couldn't read the baskets just now. Open this tab again in a minute."


@dataclass(frozen=True)
class HomeTab:
    """What the Home tab reads and publishes, and no more: ``bot.runtime`` builds it (the
    runtime builds the steps, so a step does not import it back). ``sessions`` is built only
    for Repeat this order."""

    settings: Settings
    web: WebClient
    outbox: Outbox
    history: History
    receipts: Receipts
    timers: Timers | None
    store: CheckpointStore
    sessions: Callable[[], Sessions]
    current: WorkspaceSettings
    loaded: Loaded | None
    permalink: Callable[[str, str], str]
    # (team, user) -> the viewer's "Kroger cart" rows (``bot.steps.kroger_connect``); None
    # when the deploy connects no Kroger accounts.
    kroger: Callable[[str, str], list[Any]] | None = None


def next_times(rt: HomeTab, now: float) -> Any:
    """posted_at -> (next reminder, expiry), as the basket's timers will fire (none without
    timers)."""
    timers = rt.timers

    def times(posted_at: int) -> tuple[int | None, int | None]:
        if timers is None:
            return None, None
        plan, reminded = timers.plan, 0
        step = plan.next(posted_at, reminded)
        while step is not None and step[0] == "remind" and step[2] <= now:
            reminded += 1
            step = plan.next(posted_at, reminded)
        remind = step[2] if step is not None and step[0] == "remind" else None
        return remind, plan.expires_at(posted_at)

    return times


class Visible:
    """Whether ``user`` may see what was posted in a channel: only a member may (a private
    channel's or a DM's baskets are nobody else's business). One ``conversations.members`` a
    channel, asked once a publish; a channel Slack would not say about is hidden."""

    def __init__(self, rt: HomeTab, user: str) -> None:
        self.rt, self.user = rt, user
        self._known: dict[str, bool] = {}

    def __call__(self, channel: str) -> bool:
        if channel not in self._known:
            members = self.rt.outbox.members(channel)
            self._known[channel] = members is not None and self.user in members
        return self._known[channel]


def shown_to(record: Any, visible: Visible) -> bool:
    """Whether the viewer sees an outcome: one of a channel they are in; and a failed first
    basket, which never appeared in the channel, only if they asked for it."""
    if record.kind == "failed" and record.requested_by != visible.user:
        return False
    return bool(visible(record.channel))


def read_home(
    rt: HomeTab, tenant: str, now: float, visible: Visible
) -> tuple[list[Any], int, list[Any], tuple[list[Any], int]]:
    """(waiting baskets, newest first; how many older receipts were not read; last outcomes,
    newest first; the last 4 weeks' feedback, and how many more were not read) of the
    workspace, of the channels the viewer is in."""
    listed = rt.history.listed(tenant, LISTED)
    names = [name for name, _ in listed if session_of(name) is not None]
    since = now - FEEDBACK_DAYS * 86400
    said, more = newest_said(feedback_beside(rt.history), tenant, listed, since, MAX_OUTCOMES)
    heard = ([s for s in said if visible(s.channel)], more)
    ended = {s for s in map(session_of, names) if s is not None}
    outcomes: list[tuple[str, Any]] = []
    for name in names[:MAX_OUTCOMES]:  # the newest: at most MAX_OUTCOMES GETs
        record = rt.history.read_name(tenant, name)
        if record is not None and shown_to(record, visible):
            outcomes.append((name, record))
    expire_after = rt.current.expire_after if rt.timers is not None else 0
    # A session whose end was never recorded, long past its expiry, is not waiting: its receipt
    # was written after its basket was posted, so one older than the cut-off needs no HEAD.
    since = now - expire_after - 3600 if expire_after else 0.0
    waiting: list[tuple[str, Waiting]]
    waiting, unread = rt.receipts.newest_waiting(tenant, ended, READ_WAITING, since)
    if expire_after:
        waiting = [w for w in waiting if w[1].posted_at + expire_after + 3600 > now]
    waiting = [w for w in waiting if visible(w[1].channel)]
    waiting.sort(key=lambda w: w[1].posted_at, reverse=True)
    return waiting, unread, outcomes, heard


def publish_home(
    rt: HomeTab, tenant: str, user: str, expanded: str | None = None, notice: str = ""
) -> None:
    """Publish ``user``'s Home tab (one ``views.publish``). A store that cannot be read is
    said on the tab; a publish Slack refused raises, so that Lambda retries the lazy run.
    Settings that cannot be read are said at its top: nothing can be ordered until an admin
    saves them again (its Settings section keeps the button). Its times are the bot's clock's
    (``Outbox.clock``: time.time on Lambda, the played clock in the sandbox and the tests), so
    that a reminder already due is not shown as the next one."""
    now = rt.outbox.clock()
    closed = closed_of(rt)
    notice = "\n\n".join(text for text in (closed and f":warning: *{closed}*", notice) if text)
    try:
        visible = Visible(rt, user)
        waiting, unread, outcomes, heard = read_home(rt, tenant, now, visible)
        view = home_view(
            waiting=waiting,
            unread=unread,
            outcomes=outcomes,
            max_rounds=rt.current.rounds,
            times=next_times(rt, now),
            link=rt.permalink,
            expanded=expanded,
            notice=notice,
            settings=settings_rows(rt.current, problem_notice(rt.loaded), visible),
            kroger=rt.kroger(tenant, user) if rt.kroger is not None else None,
            feedback=heard,
        )
    except StoreError as exc:
        log.error("the Home tab could not be read: %s", exc)
        view = failed_view(UNREADABLE)
    rt.web.views_publish(user_id=user, view=view)


def closed_of(rt: HomeTab) -> str:
    """Why nothing can be ordered here ("" when it can): settings that cannot be read."""
    return closed_text(rt.loaded.problem if rt.loaded is not None else None)


class RepeatShopper:
    """A shopper that writes a recorded basket again: no model call."""

    label = "repeat of an earlier order"

    def __init__(self, items: list[Any]) -> None:
        self.items = items

    async def write(self, brief: Brief) -> ShopperReply:
        from workflow.shop.shopper import ShopperReply

        return ShopperReply(items=list(self.items), output_tokens=0)


def repeat_order(rt: HomeTab, tenant: str, user: str, name: str) -> str:
    """Start basket 1 of the order ``name`` again in its channel; what the Home tab says."""
    from bot.slack.delivery import Where
    from bot.slack.payloads import session_id_for
    from workflow.shop.basket import ShopRequest
    from workflow.shop.graph import shop_versions

    from .start import cannot_post_here, start_session

    if closed_of(rt):  # (its basket could not be approved: nothing starts)
        return closed_of(rt)
    ended = rt.history.read_name(tenant, name) if session_of(name) else None
    if ended is None or ended.kind != "ordered" or not Visible(rt, user)(ended.channel):
        return "I couldn't find that order any more, so nothing started."
    if rt.outbox.may_post(ended.channel) is False:
        return cannot_post_here(ended.channel)
    # One repeat of an order a week, whoever presses and however often: a second press finds
    # the session started (and two at once meet at its lock).
    week = datetime.fromtimestamp(rt.outbox.clock(), UTC).strftime("%G-W%V")
    session_id = session_id_for("repeat", tenant, name, week)
    if rt.store.latest(tenant, session_id) is not None:
        return f"That order was already repeated this week: its basket is in <#{ended.channel}>."
    items = ended.basket().items
    sessions = dataclasses.replace(
        rt.sessions(),
        workflow=lambda: shop_versions(RepeatShopper(items), rt.current.rounds),
    )
    request = ShopRequest(
        text=ended.request or "The same again", requested_by=user, household=rt.current.household
    )
    asyncio.run(start_session(sessions, Where(tenant, session_id, ended.channel), request))
    return f"Posted the same order again in <#{ended.channel}>."


GONE_FROM_HOME = "That basket is no longer waiting to be ordered, so there was nothing to undo."


def undone_here(channel: str) -> str:
    return f"Undone: nothing was ordered, and the basket waits for approval again in <#{channel}>."


def not_undone(channel: str) -> str:
    return f"The basket was not undone: what happened is in its thread in <#{channel}>."


def held_click(rt: HomeTab, tenant: str, user: str, value: str, delivery: str) -> Click | str:
    """The Undo click a held basket's Home tab button (``value``: its session and request)
    stands for, on the basket's own message as its receipt names it; or what the tab says
    instead. The listener answers it as the basket's own Undo (``bot.steps.clicks``), through
    :class:`Told`."""
    from bot.slack.blocks import Ref
    from bot.slack.payloads import Click

    ref = Ref.from_value(value)
    try:
        held = None if ref is None else rt.receipts.basket(tenant, ref.session_id)
    except ValueError:  # not an ID of ours
        log.info("Undo from the Home tab: not a basket of ours")
        return GONE_FROM_HOME
    except StoreError as exc:
        log.warning("Undo from the Home tab: the basket could not be read: %s", exc)
        return UNREADABLE
    if ref is None or held is None or held.request_id != ref.request_id or not held.held_until:
        return GONE_FROM_HOME
    if not Visible(rt, user)(held.channel):  # not theirs to see, so not theirs to undo
        return GONE_FROM_HOME
    return Click(tenant, user, held.channel, held.ts, ref, "undo", delivery=delivery)


def after_undo(rt: HomeTab, click: Click, told: Told) -> str:
    """What the tab says once the Undo's turn is over: what the basket's button would have
    told the person ("Too late to undo: …"), else what the receipt the turn wrote says."""
    if told.said:
        return "\n".join(told.said)
    try:
        now = rt.receipts.basket(click.tenant, click.ref.session_id)
    except StoreError as exc:
        log.warning("after an Undo, the basket's receipt could not be read: %s", exc)
        now = None
    undone = now is not None and not now.held_until
    return undone_here(click.channel) if undone else not_undone(click.channel)


class Told(Outbox):
    """The session's outbox, but what it would tell ``user`` alone in the channel is kept for
    their Home tab, where they pressed."""

    def __init__(self, outbox: Outbox, user: str) -> None:
        super().__init__(outbox.web, outbox.max_rounds, outbox.clock)
        self.user = user
        self.said: list[str] = []

    def tell(self, channel: str, user: str, mrkdwn: str) -> bool:
        if user != self.user:
            return super().tell(channel, user, mrkdwn)
        self.said.append(mrkdwn)
        return True
