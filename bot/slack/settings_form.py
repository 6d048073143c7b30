"""The workspace's Settings modal, as Block Kit (pure functions of the settings): the form an
admin fills.

One ``input`` block a setting, each pre-filled with the current value (``initial_users``,
``initial_value``, ``initial_option``, ``initial_options``, ``initial_time``,
``initial_conversation``), and what the form shows of a value it holds in other units
(``shown_hours``, ``shown_days``…). A person who may not change them gets the same values as
text, with no submit (``bot.slack.settings_summary``, which also draws the Home tab's Settings).
A submission is read back by ``bot.slack.settings_submission``.
"""

from __future__ import annotations

import hashlib
import json
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
from workflow.shop.household import MAX_AVOID, MAX_PEOPLE, MAX_STAPLES

from .blocks import plain
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
WHO_MAY = (
    "The people chosen here can change these settings, as can the workspace's owners and "
    "admins and the person who added the app."
)
Block = dict[str, Any]


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
    the person's own when there is no weekly run yet, nor one kept while it is off)."""
    run = s.weekly
    days = [_option(OFF, "No weekly basket"), *(_option(d, n) for d, n in DAY_NAMES.items())]
    no_self = _option("on", "Nobody approves a basket they asked for")
    checkboxes: Block = {"type": "checkboxes", "options": [no_self]}
    if s.no_self_approval:
        checkboxes["initial_options"] = [no_self]
    shown = run or s.weekly_kept  # (kept while it is off: the form shows them again)
    time: Block = {"type": "timepicker", "initial_time": (shown and shown.time) or "09:00"}
    channel: Block = {
        "type": "conversations_select",
        "filter": {"include": ["public", "private"], "exclude_bot_users": True},
    }
    if shown is not None and shown.channel:
        channel["initial_conversation"] = shown.channel
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
            "Baskets per week (rounds of changes)",
            _select(rounds, str(shown_rounds(s))),
            "Each Change… writes the next basket, up to this many; the last one can only be "
            "approved or rejected. Edit items uses none.",
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
            _text((shown and shown.timezone) or timezone, 64),
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
            _text(shown.request if shown else "", MAX_REQUEST, multiline=True),
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
    store: list[Block] | None = None,
    metadata: dict[str, Any] | None = None,
) -> Block:
    """The editable modal; ``etag`` (the document read when it opened, or None) goes back with
    the submission, for the conditional save, with ``metadata`` beside it. ``orders``: the
    "Where orders go" section (``bot.slack.order_form``), and ``store`` the "Store and budget"
    one (``bot.slack.settings_store``, its inputs named already), before who may change these."""
    blocks = settings_blocks(s, timezone)
    if orders:
        blocks[-2:-2] = orders
    version = field_id(etag)
    for block in blocks:  # this version of the settings' own inputs (``field_id``)
        if block.get("type") == "input":
            block["element"] = {**block["element"], "action_id": version}
    if store:
        blocks[-2:-2] = store
    if notice:
        blocks.insert(0, {"type": "section", "text": {"type": "mrkdwn", "text": notice}})
    return {
        "type": "modal",
        "callback_id": SETTINGS_MODAL,
        "private_metadata": json.dumps({"etag": etag or "", **(metadata or {})}),
        "title": plain("Weekly shop settings", 24),
        "submit": plain("Save", 24),
        "close": plain("Cancel", 24),
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
