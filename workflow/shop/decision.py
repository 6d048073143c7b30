"""The answer about a basket: approve, reject, a change, an edit, an Undo, or nobody in time.

:class:`BasketDecision` is what the ``approve-basket`` port takes back, from a click, a typed
answer (:data:`APPROVE_WORDS`, :data:`REJECT_WORDS`), a person's edit or the bot's timer; the
graph's conditions route on it alone (``workflow.shop.conditions``). Its schema version and
upgrades are registered with the graph (``workflow.shop.graph.DECISION_VERSION``). It holds
:class:`~workflow.shop.basket.Item` values (an edit), so it builds on ``basket.py``.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from workflow.persistence.values import (
    check_bool,
    check_int,
    check_optional_int,
    check_optional_str,
    check_str,
    fields_of,
)

from .basket import MAX_ITEMS, Item

# The typed answers that are decisions, compared in lower case; any other text is a change.
APPROVE_WORDS = ("y", "yes", "approve", "ok")
REJECT_WORDS = ("n", "no", "reject")

MAX_APPROVALS = 50  # people named in one decision's approvals
MAX_USER_ID_LENGTH = 64  # a Slack user ID, as ShopRequest.requested_by

# A plain frozen class with to_json/from_json (``workflow.persistence.values``), checked as it is
# built, as the values of ``basket.py`` are; ``to_json`` lists the fields in declaration order:
# the order is in the checkpoint's bytes.


@dataclass(frozen=True, slots=True, kw_only=True)
class BasketDecision:
    """The answer about basket ``round``: approve, reject, or a change (text), from a person;
    or, from the bot once nobody answered in time, expired at ``expired_at`` (epoch seconds).

    An approval says who has approved the basket so far, this answer's person last
    (``approvals``, each a Slack user ID, "" in the terminal), and how many different people
    the basket needed when it was given (``needed``, the household's rule at that click): a
    basket is ordered once ``needed`` different people approved it (:attr:`quorum_reached`),
    and asked again until then (``workflow.shop.graph``, version 2). Any other answer names
    nobody and ends or revises the basket whatever the count.

    The approval that completes the quorum may be held (``hold_until``, epoch seconds: the
    household's undo window, ``ORDER_DELAY``): the basket is ordered when its timer fires, unless
    an approver's Undo (``undo``) comes first and the approvals start again (graph version 3).

    An edit (``edit``: the basket's items as the person left them, Edit items) is an answer of
    its own: the edited basket is asked about again, the same round, with no model call and the
    approvals starting again (graph version 4).

    Schema version 2 added ``expired_at``, version 3 ``approvals`` and ``needed``, version 4
    ``hold_until`` and ``undo``, version 5 ``edit``, each written only when set
    (``DECISION_VERSION``; older values read as not expired, approved by one person of one,
    held by nobody, no edit).
    """

    approved: bool
    change: str | None = None
    round: int  # >= 1
    expired_at: int | None = None  # >= 0
    approvals: tuple[str, ...] = ()  # at most MAX_APPROVALS user IDs
    needed: int = 1  # >= 1
    hold_until: int | None = None  # an approval that completes the quorum, held until then
    undo: bool = False  # an approver's Undo of a held approval
    edit: tuple[Item, ...] | None = None  # the basket as edited by hand (1 to MAX_ITEMS items)

    def __post_init__(self) -> None:
        check_bool(self.approved, "BasketDecision.approved")
        check_optional_str(self.change, "BasketDecision.change")
        check_int(self.round, "BasketDecision.round", ge=1)
        check_optional_int(self.expired_at, "BasketDecision.expired_at", ge=0)
        approvals = self.approvals
        if not isinstance(approvals, tuple | list) or len(approvals) > MAX_APPROVALS:
            raise ValueError(f"BasketDecision.approvals must be a list of at most {MAX_APPROVALS}")
        for i, user in enumerate(approvals):
            check_str(user, f"BasketDecision.approvals[{i}]", max_length=MAX_USER_ID_LENGTH)
        object.__setattr__(self, "approvals", tuple(approvals))
        check_int(self.needed, "BasketDecision.needed", ge=1)
        check_optional_int(self.hold_until, "BasketDecision.hold_until", ge=0)
        check_bool(self.undo, "BasketDecision.undo")
        if self.hold_until is not None and not (self.approved and self.quorum_reached):
            raise ValueError("BasketDecision.hold_until holds an approval that completes a quorum")
        if self.undo and (self.approved or self.change is not None):
            raise ValueError("BasketDecision.undo is an answer of its own")
        if self.edit is not None:
            edit = self.edit
            if not isinstance(edit, tuple | list) or not 1 <= len(edit) <= MAX_ITEMS:
                raise ValueError(f"BasketDecision.edit must have 1 to {MAX_ITEMS} items")
            for i, item in enumerate(edit):
                if not isinstance(item, Item):
                    raise ValueError(f"BasketDecision.edit[{i}] must be an Item")
            object.__setattr__(self, "edit", tuple(edit))
            if self.approved or self.change is not None or self.undo:
                raise ValueError("BasketDecision.edit is an answer of its own")

    @property
    def held(self) -> bool:
        """An approval that completes the quorum, held for the undo window."""
        return self.hold_until is not None

    @property
    def quorum_reached(self) -> bool:
        """Whether this answer ends the asking: anything but an approval does; an approval
        does once ``needed`` different people approved (one is always enough for one)."""
        if not self.approved or self.needed <= 1:
            return True
        return len(set(self.approvals)) >= self.needed

    def to_json(self) -> dict[str, Any]:
        return {
            "approved": self.approved,
            "change": self.change,
            "round": self.round,
            "expired_at": self.expired_at,
            "approvals": list(self.approvals),
            "needed": self.needed,
            **({"hold_until": self.hold_until} if self.hold_until is not None else {}),
            **({"undo": True} if self.undo else {}),
            **({"edit": [i.to_json() for i in self.edit]} if self.edit is not None else {}),
        }

    @classmethod
    def from_json(cls, data: Any) -> BasketDecision:
        fields = (
            "approved",
            "change",
            "round",
            "expired_at",
            "approvals",
            "needed",
            "hold_until",
            "undo",
            "edit",
        )
        data = dict(fields_of(data, "BasketDecision", fields, ("approved", "round")))
        approvals = data.get("approvals", [])
        if not isinstance(approvals, list):  # JSON's own type: a list, never a string
            raise ValueError(
                f"BasketDecision.approvals must be a list, not {type(approvals).__name__}"
            )
        if "edit" in data:
            edit = data["edit"]
            if not isinstance(edit, list) or len(edit) > MAX_ITEMS:
                raise ValueError(f"BasketDecision.edit must be a list of at most {MAX_ITEMS}")
            data["edit"] = tuple(
                Item.from_json(item, f"BasketDecision.edit[{i}]") for i, item in enumerate(edit)
            )
        return cls(**data)

    @property
    def edited(self) -> bool:
        """An edit by hand (Edit items): asked about again, the same round."""
        return self.edit is not None

    @classmethod
    def edited_to(cls, items: Sequence[Item], round: int) -> BasketDecision:
        """A person's edit of basket ``round``: its items as they left them."""
        return cls(approved=False, round=round, edit=tuple(items))

    @classmethod
    def expired(cls, round: int, at: float) -> BasketDecision:
        return cls(approved=False, round=round, expired_at=int(at))

    def released(self) -> BasketDecision:
        """A held approval once its undo window is over: the same approvals, ordered now."""
        return dataclasses.replace(self, hold_until=None)

    @classmethod
    def undone(cls, round: int) -> BasketDecision:
        """An approver's Undo of a held approval: the basket is asked about again."""
        return cls(approved=False, round=round, undo=True)

    @classmethod
    def from_answer(cls, answer: str | None, round: int) -> BasketDecision:
        """A typed answer: one of :data:`APPROVE_WORDS` approves; one of :data:`REJECT_WORDS`, or
        nothing, rejects (in any case, surrounding spaces ignored); any other text asks for that
        change. So a plain "yes" or "no" is a decision, and costs no model call."""
        text = (answer or "").strip()
        if text.lower() in APPROVE_WORDS:
            return cls(approved=True, round=round)
        if not text or text.lower() in REJECT_WORDS:
            return cls(approved=False, round=round)
        return cls(approved=False, change=text, round=round)
