"""A stand-in for Claude in the sandbox (``weekly-shop sandbox --model stand-in``), so that a
basket can be seen as it is written without an Anthropic key.

It is the fake Messages API the tests use (``anthropic_api.FakeAnthropic``, streaming included:
``anthropic_stream``), on 127.0.0.1 with a per-run key that only the sandbox's bot holds, paced
by the same model of the API's speed as ``make bench`` (:data:`SPEED` output tokens a second
after :data:`BASE_LATENCY`), and answering from the offline shopper's recipe table
(``workflow.shop.offline``), never a model:

- basket 1: the week's request, as the shopper sent it (after ``WEEK_OPENING`` in the system
  prompt), read as the offline shopper reads it ("tacos on Tuesday, we have rice": the tacos'
  ingredients, no rice), scaled to "We are N." when the household's settings say it, with what
  they always buy; the items as a ``submit_basket`` call, aisles and all;
- a change: the last basket as the revision prompt lists it, the earlier changes and the one
  asked, read as the offline shopper reads a change; answered as the difference
  (``revise_basket``), or the same basket whole when the change changed nothing (the workflow
  then asks again, as the same round);
- asked again because items broke the household's rules (``CONFLICT_OPENING``): the same answer
  without the items named. It reads no other rule of the household's settings: the bot's own
  check (``workflow.shop.check``) finds what it wrote against them, as it would with Claude.

A request in which the table knows no dinner is answered with one line ("ingredients for …"),
as a model would write something; the bot shows it as it shows any basket.
"""

from __future__ import annotations

import re
import secrets
from dataclasses import replace
from typing import Any

from workflow.shop.basket import MAX_ITEM_LENGTH, Item
from workflow.shop.dishes import number
from workflow.shop.household import Household
from workflow.shop.offline import NoDinnersFound, written_for
from workflow.shop.revision import REVISE_TOOL_NAME
from workflow.shop.shopper import (
    CONFLICT_OPENING,
    EARLIER_OPENING,
    HOUSEHOLD_OPENING,
    REVISION_OPENING,
    TOOL_NAME,
    Brief,
)

from .anthropic_api import FakeAnthropic, Reply, prompt_of, week_of

SPEED = 60.0  # output tokens a second: the stated model of make bench (bench/revisions.py)
BASE_LATENCY = 0.5  # seconds before the first event
CHANGE_OPENING = "The household asks for this change:"  # as ``Brief.ask`` words it
BANNER = (
    "A stand-in writes the baskets, not Claude: the offline shopper's recipe table, answered "
    "through a local fake of Claude's Messages API that streams it at {speed:g} output tokens "
    "a second after {latency:g} s, so basket 1 is seen as it is written."
)


def banner(speed: float = SPEED, latency: float = BASE_LATENCY) -> str:
    """What the page's banner says while the stand-in writes the baskets."""
    return BANNER.format(speed=speed, latency=latency)


def start(speed: float = SPEED, latency: float = BASE_LATENCY) -> FakeAnthropic:
    """The stand-in, listening on 127.0.0.1 with a key of its own (``api_key``: give it to the
    bot as ``ANTHROPIC_API_KEY``, its ``url`` as ``ANTHROPIC_BASE_URL``)."""
    return FakeAnthropic(
        api_key=f"sandbox-stand-in-{secrets.token_hex(16)}",
        responder=answer,
        speed=speed,
        base_latency=latency,
    ).start()


def answer(request: dict[str, Any]) -> Reply:
    """The stand-in's reply to a Messages request from the weekly shop's shopper."""
    prompt = prompt_of(request)
    brief = Brief(request=week_of(request), household=_household(request))
    refused = _conflicting(prompt)
    if REVISION_OPENING in prompt:
        return _revision(prompt, brief, refused)
    try:
        items, _ = written_for(brief)
    except NoDinnersFound:
        asked = f"ingredients for {brief.request or 'the week'}"
        items = [Item(name=asked[:MAX_ITEM_LENGTH].strip(), quantity=1)]
    return _whole([i for i in items if i.name.casefold() not in refused] or items)


def _whole(items: list[Item]) -> Reply:
    """A ``submit_basket`` call for ``items`` (the text: one item a line, as ``Reply`` reads)."""
    given = {"items": [_as_input(item) for item in items]}
    return Reply(text="\n".join(i.line() for i in items), tool=TOOL_NAME, tool_input=given)


def _as_input(item: Item) -> dict[str, Any]:
    """An item as the strict ``submit_basket`` schema takes it: no empty note, no null aisle."""
    return {k: v for k, v in item.to_json().items() if v is not None and (k, v) != ("note", "")}


def _revision(prompt: str, brief: Brief, refused: set[str]) -> Reply:
    parts = prompt[prompt.find(REVISION_OPENING) :].split("\n\n")
    listed = [_listed(line) for line in parts[0].splitlines()[1:] if line.startswith("- ")]
    last = [item for item in listed if item is not None]
    earlier = _section(parts, EARLIER_OPENING)
    change = "\n".join(_section(parts, CHANGE_OPENING, bullets=False))
    asked = replace(brief, last_basket=[i.line() for i in last], change=change, earlier=earlier)
    items = [i for i in written_for(asked)[0] if i.name.casefold() not in refused]
    difference = _difference(last, items)
    if not any(difference.values()):  # nothing changed: the same basket, whole
        return _whole(items)
    return Reply(text="", tool=REVISE_TOOL_NAME, tool_input=difference)


def _difference(last: list[Item], items: list[Item]) -> dict[str, Any]:
    """A ``revise_basket`` input that turns ``last`` into ``items``: by name, as it applies."""
    before = {i.name.casefold(): i for i in last}
    after = {i.name.casefold(): i for i in items}
    changed = []
    for key, item in after.items():
        old = before.get(key)
        if old is None:
            continue
        values = {
            f: getattr(item, f) for f in ("quantity", "unit") if getattr(item, f) != getattr(old, f)
        }
        if (item.note or "") != (old.note or ""):
            values["note"] = item.note or ""
        if values:
            changed.append({"name": old.name, **values})
    return {
        "remove": [item.name for key, item in before.items() if key not in after],
        "set": changed,
        "add": [_as_input(item) for key, item in after.items() if key not in before],
    }


_LISTED = re.compile(r"^- (?P<name>.+?)(?:: (?P<amount>[^()]+?))?(?: \((?P<note>.*)\))?$")


def _listed(line: str) -> Item | None:
    """An item as ``revision_listing`` lists it: ``- chicken breast: 500 g (for Friday)``."""
    found = _LISTED.match(line.strip())
    if found is None:
        return None
    quantity, _, unit = (found["amount"] or "1").partition(" ")
    try:
        return Item(
            name=found["name"], quantity=number(quantity) or 1, unit=unit, note=found["note"]
        )
    except ValueError:  # not a line the shopper wrote: left out, as a model would misread it
        return None


def _section(parts: list[str], opening: str, bullets: bool = True) -> list[str]:
    """The lines under ``opening`` in the prompt's paragraphs (their "- " taken off)."""
    for part in parts:
        if part.startswith(f"{opening}\n"):
            lines = part.splitlines()[1:]
            return [line.removeprefix("- ") for line in lines] if bullets else lines
    return []


def _conflicting(prompt: str) -> set[str]:
    """The items a second ask names as breaking the household's rules ("pork chops: …")."""
    at = prompt.find(CONFLICT_OPENING)
    if at < 0:
        return set()
    named = prompt[at:].split("\n\n")[0].splitlines()[1:]
    return {line[2:].split(": ")[0].casefold() for line in named if line.startswith("- ")}


def _household(request: dict[str, Any]) -> Household:
    """How many people and what they always buy, when the system prompt says it."""
    system = request.get("system")
    text = (
        " ".join(b.get("text", "") for b in system if isinstance(b, dict))
        if isinstance(system, list)
        else str(system or "")
    )
    told = text.partition(HOUSEHOLD_OPENING)[2]
    people = re.search(r"\bWe are (\d+)\.", told)
    staples = re.search(r"\bAlways include: (.+?)\.(?:\s|$)", told)
    return Household(people=int(people[1]) if people else 0, staples=staples[1] if staples else "")
