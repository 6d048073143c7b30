"""Who the shopper shops for: how many, what they don't eat, what they always buy.

A workspace says it once, in its settings (``bot.records.workspace_settings``); each week's
request carries it (``ShopRequest.household``), so the shopper is told it in every prompt and the
basket's context line shows it, however the settings change while the basket waits.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from workflow.persistence.values import check_int, check_str, fields_of

from .diet import Diet, read_diet

MAX_PEOPLE = 20
MAX_AVOID = 200
MAX_STAPLES = 300
# Told after what the household said: a category covers what is made of it (the bot checks
# every basket against the same reading, ``workflow.shop.check``), and a staple is an item.
AVOID_ASK = (
    "Leave out every dish and ingredient made with what we don't eat (stock, sauces, mince and "
    "cured meats included), or put in something we eat instead."
)
STAPLES_ASK = (
    "Put each thing we always buy in the basket as an item like any other (a quantity, a unit, "
    'an aisle), with "always" as its note, never in its name.'
)


@dataclass(frozen=True, slots=True, kw_only=True)
class Household:
    """Who the shopper shops for: how many (0: not said), what they don't eat, what they
    always buy. Written by people, shown in Slack only as escaped text."""

    people: int = 0
    avoid: str = ""
    staples: str = ""

    def __post_init__(self) -> None:
        check_int(self.people, "Household.people", ge=0)
        if self.people > MAX_PEOPLE:
            raise ValueError(f"Household.people must be at most {MAX_PEOPLE}")
        check_str(self.avoid, "Household.avoid", max_length=MAX_AVOID)
        check_str(self.staples, "Household.staples", max_length=MAX_STAPLES)

    @property
    def said(self) -> bool:
        return bool(self.people or self.avoid.strip() or self.staples.strip())

    @property
    def diet(self) -> Diet:
        """What it doesn't eat, read into rules (``workflow.shop.diet``): every basket is
        checked against them."""
        return read_diet(self.avoid)

    def brief(self) -> str:
        """What the shopper is told of the household ("" when nothing is said)."""
        parts = []
        if self.people:
            parts.append(f"We are {self.people}.")
        if told := self.diet.told():
            parts.append(told)
        if self.staples.strip():
            parts.append(f"Always include: {self.staples.strip()}.")
        return " ".join(parts)

    def asks(self) -> str:
        """What the shopper is asked to do with it ("" when nothing is said to act on)."""
        asked = [AVOID_ASK] if self.diet.rules else []
        return "\n".join(asked + ([STAPLES_ASK] if self.staples.strip() else []))

    def line(self) -> str:
        """The basket's context line: ``For 4 · no pork · always oat milk``, or ``For 3 ·
        vegetarian``: a diet as said, never "no vegetarian"."""
        parts = []
        if self.people:
            parts.append(f"For {self.people}")
        if shown := self.diet.shown():
            parts.append(shown)
        if self.staples.strip():
            parts.append(f"always {self.staples.strip()}")
        return " · ".join(parts)

    def to_json(self) -> dict[str, Any]:
        return {"people": self.people, "avoid": self.avoid, "staples": self.staples}

    @classmethod
    def from_json(cls, data: Any) -> Household:
        return cls(**fields_of(data, "Household", ("people", "avoid", "staples"), ()))
