"""What travels through the weekly-shop workflow: the basket, the answer, the progress event."""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

from ..events import WorkflowEvent
from ..values import (
    check_bool,
    check_int,
    check_optional_int,
    check_optional_str,
    check_str,
    check_str_list,
    fields_of,
)

BULLETS = "-*•+"
_BULLET = re.compile(r"^(?:[-*+]\s+|•\s*)")  # "- x", "* x", "+ x", "•x"; not "*bold*"
_LIST_MARK = re.compile(r"^(?:\d{1,3}[.)]|\(\d{1,3}\)|\[[ xX]?\])\s+")
_HEADING = re.compile(r"^(?:#{1,6}\s|\*\*[^*\d]+\*\*$|__[^_\d]+__$|\*[^*\d]+\*$)")
_CHATTER = re.compile(
    r"^(?:here(?:'s| is| are)|i(?:'ve| have|'ll| will)|let me know|enjoy|hope|happy|"
    r"this (?:basket|list|should)|sure\b|certainly|of course|note:|based on|feel free)",
    re.IGNORECASE,
)


def _is_not_an_item(line: str) -> bool:
    """A preamble, a heading or a closing remark, not something to order."""
    words = line.strip("*_ #").rstrip()
    return bool(_HEADING.match(line) or words.endswith((":", "!", "?")) or _CHATTER.match(words))


MAX_ITEMS = 500
MAX_ITEM_LENGTH = 500


# The values below cross checkpoints: plain frozen classes with to_json/from_json
# (``workflow.values``), checked as they are built, whether by code (``ValueError``) or from a
# checkpoint read back. ``to_json`` lists the fields in declaration order, as the pydantic models
# they replace wrote them: the bytes of a checkpoint are the same.


@dataclass(frozen=True, slots=True, kw_only=True)
class Basket:
    """One basket: the items, one per line, and which basket of the session it is (from 1)."""

    items: list[str]  # at most MAX_ITEMS
    round: int  # >= 1

    def __post_init__(self) -> None:
        items = check_str_list(self.items, "Basket.items", max_length=MAX_ITEMS)
        object.__setattr__(self, "items", items)  # a copy: the caller's list is not shared
        check_int(self.round, "Basket.round", ge=1)

    def to_json(self) -> dict[str, Any]:
        return {"items": list(self.items), "round": self.round}

    @classmethod
    def from_json(cls, data: Any) -> Basket:
        return cls(**fields_of(data, "Basket", ("items", "round"), ("items", "round")))

    @classmethod
    def parse(cls, text: str, round: int) -> Basket:
        """Items from the model's text, one a line: what is ordered is exactly what is listed.

        A reply's other lines never become items: a preamble or a heading ("Here is your
        basket:", "## Produce", "**Dairy**"), a closing remark ("Enjoy!", "Let me know if…").
        Bullets and numbering ("- ", "3. ", "(4) ") are taken off; empty lines dropped.
        """
        items = []
        for line in text.splitlines():
            raw = line.strip()
            if not raw or _is_not_an_item(raw):
                continue
            if raw.strip(BULLETS + " ") == "":
                continue  # a bare bullet or a rule ("-", "---", "* * *")
            item = _LIST_MARK.sub("", _BULLET.sub("", raw)).strip()
            if item:
                items.append(item[:MAX_ITEM_LENGTH])
        return cls(items=items[:MAX_ITEMS], round=round)


@dataclass(frozen=True, slots=True, kw_only=True)
class ShopRequest:
    """A week's request and who made it (a Slack user ID, or "" in the terminal)."""

    text: str  # 1 to 3000 characters
    requested_by: str = ""  # at most 64 characters

    def __post_init__(self) -> None:
        check_str(self.text, "ShopRequest.text", min_length=1, max_length=3000)
        check_str(self.requested_by, "ShopRequest.requested_by", max_length=64)

    def to_json(self) -> dict[str, Any]:
        return {"text": self.text, "requested_by": self.requested_by}

    @classmethod
    def from_json(cls, data: Any) -> ShopRequest:
        return cls(**fields_of(data, "ShopRequest", ("text", "requested_by"), ("text",)))


@dataclass(frozen=True, slots=True, kw_only=True)
class BasketDecision:
    """The answer about basket ``round``: approve, reject, or a change (text), from a person;
    or, from the bot once nobody answered in time, expired at ``expired_at`` (epoch seconds).

    Schema version 2 added ``expired_at`` (``DECISION_VERSION``; version 1 values read as not
    expired).
    """

    approved: bool
    change: str | None = None
    round: int  # >= 1
    expired_at: int | None = None  # >= 0

    def __post_init__(self) -> None:
        check_bool(self.approved, "BasketDecision.approved")
        check_optional_str(self.change, "BasketDecision.change")
        check_int(self.round, "BasketDecision.round", ge=1)
        check_optional_int(self.expired_at, "BasketDecision.expired_at", ge=0)

    def to_json(self) -> dict[str, Any]:
        return {
            "approved": self.approved,
            "change": self.change,
            "round": self.round,
            "expired_at": self.expired_at,
        }

    @classmethod
    def from_json(cls, data: Any) -> BasketDecision:
        fields = ("approved", "change", "round", "expired_at")
        return cls(**fields_of(data, "BasketDecision", fields, ("approved", "round")))

    @classmethod
    def expired(cls, round: int, at: float) -> BasketDecision:
        return cls(approved=False, round=round, expired_at=int(at))

    @classmethod
    def from_answer(cls, answer: str | None, round: int) -> BasketDecision:
        """``y`` approves, ``n`` or nothing rejects, any other text asks for that change."""
        text = (answer or "").strip()
        if text in ("y", "Y"):
            return cls(approved=True, round=round)
        if text in ("", "n", "N"):
            return cls(approved=False, round=round)
        return cls(approved=False, change=text, round=round)


@dataclass(frozen=True)
class ShopProgress(WorkflowEvent):
    """``basket written`` / ``basket revised`` / ``order placed`` / ``order skipped``."""

    step: str
    detail: str
