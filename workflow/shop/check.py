"""The bot's check of every basket against what the household doesn't eat.

Whoever wrote the basket (Claude, the offline shopper, a person's edit), the bot reads each item's
name against the week's rules (``workflow.shop.diet``) after it was written: the model's promise
is not the check. The week's rules are the household's ("What we don't eat", in Settings) and
every diet or category the week's request and its changes ruled out ("no fish", "we are
vegetarian"; "no salmon" is a change, not a rule). They hold all week: to eat it after all, a
person edits the basket or the settings.

:func:`write_checked` asks the shopper; if an item breaks a rule it asks once more, naming each
conflict (``Brief.conflicts``), and whatever still breaks one is flagged on the item itself: its
note starts with the reason, "contains pork: you said no pork" (:func:`flagged`), shown on the
basket in Slack as plain text, so it cannot ping anyone. A flag is recomputed from the name every
time a basket is written, so it never outlives its conflict and never appears twice.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from dataclasses import replace

from . import reading
from .basket import MAX_NOTE_LENGTH, Item
from .diet import Diet, conflicts, read_diet
from .errors import ShopperError
from .household import Household
from .shopper import Brief, Shopper, ShopperReply

# A flag as :func:`flagged` writes it, to take off an item's note before it is flagged again.
_FLAG = re.compile(r"contains [^:;]{1,100}: you said [^;]{1,200}?(?:; |$)")
# "we don't eat pork" in a request or a change: a category said without "no".
_NEVER = re.compile(r"^(?:we |i )?(?:don't|do not|never|can't|cannot) eat\b")


def clause_diet(action: str, target: str) -> Diet | None:
    """The rules one clause of a request or change states (``reading.clauses``), or None:
    "no fish" and "we don't eat pork" (categories), "we are vegetarian" (a diet); never "no
    salmon" (plain words: a change of the basket) nor "fish on Friday" (a dinner)."""
    said = read_diet(target)
    if not said.rules or any(not rule.covers for rule in said.rules):
        return None
    if action == "remove" or _NEVER.match(target) or all(rule.diet for rule in said.rules):
        return said
    return None


def said_diet(text: str) -> Diet:
    """The rules a request or a change states, clause by clause."""
    diet = Diet()
    for action, target in reading.clauses(reading.normal(text), "maybe"):
        if (said := clause_diet(action, target)) is not None:
            diet += said
    return diet


def week_diet(household: Household, texts: Iterable[str]) -> Diet:
    """The household's rules and those the week's request and changes (``texts``) stated."""
    diet = household.diet
    for text in texts:
        diet += said_diet(text)
    return diet


def brief_diet(brief: Brief) -> Diet:
    """The rules a basket written for ``brief`` is checked against."""
    changes = [*brief.earlier, *([brief.change] if brief.change else [])]
    return week_diet(brief.household, [brief.request, *changes])


def conflicting(items: Sequence[Item], diet: Diet) -> list[str]:
    """Each item that breaks a rule, as the shopper is told it: "pork chops: contains pork: you
    said no pork"."""
    found = [(item.name, conflicts(item.name, diet)) for item in items]
    return [f"{name}: {'; '.join(reasons)}" for name, reasons in found if reasons]


def _unflagged(note: str | None) -> str | None:
    left = _FLAG.sub("", note or "").strip(" ;")
    return left or None


def flagged(items: Sequence[Item], diet: Diet) -> list[Item]:
    """``items``, each that breaks a rule with the reasons first in its note ("contains pork: you
    said no pork; for Friday"), and no flag left on one that does not. Nothing changes when the
    week has no rules."""
    if not diet.rules:
        return list(items)
    out = []
    for item in items:
        kept = _unflagged(item.note)
        note = "; ".join([*conflicts(item.name, diet), *([kept] if kept else [])]) or None
        if note is not None and len(note) > MAX_NOTE_LENGTH:
            note = note[: MAX_NOTE_LENGTH - 1] + "…"
        out.append(item if note == item.note else replace(item, note=note))
    return out


async def write_checked(shopper: Shopper, brief: Brief) -> ShopperReply:
    """The shopper's basket for ``brief``, checked: asked again once with the conflicts named,
    what remains flagged. A failed second ask leaves the first answer, flagged; the reply's
    tokens are both asks'. Raises ShopperError when the first ask has no basket."""
    diet = brief_diet(brief)
    reply = await shopper.write(brief)
    found = conflicting(reply.items, diet)
    if found:
        try:
            again = await shopper.write(replace(brief, conflicts=tuple(found)))
        except ShopperError:
            again = None  # the first basket stands, with its flags
        if again is not None:
            reply = replace(
                again,
                output_tokens=reply.output_tokens + again.output_tokens,
                input_tokens=reply.input_tokens + again.input_tokens,
                cache_read_tokens=reply.cache_read_tokens + again.cache_read_tokens,
                cache_write_tokens=reply.cache_write_tokens + again.cache_write_tokens,
            )
    return replace(reply, items=flagged(reply.items, diet))
