"""The shopper's answer as it is written: the Messages API streamed, each finished item passed on.

``ClaudeShopper`` asks through here when it is given ``on_items``, or when the run's context has
a :data:`DRAFT` to show (issue 36): the same request, streamed (server-sent events), read into
the same final answer (the blocks, the stop reason, the usage), checked the same way; in
between, each time the forced ``submit_basket`` input has one more *finished* item,
``on_items`` is called with every finished item so far. What it is given is a draft: the items
as the model wrote them, before the basket is whole, checked against the household's rules or
priced. Whoever shows it must say so; nothing here lets a draft be approved.

The raw events are read, not the SDK's ``messages.stream()`` helper: that one parses the whole
input written so far at every piece (its ``snapshot``), which grows with the square of an
answer's length; here :class:`ItemScanner` reads each piece once and yields an item when its
closing brace arrives (the tool input is ``{"items": [{…}, {…}]}``, fine-grained: pieces end
anywhere). The input itself is parsed once, when its block stops. An entry that does not fit
(no quantity, an unknown aisle) is left out of the draft; the final check (``items_from_tool``)
refuses the whole answer as before, and past ``MAX_ITEMS`` nothing more is shown.

The SDK's errors come out of the iteration as they would from ``messages.create`` (a dropped
connection is an ``APIConnectionError``), but for an ``error`` event mid-stream: the SDK raises it
as an ``APIStatusError`` with the stream's status, 200, and it is the API's 529, so it is said
as the shopper being unavailable, as a 529 is.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from contextvars import ContextVar
from dataclasses import dataclass, field
from typing import Any

from .basket import MAX_ITEMS, Item, check_new_quantity
from .errors import ShopperUnavailable

ItemsSeen = Callable[[list[Item]], None]
# Where the basket being written is shown, if anywhere: set by whoever starts a run that should
# show it (the bot's ``/shop``), read by ``ClaudeShopper`` when it writes; asyncio tasks copy it.
DRAFT: ContextVar[ItemsSeen | None] = ContextVar("weekly_shop_draft", default=None)
ITEMS_TOOL = "submit_basket"  # ``shopper.TOOL_NAME``: the one whose input is a list of items


class ItemScanner:
    """Reads a ``submit_basket`` input's JSON as it comes and gives each item object's text
    once it is closed: objects two levels in (``{"items": [ {…} ]}``), strings and escapes
    respected."""

    def __init__(self) -> None:
        self.depth = 0
        self.in_string = self.escaped = False
        self.current: list[str] | None = None

    def feed(self, piece: str) -> list[str]:
        done = []
        for ch in piece:
            if self.current is not None:
                self.current.append(ch)
            if self.in_string:
                if self.escaped:
                    self.escaped = False
                elif ch == "\\":
                    self.escaped = True
                elif ch == '"':
                    self.in_string = False
            elif ch == '"':
                self.in_string = True
            elif ch in "{[":
                self.depth += 1
                if self.depth == 3 and ch == "{":
                    self.current = [ch]
            elif ch in "}]":
                if self.depth == 3 and ch == "}" and self.current is not None:
                    done.append("".join(self.current))
                    self.current = None
                self.depth -= 1
        return done


def draft_item(text: str, index: int) -> Item | None:
    """One finished entry as an item, or None when it does not fit (the final check says why)."""
    try:
        entry = json.loads(text)
        if not isinstance(entry, dict) or entry.get("quantity") is None:
            return None
        return check_new_quantity(Item.from_json(entry, f"items[{index}]"), f"items[{index}]")
    except (TypeError, ValueError):
        return None


@dataclass
class Block:
    """A content block of the streamed answer, as ``ClaudeShopper`` reads a message's."""

    type: str
    name: str = ""
    text: str = ""
    input: Any = None
    written: list[str] = field(default_factory=list)

    def close(self) -> None:
        """The block has stopped: a tool's input is the JSON its pieces make (None if not)."""
        if self.type != "tool_use":
            return
        text = "".join(self.written)
        try:
            self.input = json.loads(text) if text else {}
        except ValueError:
            self.input = None  # not JSON: the shopper's check says the reply does not fit


@dataclass
class Usage:
    input_tokens: int = 0
    output_tokens: int = 0
    cache_read_input_tokens: int | None = None
    cache_creation_input_tokens: int | None = None


@dataclass
class Answer:
    """The streamed message as ``messages.create`` would have returned it, as far as the shopper
    reads one: its blocks, its stop reason and its usage."""

    content: list[Block] = field(default_factory=list)
    stop_reason: str | None = None
    usage: Usage = field(default_factory=Usage)

    def count(self, usage: Any) -> None:
        for name in vars(self.usage):
            value = getattr(usage, name, None)
            if value is not None:
                setattr(self.usage, name, int(value))


async def streamed(client: Any, request: dict[str, Any], on_items: ItemsSeen) -> Answer:
    """``client.messages.create(**request)``'s answer, streamed; ``on_items`` is called with
    the finished items each time there is one more."""
    answer, scanner, items, seen = Answer(), ItemScanner(), [], 0
    stream = await client.messages.create(**request, stream=True)
    try:
        async for event in stream:
            kind = event.type
            if kind == "message_start":
                answer.count(event.message.usage)
            elif kind == "content_block_start":
                started = event.content_block
                name = str(getattr(started, "name", ""))
                answer.content.append(Block(type=str(started.type), name=name))
            elif kind == "content_block_delta":
                block, delta = answer.content[event.index], event.delta
                if delta.type == "text_delta":
                    block.text += delta.text
                elif delta.type == "input_json_delta":
                    block.written.append(delta.partial_json)
                    if block.name == ITEMS_TOOL and seen <= MAX_ITEMS:
                        for text in scanner.feed(delta.partial_json):
                            seen += 1
                            item = draft_item(text, seen - 1)
                            if item is not None and seen <= MAX_ITEMS:
                                items.append(item)
                                on_items(list(items))
            elif kind == "content_block_stop":
                answer.content[event.index].close()
            elif kind == "message_delta":
                answer.stop_reason = event.delta.stop_reason
                answer.count(event.usage)
    except Exception as exc:
        # An error event mid-stream reaches the SDK with the stream's 200: "an overloaded_error,
        # which would normally correspond to an HTTP 529" (the streaming docs): the API is busy.
        if getattr(exc, "status_code", None) == 200:
            raise ShopperUnavailable(f"Claude: {type(exc).__name__} mid-stream") from exc
        raise
    finally:
        await stream.close()
    return answer
