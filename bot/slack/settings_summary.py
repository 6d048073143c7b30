"""The workspace's settings as people read them (pure functions of the settings): the summary
lines, the read-only modal for someone who may not change them, the Home tab's Settings rows,
and what both say when saved settings are not used. The form an admin fills is
``bot.slack.settings_form``.
"""

from __future__ import annotations

from collections.abc import Callable

from bot.records.workspace_settings import DAY, HOUR, WorkspaceSettings
from bot.records.workspace_settings_store import Loaded
from workflow.shop.money import money

from .blocks import Block, escape, plain
from .order_form import order_line
from .settings_form import DAY_NAMES, shown_minutes
from .settings_ids import OPEN_SETTINGS

MAX_LINE = 2900  # a line of the summary, escaped, in a section of at most 3,000 characters
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


def problem_notice(loaded: Loaded | None) -> str:
    """What the Home tab and the modal say when saved settings are not used ("" when fine)."""
    problem = loaded.problem if loaded is not None else None
    return {"tampered": TAMPERED, "newer": NEWER, "rolled-back": ROLLED_BACK}.get(problem or "", "")


def who_may_change(s: WorkspaceSettings, installer: str | None = None) -> str:
    """Who can change the settings, as ``bot.steps.settings`` decides it (``Desk.may_change``):
    the household admins named, the workspace's owners and admins, and the person who added
    the app (``installer``: None when no installation names them, as with one workspace)."""
    named = [f"<@{u}>" for u in s.admins]
    others = ["the workspace's owners and admins"]
    if installer is not None:
        others.append(f"<@{installer}>, who added the app")
    if not named:
        return f"No household admins are named, so only {' and '.join(others)} can change these."
    return f"{', '.join(named)} (household admins), {' and '.join(others)} can change these."


def read_only_modal(s: WorkspaceSettings, notice: str = "", installer: str | None = None) -> Block:
    """The values as text, no submit: for someone who may not change them, with whom to ask."""
    blocks: list[Block] = [
        {"type": "section", "text": {"type": "mrkdwn", "text": line}} for line in summary(s)
    ]
    ask = f"{who_may_change(s, installer)} To change something, ask one of them."
    blocks.append({"type": "context", "elements": [{"type": "mrkdwn", "text": ask}]})
    if notice:
        blocks.insert(0, {"type": "section", "text": {"type": "mrkdwn", "text": notice}})
    return {
        "type": "modal",
        "title": plain("Weekly shop settings", 24),
        "close": plain("Close", 24),
        "blocks": blocks,
    }


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
    admins = ", ".join(f"<@{u}>" for u in s.admins) or (
        "none named, so the workspace's owners and admins and the person who added the app "
        "(if it was added with Add to Slack) can change these"
    )
    lines = [
        f"*Approvers:* {approvers}{needed}{own} · up to {s.rounds} baskets a week "
        "(Change… writes the next)",
        f"*Reminders:* {reminders} · *expires* {expiry} · *ordered* {undo}",
        *([order_line(s.orders)] if s.orders is not None else []),
        f"*Weekly basket:* {weekly}",
        f"*Household:* {home}",
        *([store_line(s)] if s.store is not None or s.budget_cents is not None else []),
        f"*Household admins:* {admins}",
    ]
    return [line if len(line) <= MAX_LINE else line[: MAX_LINE - 1] + "…" for line in lines]


def store_line(s: WorkspaceSettings) -> str:
    """``*Store:* Kroger Over-the-Rhine, 1420 Vine St · *weekly budget:* $55`` (escaped)."""
    where = (
        escape(", ".join(p for p in (s.store.name, s.store.address) if p)) if s.store else "none"
    )
    budget = money(s.budget_cents) if s.budget_cents is not None else "none"
    return f"*Store:* {where} · *weekly budget:* {budget}"


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
        # One line each: a section keeps its line breaks wherever it is drawn (and costs one
        # block, as the context it replaced did, within the tab's 100).
        lines = [
            f"<!date^{c.at}^{{date_short_pretty}} {{time}}|{c.at}> <@{c.by}> changed "
            f"{escape(c.what)}"
            for c in s.changes[:changes]
        ]
        rows.append({"type": "section", "text": {"type": "mrkdwn", "text": "\n".join(lines)}})
    return rows


def changed(old: WorkspaceSettings, new: WorkspaceSettings) -> str:
    """What a save changed, in one line for the record ("" when nothing did)."""
    parts = []
    for name, label in (
        ("approvers", "approvers"),
        ("approvals_needed", "approvals needed"),
        ("no_self_approval", "no self-approval"),
        ("rounds", "baskets"),
        ("remind_after", "reminders"),
        ("max_reminders", "reminders"),
        ("expire_after", "expiry"),
        ("order_delay", "undo window"),
        ("orders", "where orders go"),
        ("weekly", "weekly basket"),
        ("weekly_kept", "weekly basket"),
        ("household", "household"),
        ("store", "store"),
        ("budget_cents", "weekly budget"),
        ("admins", "household admins"),
    ):
        if getattr(old, name) != getattr(new, name) and label not in parts:
            parts.append(label)
    return ", ".join(parts)
