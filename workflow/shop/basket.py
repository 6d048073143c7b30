"""What travels through the weekly-shop workflow: the basket, the answer, the progress event."""

from __future__ import annotations

import re
from dataclasses import dataclass

from pydantic import BaseModel, ConfigDict, Field

from ..events import WorkflowEvent

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


class Basket(BaseModel):
    """One basket: the items, one per line, and which basket of the session it is (from 1)."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    items: list[str] = Field(max_length=MAX_ITEMS)
    round: int = Field(ge=1)

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


class ShopRequest(BaseModel):
    """A week's request and who made it (a Slack user ID, or "" in the terminal)."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    text: str = Field(min_length=1, max_length=3000)
    requested_by: str = Field(default="", max_length=64)


class BasketDecision(BaseModel):
    """The answer about basket ``round``: approve, reject, or a change (text), from a person;
    or, from the bot once nobody answered in time, expired at ``expired_at`` (epoch seconds).

    Schema version 2 added ``expired_at`` (``DECISION_VERSION``; version 1 values read as not
    expired).
    """

    model_config = ConfigDict(frozen=True, extra="forbid")

    approved: bool
    change: str | None = None
    round: int = Field(ge=1)
    expired_at: int | None = Field(default=None, ge=0)

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
