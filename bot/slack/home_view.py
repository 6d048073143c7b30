"""Block Kit for the app's Home tab: a pure function of what ``bot.steps.home`` read.

    Weekly shop
    [a notice, after a button: "Posted the same order again in #shop."]
    Approved, about to be ordered    baskets held for their undo window: who approved, when, when
                                     the order goes, Undo (``HOME_UNDO``) and a link to the message
    Waiting for an answer            newest first, each with Open (a link to its message)
    Last outcomes                    newest first: Ordered / Rejected / Expired, how many items,
                                     who answered, when; Show items; Repeat this order
    Feedback, last 4 weeks           how many said good and not good of the baskets, and the
                                     newest few: who, which basket, where, when (one block)
    Kroger cart                      with a Kroger app: the viewer's account, Connect or
                                     Disconnect (``bot.slack.kroger_section``)
    Settings

A Home tab holds at most 100 blocks (Block Kit's view limit, which the fake Web API checks): at
most ``MAX_WAITING`` baskets, held or waiting, and 2 × ``MAX_OUTCOMES`` rows, and one outcome's
items expanded at a time within ``bot.slack.basket_items.item_sections``' own 43; the Kroger
cart adds 5, the feedback 1. Model- and user-written text (the request, the items) is plain_text
or escaped, as on the basket messages.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from .basket_items import item_sections
from .basket_message import asked_for
from .blocks import OPEN_ORDER, Block, Ref, context, count, escape, people, plain, slack_date

if TYPE_CHECKING:
    from bot.records.feedback import Said
    from bot.records.history import Ended
    from bot.records.receipts import Waiting

SHOW_ITEMS = "home_show_items"
HIDE_ITEMS = "home_hide_items"
REPEAT = "home_repeat"
OPEN = "home_open"  # a link button: Slack still sends the click, which is acked and ignored
HOME_UNDO = "home_undo_order"  # a held basket's Undo, from the Home tab (``bot.steps.home``)
MAX_WAITING = 10
MAX_OUTCOMES = 10
KIND_WORDS = {
    "ordered": "Ordered",
    "rejected": "Rejected",
    "expired": "Expired",
    "failed": "Failed",
}

Times = Callable[[int], tuple[int | None, int | None]]  # posted_at -> (next reminder, expiry)
Link = Callable[[str, str], str]  # (channel, ts) -> the message's permalink


def _mrkdwn(text: str) -> Block:
    return {"type": "section", "text": {"type": "mrkdwn", "text": text}}


def _button(text: str, action_id: str, value: str = "", **extra: Any) -> Block:
    button: Block = {"type": "button", "text": plain(text, 75), "action_id": action_id}
    if value:
        button["value"] = value
    return {**button, **extra}


def waiting_rows(
    waiting: list[tuple[str, Waiting]], unread: int, max_rounds: int, times: Times, link: Link
) -> list[Block]:
    """The baskets read, held ones first under their own heading, and a line for older ones:
    those read but not shown, and ``unread`` sessions not read at all. Those are only said to
    exist, never counted: they may be in channels the viewer is not in, and their number is
    those channels' business."""
    shown = waiting[:MAX_WAITING]
    held = [w for w in shown if w[1].held_until]
    rows = [_mrkdwn("*Approved, about to be ordered*")] if held else []
    for session, basket in held:
        rows += _held_row(session, basket, max_rounds, link)
    rows.append(_mrkdwn("*Waiting for an answer*"))
    asked = [w for w in shown if not w[1].held_until]
    if held and not asked and not unread and len(waiting) <= MAX_WAITING:
        rows.append(context("Nothing else is waiting for an answer."))
    elif not asked and not unread and len(waiting) <= MAX_WAITING:
        rows.append(
            context("Nothing is waiting. Type `/shop` and the week's dinners in a channel.")
        )
    for _, basket in asked:
        remind, expires = times(basket.posted_at)
        when = [f"posted {slack_date(basket.posted_at)}"]
        when += [f"next reminder {slack_date(remind)}"] if remind else []
        when += [f"expires {slack_date(expires)}"] if expires else []
        row = _mrkdwn(f"{_basket_of(basket, max_rounds)}\n" + " · ".join(when))
        row["accessory"] = _button("Open", OPEN, url=link(basket.channel, basket.ts))
        rows += [row, *_request_of(basket)]
    if unread:
        rows.append(context("…and older ones, not read here: they are in their channels."))
    elif len(waiting) > MAX_WAITING:
        rows.append(context(f"…and {len(waiting) - MAX_WAITING} older ones, not shown here."))
    return rows


def _basket_of(basket: Waiting, max_rounds: int) -> str:
    who = f" for <@{basket.requested_by}>" if basket.requested_by else ""
    return f"*Basket {basket.round} of {max_rounds}*{who}"


def _request_of(basket: Waiting) -> list[Block]:
    """What was asked, as typed (plain_text: it cannot ping), when the receipt kept it."""
    if not basket.request:
        return []
    words = {"type": "plain_text", "text": basket.request, "emoji": False}
    return [{"type": "context", "elements": [words]}]


def _held_row(session: str, basket: Waiting, max_rounds: int, link: Link) -> list[Block]:
    """A basket approved and held for its undo window: who approved it and when, when its
    order goes, a link to its message, and Undo (bound to the session and its request; the
    channel and message are read from the receipt when it is pressed, not from the button)."""
    by = f" by {people(basket.approved_by)}" if basket.approved_by else ""
    opened = f"<{link(basket.channel, basket.ts)}|Open>"
    approved = f"*Approved*{by} {slack_date(basket.posted_at)}"
    text = (
        f"{_basket_of(basket, max_rounds)} · {opened}\n{approved}"
        f" · ordering {slack_date(basket.held_until)} unless someone presses Undo"
    )
    row = _mrkdwn(text)
    value = Ref(session, basket.request_id).to_value()
    row["accessory"] = _button("Undo", HOME_UNDO, value=value, style="danger")
    return [row, *_request_of(basket)]


OPEN_LIST = {"canvas": "Open list", "instacart": "Open in Instacart"}


def outcome_rows(outcomes: list[tuple[str, Ended]], expanded: str | None) -> list[Block]:
    if not outcomes:
        return [context("No basket has ended yet: ordered, rejected and expired ones show here.")]
    rows: list[Block] = []
    for name, ended in outcomes[:MAX_OUTCOMES]:
        n = len(ended.items)
        by = {"expired": "nobody answered", "failed": "the shopper wrote no basket"}.get(
            ended.kind, f"by <@{ended.answered_by}>"
        )
        items = "" if ended.kind == "failed" else f" · {count(n)}"
        row = _mrkdwn(f"*{KIND_WORDS[ended.kind]}*{items} · {by} · {slack_date(ended.at)}")
        is_open = name == expanded
        toggle = ("Hide items", HIDE_ITEMS) if is_open else ("Show items", SHOW_ITEMS)
        if n:
            row["accessory"] = _button(*toggle, value=name)
        rows += [row, asked_for(ended.requested_by, ended.request)]
        if is_open:
            rows += item_sections(ended.basket().items)
        if ended.kind == "ordered":
            repeat = _button("Repeat this order", REPEAT, value=name, style="primary")
            elements = [repeat]
            if ended.order_url and ended.destination in OPEN_LIST:  # where it went
                opened = _button(OPEN_LIST[ended.destination], OPEN_ORDER, url=ended.order_url)
                elements = [opened, repeat]
            rows.append(
                {"type": "actions", "block_id": f"repeat-{name[:200]}", "elements": elements}
            )
    return rows


FEEDBACK_DAYS = 28  # the Home tab's "last 4 weeks" of feedback
FEEDBACK_NOTES = 3  # the newest notes shown under the counts


def feedback_rows(said: list[Said], more: int) -> list[Block]:
    """What the household said of its baskets in the last 4 weeks, newest first: the counts
    (of the records read; ``more``: others were written but not read, said to exist, never
    counted, as they may be of channels the viewer is not in), then who said what of which
    basket, where, when. Every person and channel is a mention built from an ID Slack gave
    (the record's, checked when read), never text."""
    if not said:
        return [
            context(
                f"*Feedback, last {FEEDBACK_DAYS // 7} weeks:* none yet. Press Good basket or"
                " Not good under a basket."
            )
        ]
    good = sum(1 for s in said if s.verdict == "good")
    counted = f"{good} good, {len(said) - good} not good"
    if more:
        counted += " (the newest read; older ones are not counted here)"
    lines = [f"*Feedback, last {FEEDBACK_DAYS // 7} weeks:* {counted}"]
    for s in said[:FEEDBACK_NOTES]:
        verdict = "good basket" if s.verdict == "good" else "not good"
        lines.append(
            f"<@{s.user}>: {verdict} · basket {s.round} in <#{s.channel}> · {slack_date(s.at)}"
        )
    return [_mrkdwn("\n".join(lines))]


def home_view(
    *,
    waiting: list[tuple[str, Waiting]],
    outcomes: list[tuple[str, Ended]],
    max_rounds: int,
    times: Times,
    link: Link,
    expanded: str | None = None,
    notice: str = "",
    unread: int = 0,
    settings: list[Block] | None = None,
    kroger: list[Block] | None = None,
    feedback: tuple[list[Said], int] | None = None,
) -> dict[str, Any]:
    """The Home tab: ``notice`` is ours (mrkdwn); ``settings`` the workspace's
    (``bot.slack.settings_summary.settings_rows``); ``kroger`` the viewer's Kroger cart
    (``bot.slack.kroger_section``, with a Kroger app only); ``feedback`` what was said of the
    baskets lately, and how many more were not read (:func:`feedback_rows`); everything else is
    built here."""
    blocks: list[Block] = [{"type": "header", "text": plain("Weekly shop", 150)}]
    if notice:
        blocks.append(_mrkdwn(notice))
    blocks += waiting_rows(waiting, unread, max_rounds, times, link)
    blocks += [{"type": "divider"}, _mrkdwn("*Last outcomes*"), *outcome_rows(outcomes, expanded)]
    if feedback is not None:
        blocks += feedback_rows(*feedback)
    if kroger:
        blocks += [{"type": "divider"}, *kroger]
    if settings:
        blocks += [{"type": "divider"}, *settings]
    return {"type": "home", "blocks": blocks}


def failed_view(reason: str) -> dict[str, Any]:
    """A Home tab that could not be read: one sentence (ours), and nothing lost."""
    header = {"type": "header", "text": plain("Weekly shop", 150)}
    return {"type": "home", "blocks": [header, _mrkdwn(escape(reason))]}
