"""A workspace's own settings: what the household decides, checked value by value.

Who approves and how many must agree, rounds, reminders, expiry, the weekly run, the household
itself: kept per workspace (``bot.records.workspace_settings_store``: one signed, versioned
document in S3) instead of in the deploy. The environment (``bot.settings``) still gives the
values of a workspace that has saved nothing, so a one-workspace deploy behaves as before until
someone saves. Every value is checked as it is built, whether by the modal's submission or from
a document read back.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field, replace
from typing import Any

from workflow.persistence.values import (
    check_bool,
    check_int,
    check_str,
    check_str_list,
    fields_of,
)
from workflow.shop.household import Household

from .order_choice import OrderChoice
from .slack_shapes import check_slack_ids
from .weekly import MAX_REQUEST, WeeklyRun

MAX_APPROVERS = 50  # as many as APPROVER_IDS may name (and a quorum may count)
MAX_QUORUM = 50  # with anyone in the channel approving (BasketDecision names at most 50)
MAX_ADMINS = 20
MAX_ROUNDS = 5  # what the modal offers (the deploy's MAX_ROUNDS may say up to 10)
MAX_CHANGES_KEPT = 20
MAX_CHANGE_TEXT = 300
HOUR = 3600
DAY = 86400
MAX_REMIND_AFTER = 7 * DAY
MAX_REMINDERS = 10
# Under the bucket's 30-day lifecycle rule, which would delete a waiting basket first.
MAX_EXPIRE_AFTER = 21 * DAY
MAX_ORDER_DELAY = DAY  # the undo window (ORDER_DELAY allows as much)
DEFAULT_ORDER_DELAY = 2 * 60
_HH_MM = re.compile(r"([01]\d|2[0-3]):[0-5]\d")


@dataclass(frozen=True, slots=True, kw_only=True)
class KeptRun:
    """A weekly run's channel, time, time zone and request while it is switched off ("No
    weekly basket"), kept to fill the form when it is switched on again. As typed: each may be
    empty, and none is checked as a run is (that is for when it is switched on)."""

    channel: str = ""
    time: str = ""
    timezone: str = ""
    request: str = ""

    def __post_init__(self) -> None:
        check_slack_ids("KeptRun", channel=check_str(self.channel, "KeptRun.channel"))
        if check_str(self.time, "KeptRun.time") and not _HH_MM.fullmatch(self.time):
            raise ValueError("KeptRun.time must be HH:mm")
        check_str(self.timezone, "KeptRun.timezone", max_length=64)
        check_str(self.request, "KeptRun.request", max_length=MAX_REQUEST)

    def to_json(self) -> dict[str, str]:
        return {k: getattr(self, k) for k in KEPT_FIELDS}

    @classmethod
    def from_json(cls, data: Any) -> KeptRun:
        return cls(**fields_of(data, "KeptRun", KEPT_FIELDS, KEPT_FIELDS))


KEPT_FIELDS = ("channel", "time", "timezone", "request")
_LOCATION_ID = re.compile(r"[A-Za-z0-9]{1,20}")  # Kroger's are 8 digits
MAX_STORE_TEXT = 200
MAX_BUDGET_CENTS = 10_000_000  # as workflow.shop.pricing allows: $100,000 a week


@dataclass(frozen=True, slots=True, kw_only=True)
class ChosenStore:
    """The household's store, where its baskets are priced: Kroger's ``locationId``, with the
    name and address Kroger gave when an admin chose it (the store's text: shown escaped)."""

    location_id: str
    name: str
    address: str = ""

    def __post_init__(self) -> None:
        if not _LOCATION_ID.fullmatch(check_str(self.location_id, "ChosenStore.location_id")):
            raise ValueError("ChosenStore.location_id must be letters or digits")
        check_str(self.name, "ChosenStore.name", min_length=1, max_length=MAX_STORE_TEXT)
        check_str(self.address, "ChosenStore.address", max_length=MAX_STORE_TEXT)

    @property
    def shown(self) -> str:
        """``Kroger Vine St``: the name the basket shows its prices at."""
        return self.name

    def to_json(self) -> dict[str, str]:
        return {"location_id": self.location_id, "name": self.name, "address": self.address}

    @classmethod
    def from_json(cls, data: Any) -> ChosenStore:
        names = ("location_id", "name", "address")
        return cls(**fields_of(data, "ChosenStore", names, names))


@dataclass(frozen=True, slots=True, kw_only=True)
class Change:
    """One saved change: who, when (epoch seconds), and what, in a line."""

    at: int
    by: str
    what: str

    def __post_init__(self) -> None:
        check_int(self.at, "Change.at", ge=0)
        check_slack_ids("Change", user=check_str(self.by, "Change.by", max_length=32))
        check_str(self.what, "Change.what", min_length=1, max_length=MAX_CHANGE_TEXT)

    def to_json(self) -> dict[str, Any]:
        return {"at": self.at, "by": self.by, "what": self.what}

    @classmethod
    def from_json(cls, data: Any) -> Change:
        names = ("at", "by", "what")
        return cls(**fields_of(data, "Change", names, names))


def _users(value: Any, where: str, most: int) -> tuple[str, ...]:
    users = check_str_list(value, where, max_length=most)
    for user in users:
        check_slack_ids(where, user=user)
    if len(set(users)) != len(users):
        raise ValueError(f"{where} names someone twice")
    return tuple(users)


@dataclass(frozen=True, slots=True, kw_only=True)
class WorkspaceSettings:
    """The settings a workspace works with: saved, or the deploy's defaults.

    ``approvers`` empty means anyone in the channel; ``approvals_needed`` different people must
    approve (1 to the number of approvers, or to ``MAX_QUORUM`` with anyone). Durations are
    seconds; 0 turns reminders or expiry off.
    ``weekly`` is the workspace's weekly run (``bot.records.weekly``), None when off;
    ``weekly_kept`` what its fields held when it was switched off (None while it is on: not in
    ``to_json``, the store keeps it beside the body, so older code reads the document as
    before).
    """

    approvers: tuple[str, ...] = ()
    approvals_needed: int = 1
    no_self_approval: bool = False
    rounds: int = 3
    remind_after: int = 6 * HOUR
    max_reminders: int = 2
    expire_after: int = 3 * DAY
    # The undo window: an approved basket is ordered this many seconds later, unless an approver
    # presses Undo (0: at once; at once too wherever no timers are armed).
    order_delay: int = DEFAULT_ORDER_DELAY
    # Where approved baskets go; None: where the deploy sends them (saved before schema 3).
    orders: OrderChoice | None = None
    weekly: WeeklyRun | None = None
    household: Household = field(default_factory=Household)
    # Where baskets are priced, and the week's budget in cents (schema 4; None: not chosen).
    store: ChosenStore | None = None
    budget_cents: int | None = None
    admins: tuple[str, ...] = ()
    changes: tuple[Change, ...] = ()
    weekly_kept: KeptRun | None = None

    def __post_init__(self) -> None:
        approvers = _users(list(self.approvers), "approvers", MAX_APPROVERS)
        object.__setattr__(self, "approvers", approvers)
        object.__setattr__(self, "admins", _users(list(self.admins), "admins", MAX_ADMINS))
        check_int(self.approvals_needed, "approvals_needed", ge=1)
        if self.approvals_needed > (len(self.approvers) or MAX_QUORUM):
            raise ValueError(
                "approvals_needed must be at most the number of approvers"
                if self.approvers
                else f"approvals_needed must be at most {MAX_QUORUM}"
            )
        check_bool(self.no_self_approval, "no_self_approval")
        if check_int(self.rounds, "rounds", ge=1) > 10:  # (MAX_ROUNDS allows 1 to 10)
            raise ValueError("rounds must be at most 10")
        check_int(self.remind_after, "remind_after", ge=0)
        check_int(self.max_reminders, "max_reminders", ge=0)
        check_int(self.expire_after, "expire_after", ge=0)
        if self.max_reminders > MAX_REMINDERS or self.remind_after > MAX_REMIND_AFTER:
            raise ValueError(f"at most {MAX_REMINDERS} reminders, at most a week apart")
        if self.expire_after > MAX_EXPIRE_AFTER:
            raise ValueError("expire_after must be at most 21 days")
        if check_int(self.order_delay, "order_delay", ge=0) > MAX_ORDER_DELAY:
            raise ValueError("order_delay must be at most a day")
        if self.orders is not None and not isinstance(self.orders, OrderChoice):
            raise ValueError("orders must be an OrderChoice or None")
        if self.weekly is not None and not isinstance(self.weekly, WeeklyRun):
            raise ValueError("weekly must be a WeeklyRun or None")
        if self.weekly_kept is not None and not isinstance(self.weekly_kept, KeptRun):
            raise ValueError("weekly_kept must be a KeptRun or None")
        if self.store is not None and not isinstance(self.store, ChosenStore):
            raise ValueError("store must be a ChosenStore or None")
        budget = self.budget_cents
        if budget is not None and check_int(budget, "budget_cents", ge=1) > MAX_BUDGET_CENTS:
            raise ValueError(f"budget_cents must be at most {MAX_BUDGET_CENTS}")
        if not isinstance(self.household, Household):
            raise ValueError("household must be a Household")
        for change in self.changes:
            if not isinstance(change, Change):
                raise ValueError("changes must be Change values")

    def saved_by(self, by: str, at: int, what: str) -> WorkspaceSettings:
        """These settings with ``what`` noted as changed by ``by`` (the newest kept first)."""
        note = Change(at=at, by=by, what=what[:MAX_CHANGE_TEXT])
        return replace(self, changes=(note, *self.changes)[:MAX_CHANGES_KEPT])

    def to_json(self) -> dict[str, Any]:
        return {
            "approvers": list(self.approvers),
            "approvals_needed": self.approvals_needed,
            "no_self_approval": self.no_self_approval,
            "rounds": self.rounds,
            "remind_after": self.remind_after,
            "max_reminders": self.max_reminders,
            "expire_after": self.expire_after,
            "order_delay": self.order_delay,
            "orders": None if self.orders is None else self.orders.to_json(),
            "weekly": None if self.weekly is None else self.weekly.to_json(),
            "household": self.household.to_json(),
            "store": None if self.store is None else self.store.to_json(),
            "budget_cents": self.budget_cents,
            "admins": list(self.admins),
            "changes": [c.to_json() for c in self.changes],
        }

    @classmethod
    def from_json(cls, data: Any) -> WorkspaceSettings:
        values = dict(fields_of(data, "WorkspaceSettings", FIELDS, FIELDS))
        values["household"] = Household.from_json(values["household"])
        weekly = values["weekly"]
        values["weekly"] = None if weekly is None else WeeklyRun.from_json(weekly)
        orders = values["orders"]
        values["orders"] = None if orders is None else OrderChoice.from_json(orders)
        store = values["store"]
        values["store"] = None if store is None else ChosenStore.from_json(store)
        changes = check_list(values["changes"], "changes", MAX_CHANGES_KEPT)
        values["changes"] = tuple(Change.from_json(c) for c in changes)
        values["approvers"] = tuple(check_list(values["approvers"], "approvers", MAX_APPROVERS))
        values["admins"] = tuple(check_list(values["admins"], "admins", MAX_ADMINS))
        return cls(**values)


FIELDS = (
    "approvers",
    "approvals_needed",
    "no_self_approval",
    "rounds",
    "remind_after",
    "max_reminders",
    "expire_after",
    "order_delay",
    "orders",
    "weekly",
    "household",
    "store",
    "budget_cents",
    "admins",
    "changes",
)


def check_list(value: Any, where: str, most: int) -> list[Any]:
    if not isinstance(value, list):
        raise ValueError(f"{where} must be a list, not {type(value).__name__}")
    if len(value) > most:
        raise ValueError(f"{where} must have at most {most} items, not {len(value)}")
    return value
