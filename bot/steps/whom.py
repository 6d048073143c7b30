"""Whom a basket is for, as its context line says it (issue 33): how many it was shopped for,
what the household doesn't eat, what it always buys.

How many is what the shopper was told: the request's own "for six" ("family of 5", "we are
3") first, as the offline shopper reads it (``workflow.shop.reading.household``) and as Claude
reads the request; else the household's number from the workspace's settings. When neither
says, Claude is told no number, and the line says so ("how many people: not said"); the offline
shopper uses its own default (``workflow.shop.reading.household``), and the line says that
number (:func:`as_shopped`, where the turn tells Slack: only the deploy knows its shopper).
"""

from __future__ import annotations

from dataclasses import replace
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from workflow.shop.basket import ShopRequest

NOT_SET = "how many people: not said (Settings)"


def household_line(asked: ShopRequest) -> str:
    """``For 6 · no pork · always oat milk``: the household's line (``Household.line``) with
    how many the request itself says, when it says, in place of the settings' number."""
    from workflow.shop import reading

    said = reading.normal(asked.text)
    size, rest = reading.household(said)
    people = size if rest != said else asked.household.people
    line = replace(asked.household, people=people).line()
    return line if people else " · ".join(part for part in (NOT_SET, line) if part)


def as_shopped(line: str) -> str:
    """``line`` as the offline shopper shopped: its default number where nothing said one."""
    if not line.startswith(NOT_SET):
        return line
    from workflow.shop import reading

    default, _ = reading.household("")
    return f"For {default}" + line[len(NOT_SET) :]
