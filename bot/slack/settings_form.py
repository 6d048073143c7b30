"""The workspace's Settings modal, as Block Kit (pure functions of the settings).

One ``input`` block a setting, each pre-filled with the current value (``initial_users``,
``initial_value``, ``initial_option``, ``initial_options``, ``initial_time``,
``initial_conversation``); a person who may not change them gets the same values as text, with
no submit. A submission is read back by ``bot.slack.settings_submission``.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Callable
from typing import Any

from bot.records.weekly import DAYS
from bot.records.workspace_settings import (
    DAY,
    HOUR,
    MAX_ADMINS,
    MAX_APPROVERS,
    MAX_QUORUM,
    MAX_ROUNDS,
    WorkspaceSettings,
)
from bot.records.workspace_settings_store import Loaded
from workflow.shop.household import MAX_AVOID, MAX_PEOPLE, MAX_STAPLES

from .blocks import escape, plain
from .order_form import order_line
from .settings_ids import OPEN_SETTINGS, SETTINGS_MODAL, loading_modal

__all__ = ["OPEN_SETTINGS", "SETTINGS_MODAL", "loading_modal"]

MAX_REMIND_HOURS = 168
MAX_EXPIRE_DAYS = 21
MAX_ORDER_DELAY_MINUTES = 24 * 60
MAX_REQUEST = 3000
DAY_NAMES = dict(
    zip(
        DAYS,
        ("Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday", "Sunday"),
        strict=True,
    )
)
OFF = "off"
MAX_LINE = 2900  # a line of the summary, escaped, in a section of at most 3,000 characters
WHO_MAY = (
    "Workspace owners and admins, the person who added the app, and the household admins "
    "named below can change these."
)
AGAIN = (
    "nothing can be ordered until an admin saves them again (the form starts from the defaults)."
)
TAMPERED = (
    f":warning: The saved settings can't be read (changed outside the app, or damaged), so {AGAIN}"
)
ROLLED_BACK = (
    ":warning: The saved settings are an older copy put back in place of the latest (changed "
    f"outside the app), so {AGAIN}"
)
NEWER = (
    ":warning: These settings were saved by a newer version of the app, so nothing can be "
    "ordered until it is back."
)
Block = dict[str, Any]


def problem_notice(loaded: Loaded | None) -> str:
    """What the Home tab and the modal say when saved settings are not used ("" when fine)."""
    problem = loaded.problem if loaded is not None else None
    return {"tampered": TAMPERED, "newer": NEWER, "rolled-back": ROLLED_BACK}.get(problem or "", "")


def _option(value: str, text: str) -> Block:
    return {"text": plain(text, 75), "value": value}


def _input(
    block_id: str, label: str, element: Block, hint: str = "", optional: bool = False
) -> Block:
    block: Block = {
        "type": "input",
        "block_id": block_id,
        "label": plain(label, 2000),
        "element": {**element, "action_id": "value"},
        "optional": optional,
    }
    if hint:
        block["hint"] = plain(hint, 2000)
    return block


def _number(value: int, low: int, high: int) -> Block:
    return {
        "type": "number_input",
        "is_decimal_allowed": False,
        "initial_value": str(value),
        "min_value": str(low),
        "max_value": str(high),
    }


def _text(value: str, most: int, multiline: bool = False) -> Block:
    element: Block = {"type": "plain_text_input", "max_length": most, "multiline": multiline}
    if value:
        element["initial_value"] = value
    return element


def _users(users: tuple[str, ...], most: int) -> Block:
    element: Block = {"type": "multi_users_select", "max_selected_items": most}
    if users:
        element["initial_users"] = list(users)
    return element


def _select(options: list[Block], chosen: str) -> Block:
    initial = next((o for o in options if o["value"] == chosen), options[0])
    return {"type": "static_select", "options": options, "initial_option": initial}


def settings_blocks(s: WorkspaceSettings, timezone: str) -> list[Block]:
    """The form's input blocks, pre-filled with ``s`` (``timezone``: the weekly run's default,
    the person's own when there is no weekly run yet)."""
    run = s.weekly
    days = [_option(OFF, "No weekly basket"), *(_option(d, n) for d, n in DAY_NAMES.items())]
    no_self = _option("on", "Nobody approves a basket they asked for")
    checkboxes: Block = {"type": "checkboxes", "options": [no_self]}
    if s.no_self_approval:
        checkboxes["initial_options"] = [no_self]
    time: Block = {"type": "timepicker", "initial_time": run.time if run else "09:00"}
    channel: Block = {
        "type": "conversations_select",
        "filter": {"include": ["public", "private"], "exclude_bot_users": True},
    }
    if run is not None:
        channel["initial_conversation"] = run.channel
    rounds = [_option(str(n), f"{n} basket{'s' if n > 1 else ''}") for n in range(1, 6)]
    return [
        {"type": "header", "text": plain("Who approves", 150)},
        _input(
            "approvers",
            "Approvers",
            _users(s.approvers, MAX_APPROVERS),
            "Nobody chosen: anyone in the channel can approve.",
            optional=True,
        ),
        _input(
            "approvals",
            "Approvals needed",
            _number(s.approvals_needed, 1, MAX_QUORUM),
            "How many different approvers must press Approve: 1 to the number of approvers, "
            "1 with nobody chosen.",
        ),
        _input("no_self", "Own baskets", checkboxes, optional=True),
        _input(
            "rounds",
            "Baskets per week",
            _select(rounds, str(shown_rounds(s))),
            "A change asks for another basket, up to this many.",
        ),
        {"type": "header", "text": plain("Reminders", 150)},
        _input(
            "remind_every",
            "Remind every (hours)",
            _number(shown_hours(s), 0, MAX_REMIND_HOURS),
            "0: no reminders.",
        ),
        _input("max_reminders", "At most (reminders)", _number(s.max_reminders, 0, 10)),
        _input(
            "expire_days",
            "A basket expires after (days)",
            _number(shown_days(s), 0, MAX_EXPIRE_DAYS),
            "0: never (an unanswered basket is still deleted after the bucket's 30 days).",
        ),
        _input(
            "order_delay",
            "Undo window before ordering (minutes)",
            _number(shown_minutes(s), 0, MAX_ORDER_DELAY_MINUTES),
            "An approved basket is ordered this much later, unless an approver presses Undo. "
            "0: at once.",
        ),
        {"type": "header", "text": plain("The weekly basket", 150)},
        _input("weekly_day", "Day", _select(days, run.day if run else OFF)),
        _input("weekly_time", "Time", time),
        _input(
            "weekly_timezone",
            "Time zone",
            _text(run.timezone if run else timezone, 64),
            "An IANA name, such as Europe/London.",
        ),
        _input(
            "weekly_channel",
            "Channel",
            channel,
            "A channel I am in (/invite @weekly-shop there first).",
            optional=True,
        ),
        _input(
            "weekly_request",
            "What to shop for",
            _text(run.request if run else "", MAX_REQUEST, multiline=True),
            optional=True,
        ),
        {"type": "header", "text": plain("The household", 150)},
        _input(
            "people", "How many people", _number(s.household.people, 0, MAX_PEOPLE), "0: not said."
        ),
        _input("avoid", "What we don't eat", _text(s.household.avoid, MAX_AVOID), optional=True),
        _input("staples", "Always buy", _text(s.household.staples, MAX_STAPLES), optional=True),
        {"type": "header", "text": plain("Who may change these", 150)},
        _input("admins", "Household admins", _users(s.admins, MAX_ADMINS), WHO_MAY, optional=True),
    ]


def field_id(etag: str | None) -> str:
    """The inputs' action_id for the settings read at ``etag``. Slack keeps what a person typed
    in an input whose block_id and action_id a views.update (or ``response_action: update``)
    leaves unchanged ("preserving input state"), so a modal updated to show the values another
    admin just saved would go on showing this person's own: each version of the settings gets
    inputs of its own, while the block_ids (errors are keyed by them) stay."""
    digest = hashlib.sha256((etag or "").encode()).hexdigest()[:10]
    return f"value-{digest}"


def settings_modal(
    s: WorkspaceSettings,
    *,
    timezone: str,
    etag: str | None,
    notice: str = "",
    orders: list[Block] | None = None,
) -> Block:
    """The editable modal; ``etag`` (the document read when it opened, or None) goes back with
    the submission, for the conditional save. ``orders``: the "Where orders go" section
    (``bot.slack.order_form``), before who may change these."""
    blocks = settings_blocks(s, timezone)
    if orders:
        blocks[-2:-2] = orders
    version = field_id(etag)
    for block in blocks:  # this version of the settings' own inputs (``field_id``)
        if block.get("type") == "input":
            block["element"] = {**block["element"], "action_id": version}
    if notice:
        blocks.insert(0, {"type": "section", "text": {"type": "mrkdwn", "text": notice}})
    return {
        "type": "modal",
        "callback_id": SETTINGS_MODAL,
        "private_metadata": json.dumps({"etag": etag or ""}),
        "title": plain("Weekly shop settings", 24),
        "submit": plain("Save", 24),
        "close": plain("Cancel", 24),
        "blocks": blocks,
    }


def read_only_modal(s: WorkspaceSettings, notice: str = "") -> Block:
    """The values as text, no submit: for someone who may not change them."""
    blocks: list[Block] = [
        {"type": "section", "text": {"type": "mrkdwn", "text": line}} for line in summary(s)
    ]
    blocks.append({"type": "context", "elements": [{"type": "mrkdwn", "text": WHO_MAY}]})
    if notice:
        blocks.insert(0, {"type": "section", "text": {"type": "mrkdwn", "text": notice}})
    return {
        "type": "modal",
        "title": plain("Weekly shop settings", 24),
        "close": plain("Close", 24),
        "blocks": blocks,
    }


def shown_hours(s: WorkspaceSettings) -> int:
    """What the form shows for the reminders' interval: whole hours (30 min shows as 0)."""
    return s.remind_after // HOUR


def shown_days(s: WorkspaceSettings) -> int:
    """What the form shows for the expiry: days, rounded up (0: never)."""
    return -(-s.expire_after // DAY)


def shown_minutes(s: WorkspaceSettings) -> int:
    """What the form shows for the undo window: minutes, rounded up (0: at once)."""
    return -(-s.order_delay // 60)


def shown_rounds(s: WorkspaceSettings) -> int:
    """What the form shows for the baskets a week: at most what it offers."""
    return min(s.rounds, MAX_ROUNDS)


def _every(seconds: int) -> str:
    return f"{seconds // HOUR} h" if seconds % HOUR == 0 else f"{seconds // 60} min"


def summary(s: WorkspaceSettings, visible: Callable[[str], bool] = lambda _: False) -> list[str]:
    """The settings as mrkdwn lines, each under a section's 3,000 characters (people's words
    escaped, so they ping nobody). The weekly run's request is shown only to people
    ``visible`` says are in its channel, as a waiting basket is."""
    approvers = ", ".join(f"<@{u}>" for u in s.approvers) or "anyone in the channel"
    needed = f" · {s.approvals_needed} approvals needed" if s.approvals_needed > 1 else ""
    own = " · not their own baskets" if s.no_self_approval else ""
    reminders = (
        f"every {_every(s.remind_after)}, at most {s.max_reminders}"
        if s.remind_after and s.max_reminders
        else "none"
    )
    expiry = f"after {-(-s.expire_after // DAY)} days" if s.expire_after else "never"
    undo = f"after a {shown_minutes(s)}-minute undo window" if s.order_delay else "at once"
    run = s.weekly
    weekly = "off"
    if run is not None:
        weekly = f"{DAY_NAMES[run.day]}s at {run.time} ({escape(run.timezone)}) in <#{run.channel}>"
        if visible(run.channel):
            weekly += f": {escape(run.request[:200])}"
    home = escape(s.household.line()) if s.household.said else "not said"
    admins = ", ".join(f"<@{u}>" for u in s.admins) or "none"
    lines = [
        f"*Approvers:* {approvers}{needed}{own} · up to {s.rounds} baskets a week",
        f"*Reminders:* {reminders} · *expires* {expiry} · *ordered* {undo}",
        *([order_line(s.orders)] if s.orders is not None else []),
        f"*Weekly basket:* {weekly}",
        f"*Household:* {home}",
        f"*Household admins:* {admins}",
    ]
    return [line if len(line) <= MAX_LINE else line[: MAX_LINE - 1] + "…" for line in lines]


def settings_rows(
    s: WorkspaceSettings,
    notice: str,
    visible: Callable[[str], bool] = lambda _: False,
    changes: int = 3,
) -> list[Block]:
    """The Home tab's settings: the values, the Settings button, and who changed what last
    (the newest ``changes``); or, with a notice (ours: saved settings that can't be read), the
    notice and the button, and no values (none are in force)."""
    rows: list[Block] = [{"type": "section", "text": {"type": "mrkdwn", "text": "*Settings*"}}]
    lines = [notice] if notice else summary(s, visible)
    rows += [{"type": "section", "text": {"type": "mrkdwn", "text": line}} for line in lines]
    button = {"type": "button", "text": plain("Settings", 75), "action_id": OPEN_SETTINGS}
    rows.append(
        {"type": "actions", "block_id": "settings", "elements": [{**button, "value": "open"}]}
    )
    if s.changes[:changes] and not notice:
        lines = [
            f"<!date^{c.at}^{{date_short_pretty}} {{time}}|{c.at}> <@{c.by}> changed "
            f"{escape(c.what)}"
            for c in s.changes[:changes]
        ]
        rows.append({"type": "context", "elements": [{"type": "mrkdwn", "text": "\n".join(lines)}]})
    return rows
