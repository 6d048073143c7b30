"""The shopper: the model that writes a basket, behind a one-method seam.

A shopper is given a :class:`Brief` (the week's request, or the last basket and the change asked
for) and answers with a :class:`ShopperReply`: the basket's items as data. ``ClaudeShopper`` turns
the brief into its prompt and asks for basket 1 through one forced, strict tool
(:data:`BASKET_TOOL`), so the model fills in a form instead of writing a list that has to be
read back, and for a change through a second one, the difference (``revise_basket``,
:mod:`workflow.shop.revision`), or the whole basket again if the difference cannot say it; what
it sends is still checked here, field by field (a reply that does not fit, or that stopped for
another reason than calling a tool, is a :class:`ShopperError`). The stable part of every
request (the tools, the system prompt, the week) is one prefix, marked for the prompt cache
(:meth:`Brief.system`). It imports the
anthropic SDK only when it is first used (the import alone takes seconds on a small machine), and
translates the SDK's errors into :mod:`workflow.shop.errors` here, so nothing else names an SDK
class. ``OfflineShopper`` (:mod:`workflow.shop.offline`) writes a clearly labelled basket from a
built-in recipe table so the product runs without a key; it reads the brief's fields, never the
prompt. Whatever a shopper writes, the bot checks it against what the household doesn't eat
(:mod:`workflow.shop.check`), asking once more with :attr:`Brief.conflicts` named. (A little
over 300 lines: the prompt's words and the checks of what comes back stay together.)
"""

from __future__ import annotations

import os
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol

from .basket import AISLES, MAX_ITEMS, Item, check_new_quantity
from .errors import (
    ShopperError,
    ShopperReplyUnfit,
    ShopperStoppedEarly,
    ShopperUnavailable,
    ShopperUnreachable,
)
from .household import Household
from .revision import REVISE_TOOL_NAME, apply_revision, revise_tool, revision_listing
from .shopper_stream import DRAFT, streamed

DEFAULT_MODEL = "claude-haiku-5-5"
MAX_OUTPUT_TOKENS = 4096

SYSTEM_PROMPT = """You write the weekly shopping basket for one household.
Submit it with the submit_basket tool: one item for each thing to buy, with its quantity and
unit, for example 500 g chicken thighs, or 2 (no unit) bell peppers.
Leave out what the household already has."""

TOOL_NAME = "submit_basket"
# The form the model fills in. ``strict`` makes the API sample only inputs that fit the schema;
# strict schemas take no numeric, length or count bounds (the API refuses them), so those are in
# the descriptions and checked on our side, with the rest, by ``items_from_tool``.
# ``eager_input_streaming``: streamed, the input comes as it is written, not as one whole
# ``items`` value at the end (fine-grained tool streaming: generally available, no beta header);
# set on every request alike, so streamed and plain ones share one cached prefix.
BASKET_TOOL: dict[str, Any] = {
    "name": TOOL_NAME,
    "description": "Submit the household's shopping basket for the week: every item to buy, once.",
    "strict": True,
    "eager_input_streaming": True,
    "input_schema": {
        "type": "object",
        "properties": {
            "items": {
                "type": "array",
                "description": f"Everything to buy: at least 1 item, at most {MAX_ITEMS}.",
                "items": {
                    "type": "object",
                    "properties": {
                        "name": {"type": "string", "description": "What to buy, in a few words."},
                        "quantity": {"type": "number", "description": "How much: more than 0."},
                        "unit": {
                            "type": "string",
                            "description": 'g, kg, ml, l, tin, pack, ... or "" for a count.',
                        },
                        "note": {"type": "string", "description": "Optional: a short note."},
                        "aisle": {"type": "string", "enum": list(AISLES)},
                    },
                    "required": ["name", "quantity", "unit"],
                    "additionalProperties": False,
                },
            }
        },
        "required": ["items"],
        "additionalProperties": False,
    },
}
REVISE_TOOL = revise_tool(BASKET_TOOL["input_schema"]["properties"]["items"]["items"])
# Both tools in every request, in this order: the tools are the start of the prompt's cached
# prefix (tools, then system, then messages), so basket 1 and its revisions share it.
TOOLS = [BASKET_TOOL, REVISE_TOOL]
# Forcing the tool makes a complete answer end with stop_reason "tool_use" (never "end_turn").
TOOL_CHOICE = {"type": "tool", "name": TOOL_NAME}
# A revision: the model must call a tool, and chooses which (the difference, or a whole basket).
REVISION_CHOICE = {"type": "any"}
EXPECTED_STOP = "tool_use"
# Prompt caching: the stable prefix (tools, system prompt, the week's request) is marked, so a
# revision reads it from the cache instead of paying for it again (5 minutes from its last use;
# a prefix shorter than the model's minimum is not cached, silently, and billed as before).
CACHED = {"type": "ephemeral"}


def items_from_tool(data: Any) -> list[Item]:
    """The items in a ``submit_basket`` input; ``ValueError`` naming the first thing that does
    not fit (our words and field names only: the model's text stays out of the message)."""
    if not isinstance(data, dict) or set(data) != {"items"}:
        raise ValueError("the input must be an object with exactly one field, items")
    raw = data["items"]
    if not isinstance(raw, list):
        raise ValueError(f"items must be a list, not {type(raw).__name__}")
    if not raw:
        raise ValueError("items is empty: a basket has at least one item")
    if len(raw) > MAX_ITEMS:
        raise ValueError(f"items must have at most {MAX_ITEMS} entries, not {len(raw)}")
    items = []
    for i, entry in enumerate(raw):
        if isinstance(entry, dict) and entry.get("quantity") is None:
            raise ValueError(f"items[{i}].quantity is required")
        try:
            items.append(check_new_quantity(Item.from_json(entry, f"items[{i}]"), f"items[{i}]"))
        except (TypeError, ValueError) as exc:
            raise ValueError(f"items[{i}]: {str(exc).split(' has unknown field ')[0]}") from None
    return items


REVISION_OPENING = "Your last basket:"
REVISION_ASK = (
    "Answer with revise_basket, naming only what changes (items by their names above). Only if "
    "the change asks for a different basket altogether, answer with submit_basket and the whole "
    "basket."
)
EARLIER_OPENING = "Changes the household asked for before, oldest first (they still hold):"


HOUSEHOLD_OPENING = "About the household (from its settings):"
# When a basket broke one of the household's rules, the second ask names each conflict (the
# bot checks every basket: ``workflow.shop.check``).
CONFLICT_OPENING = "Your first answer to this had items the household doesn't eat:"
CONFLICT_ASK = (
    "Answer again without them: leave each out, or put in something the household eats instead."
)
WEEK_OPENING = "The household's request for this week:"
WRITE_ASK = "Write this week's basket."


@dataclass(frozen=True)
class Brief:
    """What the shopper is asked for: basket 1 of ``request``, or (with ``change``) the last
    basket (``last_items``; ``last_basket``, its lines) with that change made, the week's
    request and the ``earlier`` changes (oldest first) still in view, so "we're away Friday"
    said at basket 1 holds at 3."""

    request: str
    last_basket: Sequence[str] = ()
    change: str | None = None
    earlier: Sequence[str] = ()
    household: Household = field(default_factory=Household)  # what the workspace said of it
    last_items: Sequence[Item] = ()  # the last basket as items (a revision names them)
    # Asked again (``workflow.shop.check``): each item of the first answer that broke a rule,
    # and why ("pork chops: contains pork: you said no pork").
    conflicts: Sequence[str] = ()

    @property
    def revising(self) -> bool:
        """A change of a basket held as items: answered as the difference (``revise_basket``)."""
        return self.change is not None and bool(self.last_items)

    def context(self) -> str:
        """What stays the same all week: the household, when the workspace said something of
        it, and the week's request. It ends the system prompt, so that basket 1 and every
        revision share one cached prefix (tools, system; a different ``tool_choice`` would
        miss a prefix that ends in the messages)."""
        said = "\n".join(t for t in (self.household.brief(), self.household.asks()) if t)
        told = f"{HOUSEHOLD_OPENING}\n{said}" if said else ""
        week = f"{WEEK_OPENING}\n{self.request}" if self.request else ""
        return "\n\n".join(t for t in (told, week) if t)

    def ask(self) -> str:
        """The user turn: write the basket, or (a change) the last basket, the changes asked
        before and the one asked now."""
        if self.change is None:
            return "\n\n".join([WRITE_ASK, *self._conflicts()])
        parts = [f"{REVISION_OPENING}\n{revision_listing(self.last_items)}"]
        if not self.revising:  # (a brief without items: the whole basket again)
            parts = [f"{REVISION_OPENING}\n" + "\n".join(self.last_basket)]
        if self.earlier:
            parts.append(EARLIER_OPENING + "\n" + "\n".join(f"- {c}" for c in self.earlier))
        parts.append(f"The household asks for this change:\n{self.change}")
        parts.append(REVISION_ASK if self.revising else "Return the whole basket.")
        return "\n\n".join([*parts, *self._conflicts()])

    def _conflicts(self) -> list[str]:
        named = "".join(f"- {c}\n" for c in self.conflicts)
        return [f"{CONFLICT_OPENING}\n{named}{CONFLICT_ASK}"] if named else []

    def system(self) -> list[dict[str, Any]]:
        """The Messages API ``system``: our prompt, then the week's context; the last block
        marked for the prompt cache."""
        blocks: list[dict[str, Any]] = [{"type": "text", "text": SYSTEM_PROMPT}]
        if self.context():
            blocks.append({"type": "text", "text": self.context()})
        blocks[-1] = {**blocks[-1], "cache_control": CACHED}
        return blocks


@dataclass(frozen=True)
class ShopperReply:
    """The basket's items, and what writing them cost: output tokens, input tokens billed at
    the full rate, read from the prompt cache and written to it; ``revised``: the model sent
    the difference (``revise_basket``), not a whole basket; ``unapplied``: what the offline
    shopper could not make of a change, in the person's words."""

    items: list[Item]
    output_tokens: int
    input_tokens: int = 0
    cache_read_tokens: int = 0
    cache_write_tokens: int = 0
    revised: bool = False
    unapplied: tuple[str, ...] = ()  # the parts of a change it could not make ("no fish")


class Shopper(Protocol):
    label: str

    async def write(self, brief: Brief) -> ShopperReply:
        """The model's answer to ``brief``; raises ShopperError when there is none."""
        ...


class ClaudeShopper:
    """Claude through the anthropic SDK; its own retries handle 429, 5xx and 529."""

    label = "Claude"

    def __init__(
        self,
        model: str | None = None,
        client: Any = None,
        max_tokens: int = MAX_OUTPUT_TOKENS,
        api_key: str | None = None,
        timeout: float | None = None,
        store_note: str = "",
        on_usage: Callable[[str, Any], None] | None = None,
        on_items: Callable[[list[Item]], None] | None = None,
    ) -> None:
        """``timeout`` (seconds, per attempt) overrides the SDK's default of 600 s;
        ``store_note`` tells it where the basket is priced (``pricing.store_note``);
        ``on_usage(model, usage)`` is given every answer's ``usage``, whatever the answer holds
        (what the call cost: the bot's metrics); with ``on_items``, the answer is streamed and
        it is given the draft's finished items as they come (``shopper_stream``)."""
        self.model = model or os.environ.get("ANTHROPIC_MODEL") or DEFAULT_MODEL
        self.max_tokens = max_tokens
        self._client = client
        self._api_key = api_key
        self._timeout = timeout
        self.store_note = store_note
        self.on_usage = on_usage
        self.on_items = on_items

    def _get_client(self) -> Any:
        if self._client is None:
            import anthropic  # deferred: seconds of import time, only when a basket is written

            options: dict[str, Any] = {"api_key": self._api_key}
            if self._timeout is not None:
                options["timeout"] = self._timeout
            self._client = anthropic.AsyncAnthropic(**options)
        return self._client

    async def write(self, brief: Brief) -> ShopperReply:
        import anthropic

        client = self._get_client()
        request = {
            "model": self.model,
            "max_tokens": self.max_tokens,
            "system": _with_note(brief.system(), self.store_note),
            "messages": [{"role": "user", "content": brief.ask()}],
            "tools": TOOLS,
            "tool_choice": REVISION_CHOICE if brief.revising else TOOL_CHOICE,
        }
        try:
            on_items = self.on_items or DRAFT.get()
            if on_items is None:
                response = await client.messages.create(**request)
            else:
                response = await streamed(client, request, on_items, self._timeout)
        except (anthropic.APITimeoutError, anthropic.RateLimitError) as exc:
            raise ShopperUnavailable(f"Claude: {type(exc).__name__}") from exc
        except (anthropic.InternalServerError, anthropic.RequestTimeoutError) as exc:
            raise ShopperUnavailable(f"Claude: {type(exc).__name__}") from exc
        except (
            anthropic.APIConnectionError,
            anthropic.AuthenticationError,
            anthropic.PermissionDeniedError,
        ) as exc:
            raise ShopperUnreachable(f"Claude: {type(exc).__name__}") from exc
        except anthropic.AnthropicError as exc:
            raise ShopperError(f"Claude: {type(exc).__name__}: {exc}") from exc
        if self.on_usage is not None:
            self.on_usage(self.model, response.usage)
        stop_reason = str(response.stop_reason)
        if stop_reason != EXPECTED_STOP:  # max_tokens, refusal, ...: the form is not complete
            raise ShopperStoppedEarly(stop_reason)
        allowed = (TOOL_NAME, REVISE_TOOL_NAME) if brief.revising else (TOOL_NAME,)
        calls = [b for b in response.content if b.type == "tool_use" and b.name in allowed]
        if len(calls) != 1:
            raise ShopperReplyUnfit(f"{len(calls)} {' or '.join(allowed)} calls, not 1")
        revised = calls[0].name == REVISE_TOOL_NAME
        try:
            if revised:
                items = apply_revision(brief.last_items, calls[0].input)
            else:
                items = items_from_tool(calls[0].input)
        except ValueError as exc:
            raise ShopperReplyUnfit(str(exc)) from None
        usage = response.usage
        return ShopperReply(
            items=items,
            output_tokens=int(usage.output_tokens),
            input_tokens=int(usage.input_tokens),
            cache_read_tokens=int(getattr(usage, "cache_read_input_tokens", None) or 0),
            cache_write_tokens=int(getattr(usage, "cache_creation_input_tokens", None) or 0),
            revised=revised,
        )


def _with_note(system: list[dict[str, Any]], note: str) -> list[dict[str, Any]]:
    """``system`` with ``note`` after our prompt (the week's context stays last, cached)."""
    return [system[0], {"type": "text", "text": note}, *system[1:]] if note else system
