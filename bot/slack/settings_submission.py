"""A submitted Settings modal read back: each field in the shape Slack sends it
(``view.state.values[block_id]["value"]``: ``selected_users``, ``value``, ``selected_option``,
``selected_options``, ``selected_time``, ``selected_conversation``), checked as a forged
submission would need, each problem named under its own block (``response_action: errors``).
What only Slack can say (is that user in this workspace, is the bot in that channel) is asked by
``bot.steps.settings``. (Over 300 lines: every field of the form is read and checked here.)
"""

from __future__ import annotations

import json
from dataclasses import dataclass, replace
from typing import Any

from bot.records.order_choice import (
    DESTINATIONS,
    INSTACART_SERVERS,
    MAX_URL,
    MODALITIES,
    OrderChoice,
)
from bot.records.weekly import DAYS, WeeklyRun, run_problems
from bot.records.workspace_settings import (
    DAY,
    HOUR,
    KEPT_FIELDS,
    MAX_ADMINS,
    MAX_APPROVERS,
    MAX_QUORUM,
    MAX_ROUNDS,
    KeptRun,
    WorkspaceSettings,
)
from workflow.shop.household import MAX_AVOID, MAX_PEOPLE, MAX_STAPLES, Household

from .order_form import KEY_BLOCKS, MAX_KEY, MIN_API_KEY, MIN_SECRET
from .settings_form import (
    MAX_EXPIRE_DAYS,
    MAX_ORDER_DELAY_MINUTES,
    MAX_REMIND_HOURS,
    MAX_REQUEST,
    OFF,
    shown_days,
    shown_hours,
    shown_minutes,
    shown_rounds,
)

QUORUM_NEEDS_NAMES = (
    "With nobody chosen, anyone in the channel approves and one approval is enough: to need "
    "more, choose the approvers who must agree."
)


def quorum_problem(approvers: tuple[str, ...], needed: int) -> str | None:
    """What is wrong with needing ``needed`` approvals from ``approvers`` (none: anyone in the
    channel), beyond the form's range: more than one with nobody named.

    Why named approvers, and not a quorum the channel's members could reach (the issue offered
    both): counting members (``conversations.members``) would not protect a real household.

    - A basket is asked for in any channel the bot is in (``/shop`` there, the weekly basket's
      channel), so at save time there is no one channel to count.
    - A channel changes after the save: a quorum its members reach today strands next week's
      basket once someone leaves, and nothing says so until it is never ordered.
    - Members are not approvers: other bots, guests, people who never look at the basket, and
      the requester when nobody approves their own basket all count as members.
    - It is one more paginated Web API call inside the save's ack (Slack's 3 seconds).

    Two people agreeing is a decision about who they are: named, the quorum is one the save
    can check (at most the approvers named, one fewer with no self-approval), with no Slack
    call, and a reminder mentions the approvers who have not approved yet (with nobody named
    it can only mention the requester: ``bot.steps.reminders``). Settings already saved, and a
    deploy's ``APPROVALS_NEEDED`` without ``APPROVER_IDS``, are read as before; only a save
    from the modal is held to this.
    """
    return QUORUM_NEEDS_NAMES if needed > 1 and not approvers else None


def etag_of(metadata: object) -> str | None:
    """The ETag a submitted modal was opened on ("" and garbage: None, a first save)."""
    try:
        data = json.loads(metadata) if isinstance(metadata, str) else None
    except ValueError:
        return None
    etag = data.get("etag") if isinstance(data, dict) else None
    return etag if isinstance(etag, str) and 0 < len(etag) <= 100 else None


class _Form:
    """Reads one submission's values, noting a problem per block."""

    def __init__(self, values: Any) -> None:
        self.values = values if isinstance(values, dict) else {}
        self.errors: dict[str, str] = {}

    def _field(self, block: str) -> Any:
        """The block's one input, whichever version of the settings named it (``field_id``)."""
        found = self.values.get(block)
        if not isinstance(found, dict):
            return None
        inputs = [v for k, v in found.items() if k == "value" or k.startswith("value-")]
        return inputs[0] if len(inputs) == 1 else None

    def number(self, block: str, low: int, high: int, unit: str = "") -> int:
        raw = self._field(block)
        raw = raw.get("value") if isinstance(raw, dict) else None
        try:
            number = (
                int(raw) if isinstance(raw, str) and raw.strip().lstrip("-").isdigit() else None
            )
        except ValueError:
            number = None
        if number is None or not low <= number <= high:
            self.errors[block] = f"A whole number from {low} to {high}{unit}."
            return low
        return number

    def text(self, block: str, most: int) -> str:
        raw = self._field(block)
        value = raw.get("value") if isinstance(raw, dict) else None
        value = "" if value is None else value
        if not isinstance(value, str) or len(value) > most:
            self.errors[block] = f"At most {most:,} characters."
            return ""
        return value.strip()

    def users(self, block: str, most: int) -> tuple[str, ...]:
        raw = self._field(block)
        users = raw.get("selected_users") if isinstance(raw, dict) else None
        users = [] if users is None else users
        if not isinstance(users, list) or not all(isinstance(u, str) for u in users):
            self.errors[block] = "Choose people from this workspace."
            return ()
        if len(users) > most:
            self.errors[block] = f"At most {most} people."
            return ()
        return tuple(dict.fromkeys(users))

    def option(self, block: str, allowed: list[str]) -> str:
        raw = self._field(block)
        chosen = raw.get("selected_option") if isinstance(raw, dict) else None
        value = chosen.get("value") if isinstance(chosen, dict) else None
        if value not in allowed:
            self.errors[block] = "Choose one of the options."
            return allowed[0]
        return str(value)

    def checked(self, block: str) -> bool:
        raw = self._field(block)
        chosen = raw.get("selected_options") if isinstance(raw, dict) else None
        return isinstance(chosen, list) and any(
            isinstance(c, dict) and c.get("value") == "on" for c in chosen
        )

    def picked(self, block: str, key: str) -> str:
        raw = self._field(block)
        value = raw.get(key) if isinstance(raw, dict) else None
        return value if isinstance(value, str) else ""


@dataclass(frozen=True)
class Submitted:
    """What a submission asks for: the settings (None when a field is wrong), every problem
    the form itself finds, by block, and what ``bot.steps.settings`` asks Slack about even
    then, so that one answer says all: the people named, the weekly run's channel ("" when
    there is none, or it is not a channel ID), where orders go (None when wrong)."""

    settings: WorkspaceSettings | None
    errors: dict[str, str]
    approvers: tuple[str, ...] = ()
    admins: tuple[str, ...] = ()
    weekly_on: bool = False
    weekly_channel: str = ""
    orders: OrderChoice | None = None


def read_submission(values: Any, current: WorkspaceSettings) -> Submitted:
    """The settings a submission asks for (its changes list is ``current``'s) and every problem
    of the form's own checks, by block. ``bot.steps.settings`` asks Slack the rest."""
    form = _Form(values)
    approvers = form.users("approvers", MAX_APPROVERS)
    needed = form.number("approvals", 1, len(approvers) or MAX_QUORUM)
    unreachable = quorum_problem(approvers, needed)
    if unreachable and not form.errors.keys() & {"approvers", "approvals"}:
        form.errors["approvals"] = unreachable
    own = form.checked("no_self")
    if own and approvers and needed >= len(approvers) and "approvals" not in form.errors:
        # An approver's own basket could then never gather enough approvals from the others.
        form.errors["approvals"] = (
            f"With nobody approving their own basket, at most {len(approvers) - 1}: an "
            "approver's own basket needs the others' approvals."
            if len(approvers) > 1
            else "With one approver who may not approve their own basket, their baskets could "
            "never be approved: name another approver, or let people approve their own."
        )
    # A value the form cannot show exactly (the deploy's 30 minutes, 8 baskets, never expiring)
    # is kept as it is unless the person changed what the form showed for it.
    rounds = int(form.option("rounds", [str(n) for n in range(1, MAX_ROUNDS + 1)]))
    rounds = current.rounds if rounds == shown_rounds(current) else rounds
    remind = form.number("remind_every", 0, MAX_REMIND_HOURS, " hours")
    remind_after = current.remind_after if remind == shown_hours(current) else remind * HOUR
    reminders = form.number("max_reminders", 0, 10)
    expire = form.number("expire_days", 0, MAX_EXPIRE_DAYS, " days")
    expire_after = current.expire_after if expire == shown_days(current) else expire * DAY
    delay = form.number("order_delay", 0, MAX_ORDER_DELAY_MINUTES, " minutes")
    order_delay = current.order_delay if delay == shown_minutes(current) else delay * 60
    household = Household(
        people=form.number("people", 0, MAX_PEOPLE),
        avoid=form.text("avoid", MAX_AVOID),
        staples=form.text("staples", MAX_STAPLES),
    )
    admins = form.users("admins", MAX_ADMINS)
    weekly, kept, on, channel = _weekly(form)
    orders = _orders(form, current)
    read = Submitted(
        None,
        form.errors,
        approvers=() if "approvers" in form.errors else approvers,
        admins=() if "admins" in form.errors else admins,
        weekly_on=on,
        weekly_channel=channel,
        orders=orders,
    )
    if form.errors:
        return read
    try:
        settings = WorkspaceSettings(
            approvers=approvers,
            approvals_needed=needed,
            no_self_approval=own,
            rounds=rounds,
            remind_after=remind_after,
            max_reminders=reminders,
            expire_after=expire_after,
            order_delay=order_delay,
            orders=orders,
            weekly=weekly,
            household=household,
            store=current.store,  # (read from the store part, when there is one: bot.steps)
            budget_cents=current.budget_cents,
            admins=admins,
            changes=current.changes,
            weekly_kept=kept,
        )
    except ValueError as exc:  # (a forged submission: "not a Slack user ID", say)
        return replace(read, errors={"approvers": f"This could not be saved: {str(exc)[:100]}"})
    return replace(read, settings=settings)


def _orders(form: _Form, current: WorkspaceSettings) -> OrderChoice | None:
    """Where orders go, as submitted (a modal opened before the choice existed: as it was)."""
    if "destination" not in form.values:
        return current.orders
    destination = form.option("destination", list(DESTINATIONS))
    server = form.option("instacart_server", list(INSTACART_SERVERS))
    url = form.text("webhook_url", MAX_URL)
    if url and not url.startswith("https://"):
        form.errors["webhook_url"] = "An https:// URL."
    elif destination == "webhook" and not url:
        form.errors["webhook_url"] = "A webhook needs its https:// URL."
    kept = current.orders or OrderChoice()  # what a modal without the cart's inputs keeps
    cart = form.users("kroger_cart", 1) if "kroger_cart" in form.values else None
    modality = (
        form.option("kroger_modality", list(MODALITIES))
        if "kroger_modality" in form.values
        else kept.kroger_modality
    )
    if "webhook_url" in form.errors or "kroger_cart" in form.errors:
        return None
    return OrderChoice(
        destination=destination,
        instacart_server=server,
        webhook_url=url,
        kroger_cart=kept.kroger_cart if cart is None else (cart[0] if cart else ""),
        kroger_modality=modality,
    )


def read_keys(values: Any) -> tuple[dict[str, str], dict[str, str]]:
    """The keys typed into the modal (by the name they are kept under; an empty input keeps
    the saved one), and the problems, by block."""
    form = _Form(values)
    typed: dict[str, str] = {}
    for name, block in KEY_BLOCKS.items():
        if block not in form.values:
            continue
        value = form.text(block, MAX_KEY)
        least = MIN_SECRET if name == "webhook-signing-secret" else MIN_API_KEY
        if block in form.errors or not value:
            continue
        if len(value) < least or any(c.isspace() for c in value) or not value.isprintable():
            form.errors[block] = f"{least} to {MAX_KEY} characters, with no spaces."
            continue
        typed[name] = value
    return typed, form.errors


def _weekly(form: _Form) -> tuple[WeeklyRun | None, KeptRun | None, bool, str]:
    """The weekly run (None: off, or a field wrong, each wrong one noted at once), what is kept
    of its fields while it is off (once a channel or a request was given: the time and zone
    have defaults), whether it is on, and its channel to ask Slack about ("" when off, or not
    a channel ID)."""
    day = form.option("weekly_day", [OFF, *DAYS])
    fields = {
        "channel": form.picked("weekly_channel", "selected_conversation"),
        "day": day,
        "time": form.picked("weekly_time", "selected_time"),
        "timezone": form.text("weekly_timezone", 64),
        "request": form.text("weekly_request", MAX_REQUEST),
    }
    if day == OFF:
        problems = run_problems({**fields, "day": DAYS[0]})
        try:
            kept: KeptRun | None = KeptRun(
                **{
                    name: "" if name in problems and name in ("channel", "time") else fields[name]
                    for name in KEPT_FIELDS
                }
            )
        except ValueError:  # (a forged channel ID, say: nothing kept)
            kept = None
        return None, (kept if kept and (kept.channel or kept.request) else None), False, ""
    problems = run_problems(fields)
    for field, message in problems.items():
        form.errors.setdefault(f"weekly_{field}", message)
    channel = "" if "channel" in problems else fields["channel"]
    return (None if problems else WeeklyRun(**fields)), None, True, channel
