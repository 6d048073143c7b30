"""The shopper's answer as it is written: the Messages API streamed, each finished item passed on.

``ClaudeShopper`` asks through here when it is given ``on_items``, or when the run's context has
a :data:`DRAFT` to show (issue 36): the same request, streamed (server-sent events), read into
the same final answer (the blocks, the stop reason, the usage), checked the same way; in
between, each time the forced ``submit_basket`` input has one more *finished* item,
``on_items`` is called with every finished item so far. What it is given is a draft: the items
as the model wrote them, before the basket is whole, checked against the household's rules or
priced. Whoever shows it must say so; nothing here lets a draft be approved.

A change answered as the difference (``revise_basket``, ``revision.py``) is shown the same
way: each finished operation (an item removed, set or added) is given to ``on_items.changed``,
when the draft has one ("Removing pizza dough", "Adding 1 l oat milk"). A draft that should be
posted only once the model is really asked (a change's: one that changes nothing, or comes after
the last round, asks no model) has a ``begin``, called before the request.

The raw events are read, not the SDK's ``messages.stream()`` helper: that one parses the whole
input written so far at every piece (its ``snapshot``), which grows with the square of an
answer's length; here :class:`Scanner` reads each piece once and yields an item when its
closing brace arrives (the tool input is ``{"items": [{…}, {…}]}``, fine-grained: pieces end
anywhere). The input itself is parsed once, when its block stops. An entry that does not fit
(no quantity, an unknown aisle) is left out of the draft; the final check (``items_from_tool``)
refuses the whole answer as before, and past ``MAX_ITEMS`` nothing more is shown.

Errors before the stream starts are the plain call's (the SDK retries them the same way). A
stream that breaks mid-answer (an ``error`` event, which the SDK raises as an ``APIStatusError``
with the stream's 200, or a dropped connection) is not retried by the SDK: it is asked once
more here, plain. A stream is bounded in total as a plain call is per attempt.
"""

from __future__ import annotations

import asyncio
import json
import logging
from collections.abc import Callable
from contextvars import ContextVar
from dataclasses import dataclass, field
from typing import Any

from .basket import MAX_ITEMS, Item, check_new_quantity
from .errors import ShopperUnavailable
from .revision import REVISE_TOOL_NAME, Change, draft_change

log = logging.getLogger(__name__)

ItemsSeen = Callable[[list[Item]], None]
ChangesSeen = Callable[[list[Change]], None]
# Where the basket being written is shown, if anywhere: set by whoever starts a run that should
# show it (the bot's ``/shop``), read by ``ClaudeShopper`` when it writes; asyncio tasks copy it.
DRAFT: ContextVar[ItemsSeen | None] = ContextVar("weekly_shop_draft", default=None)
ITEMS_TOOL = "submit_basket"  # ``shopper.TOOL_NAME``: the one whose input is a list of items


class Scanner:
    """Reads a tool input's JSON as it comes and gives each finished element of the arrays the
    input's object holds, with the array's key, once: an object two levels in
    (``{"items": [{…}]}``, ``{"add": [{…}]}``) when its closing brace arrives, a string
    (``{"remove": ["pizza dough"]}``) when its closing quote does. Strings and escapes are
    respected; each piece is read once."""

    def __init__(self) -> None:
        self.depth = 0
        self.in_string = self.escaped = False
        self.current: list[str] | None = None  # the element being read
        self.key: list[str] | None = None  # a string of the input's object being read
        self.last_key = self.field = ""

    def feed(self, piece: str) -> list[tuple[str, str]]:
        done: list[tuple[str, str]] = []
        for ch in piece:
            if self.current is not None:
                self.current.append(ch)
            if self.key is not None:
                self.key.append(ch)
            if self.in_string:
                if self.escaped:
                    self.escaped = False
                elif ch == "\\":
                    self.escaped = True
                elif ch == '"':
                    self.in_string = False
                    self._string_closed(done)
            elif ch == '"':
                self.in_string = True
                if self.depth == 1:
                    self.key = [ch]
                elif self.depth == 2 and self.current is None:
                    self.current = [ch]
            elif ch in "{[":
                self.depth += 1
                if self.depth == 2 and ch == "[":
                    self.field = self.last_key
                elif self.depth == 3 and ch == "{" and self.current is None:
                    self.current = [ch]
            elif ch in "}]":
                if self.depth == 3 and ch == "}" and self.current is not None:
                    done.append((self.field, "".join(self.current)))
                    self.current = None
                self.depth -= 1
        return done

    def _string_closed(self, done: list[tuple[str, str]]) -> None:
        if self.key is not None:
            self.last_key = "".join(self.key).strip('"')
            self.key = None
        elif self.depth == 2 and self.current is not None and self.current[0] == '"':
            done.append((self.field, "".join(self.current)))
            self.current = None


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


class StreamBroken(Exception):
    """The stream stopped mid-answer: an ``error`` event, or the connection dropped."""


async def streamed(
    client: Any, request: dict[str, Any], on_items: ItemsSeen, total: float | None = None
) -> Any:
    """``client.messages.create(**request)``'s answer, streamed; ``on_items`` is called with
    the finished items each time there is one more. The whole stream must end within ``total``
    seconds (the plain call's per-attempt timeout: streamed, the SDK's timeout only bounds the
    wait for each piece), else :class:`ShopperUnavailable`. A stream that breaks mid-answer is
    asked once more, plain (the SDK retries a plain call's 529s and dropped connections, never
    a stream's): the draft keeps what it showed until the basket replaces it."""
    begin = getattr(on_items, "begin", None)
    if callable(begin):  # a draft posted only once the model is asked (a change's: clicks.py)
        await asyncio.to_thread(begin)
    try:
        return await _read(client, request, on_items, total)
    except TimeoutError:
        raise ShopperUnavailable(f"Claude: no whole answer within {total} s") from None
    except StreamBroken as broken:
        log.warning("the streamed answer broke (%s); asking once more, plain", broken)
        return await client.messages.create(**request)


def _broken(exc: Exception) -> bool:
    """An error event (the SDK raises it with the stream's status, 200: "an overloaded_error,
    which would normally correspond to an HTTP 529", the streaming docs) or a dropped
    connection (``APIConnectionError``, a timeout included), after the stream had started."""
    names = {cls.__name__ for cls in type(exc).__mro__}
    return getattr(exc, "status_code", None) == 200 or "APIConnectionError" in names


async def _read(
    client: Any, request: dict[str, Any], on_items: ItemsSeen, total: float | None
) -> Answer:
    """The stream read into an :class:`Answer`. Starting it is the plain call's (the SDK's
    timeout and retries apply until the first bytes come); once started, ``total`` bounds it."""
    answer = Answer()
    stream = await client.messages.create(**request, stream=True)
    try:
        async with asyncio.timeout(total):
            await _events(stream, answer, on_items)
    except TimeoutError:
        raise
    except Exception as exc:
        if _broken(exc):
            raise StreamBroken(type(exc).__name__) from exc
        raise
    finally:
        await stream.close()
    flush = getattr(on_items, "flush", None)
    if callable(flush):  # the last items, shown while the basket is checked and priced
        flush()
    return answer


async def _events(stream: Any, answer: Answer, on_items: ItemsSeen) -> None:
    """Each event of ``stream`` into ``answer``; each finished item handed to ``on_items``, each
    finished operation of a revision to its ``changed``, if it has one."""
    shown = Shown(on_items)
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
                shown.feed(block.name, delta.partial_json)
        elif kind == "content_block_stop":
            answer.content[event.index].close()
        elif kind == "message_delta":
            answer.stop_reason = event.delta.stop_reason
            answer.count(event.usage)


class Shown:
    """What one answer has shown so far: the finished items of a ``submit_basket`` input (at
    most ``MAX_ITEMS``), or the finished operations of a ``revise_basket`` one."""

    def __init__(self, on_items: ItemsSeen) -> None:
        self.on_items = on_items
        changed = getattr(on_items, "changed", None)
        self.changed: ChangesSeen | None = changed if callable(changed) else None
        self.scanner = Scanner()
        self.items: list[Item] = []
        self.changes: list[Change] = []
        self.seen = 0

    def feed(self, tool: str, piece: str) -> None:
        if tool == ITEMS_TOOL and self.seen <= MAX_ITEMS:
            for field, text in self.scanner.feed(piece):
                self.seen += 1
                item = draft_item(text, self.seen - 1) if field == "items" else None
                if item is not None and self.seen <= MAX_ITEMS:
                    self.items.append(item)
                    self.on_items(list(self.items))
        elif tool == REVISE_TOOL_NAME and self.changed is not None:
            for field, text in self.scanner.feed(piece):
                change = draft_change(field, text)
                if change is not None and len(self.changes) < MAX_ITEMS:
                    self.changes.append(change)
                    self.changed(list(self.changes))
