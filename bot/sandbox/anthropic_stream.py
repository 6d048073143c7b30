"""A Messages API answer as a stream of server-sent events, as the fake Messages API
(``bot.sandbox.anthropic_api``) plays ``"stream": true``.

What the API sends (platform.claude.com, "Streaming Messages"; docs.anthropic.com
``/api/messages-streaming``): ``message_start`` (the message with empty ``content``), then each
content block as ``content_block_start``, one or more ``content_block_delta`` and
``content_block_stop``, each with the block's ``index``; then ``message_delta`` (the stop reason,
and ``usage`` whose counts are cumulative) and ``message_stop``. Any number of ``ping`` events may
appear; the documented examples show one after the first ``content_block_start``, and so does
this fake. A text block grows by ``text_delta``; a ``tool_use`` block starts with ``"input": {}``
and grows by ``input_json_delta``, whose ``partial_json`` pieces join into the input's JSON. An
``error`` event may come mid-stream: "during periods of high usage, you may receive an
``overloaded_error``, which would normally correspond to an HTTP 529 in a non-streaming context";
the anthropic SDK 2.17 raises it from the iteration as ``APIStatusError`` (status 200, the event's
body), with no retry.

How a tool's input is cut. By default the API "only support[s] emitting one complete key and
value property from input at a time" (the streaming page, "Input JSON delta"): a forced
``submit_basket`` call arrives as an empty first piece, the whole ``{"items": [...]`` when it is
written, then ``}`` (a recorded haiku-4-5 stream, @ai-sdk/anthropic 3.0.21
``src/__fixtures__/anthropic-json-tool.1.chunks.txt``, has this shape). Fine-grained tool streaming
sends the value as it is written, without buffering; it "is generally available on all models and
all platforms, with no beta header required", turned on by ``"eager_input_streaming": true`` on
the tool (platform.claude.com, "Fine-grained tool streaming"). The SDK's ``ToolParam`` says how
the two switches combine: true streams, false never does "even if the
fine-grained-tool-streaming beta is active", absent follows the ``anthropic-beta`` header
(``fine-grained-tool-streaming-2025-05-14``, still accepted here, never required). Fine-grained
pieces here are 23 to 51 characters in turn, cut anywhere but inside an escape: they need not end
on an item's boundary.

The body goes out as HTTP/1.1 chunks, each event flushed as it is written (the SDK's httpx2 reads
them as they come), so a stream cut short is seen as one (no last chunk): the SDK raises
``APIConnectionError``, as it does when the real connection drops.
"""

from __future__ import annotations

import json
import time
from dataclasses import dataclass
from typing import Any

from .anthropic_cache import tokens_of
from .loopback import QuietHandler

FINE_GRAINED_BETA = "fine-grained-tool-streaming-2025-05-14"
PIECE_SIZES = (37, 23, 51, 29)  # characters in each fine-grained or text piece, in turn
HEADERS = {"content-type": "text/event-stream; charset=utf-8", "cache-control": "no-cache"}
OVERLOADED = {"type": "error", "error": {"type": "overloaded_error", "message": "Overloaded"}}


@dataclass(frozen=True)
class Sent:
    """One event the fake wrote: its name, its data, and when (``time.monotonic()``)."""

    event: str
    data: dict[str, Any]
    at: float


@dataclass(frozen=True)
class Break:
    """A stream cut short after ``after`` deltas: by an ``error`` event (``overloaded_error``),
    or by the connection dropping (``"drop"``)."""

    after: int
    how: str = "error"


def eager(body: dict[str, Any], headers: dict[str, str], tool: str) -> bool:
    """Whether ``tool``'s input streams fine-grained: its ``eager_input_streaming``, or when
    that is absent (or null), the fine-grained beta header."""
    named = [t for t in body.get("tools") or [] if isinstance(t, dict) and t.get("name") == tool]
    setting = named[0].get("eager_input_streaming") if named else None
    if setting is not None:
        return setting is True
    betas = headers.get("anthropic-beta", "").split(",")
    return FINE_GRAINED_BETA in (b.strip() for b in betas)


def cut(text: str) -> list[str]:
    """``text`` in pieces of :data:`PIECE_SIZES` characters in turn (one empty piece for an empty
    text); a piece never ends just after a backslash, so no JSON escape is split."""
    pieces: list[str] = []
    at = 0
    while at < len(text) or not pieces:
        end = min(len(text), at + PIECE_SIZES[len(pieces) % len(PIECE_SIZES)])
        while end < len(text) and text[end - 1] == "\\":
            end += 1
        pieces.append(text[at:end])
        at = end
    return pieces


def tool_pieces(value: Any, fine: bool) -> list[str]:
    """The ``partial_json`` pieces of a tool input: fine-grained, or one key and value at a time
    after an empty piece. They join into ``json.dumps(value)``."""
    text = json.dumps(value, ensure_ascii=False)
    if fine:
        return cut(text)
    if not isinstance(value, dict) or not value:
        return ["", text]
    pieces = [""]
    for n, (key, item) in enumerate(value.items()):
        pieces.append(("{" if n == 0 else ", ") + json.dumps({key: item}, ensure_ascii=False)[1:-1])
    return [*pieces, "}"]


def events(message: dict[str, Any], fine: bool) -> list[tuple[str, dict[str, Any], int]]:
    """``message`` (a non-streamed answer) as the events that stream it, each with the output
    tokens it carries (a delta's, by :func:`tokens_of`; 0 for the others)."""
    usage = message["usage"]
    opening = {**message, "content": [], "stop_reason": None, "stop_sequence": None}
    found: list[tuple[str, dict[str, Any], int]] = [
        ("message_start", {"message": {**opening, "usage": {**usage, "output_tokens": 1}}}, 0)
    ]
    for index, block in enumerate(message["content"]):
        if block["type"] == "tool_use":
            start = {**block, "input": {}}
            pieces = tool_pieces(block["input"], fine)
            deltas = [{"type": "input_json_delta", "partial_json": p} for p in pieces]
        else:
            start, pieces = {"type": "text", "text": ""}, cut(block["text"])
            deltas = [{"type": "text_delta", "text": p} for p in pieces]
        found.append(("content_block_start", {"index": index, "content_block": start}, 0))
        if index == 0:
            found.append(("ping", {}, 0))
        for piece, delta in zip(pieces, deltas, strict=True):
            weight = tokens_of(piece) if piece else 0
            found.append(("content_block_delta", {"index": index, "delta": delta}, weight))
        found.append(("content_block_stop", {"index": index}, 0))
    stop = {"stop_reason": message["stop_reason"], "stop_sequence": message["stop_sequence"]}
    found.append(("message_delta", {"delta": stop, "usage": usage}, 0))
    found.append(("message_stop", {}, 0))
    return [(name, {"type": name, **data}, weight) for name, data, weight in found]


def schedule(
    planned: list[tuple[str, dict[str, Any], int]], first: float, writing: float
) -> list[tuple[str, dict[str, Any], float]]:
    """Each event with when it is due (seconds after the request): the first at ``first``, each
    delta once its share of ``writing`` seconds (by its tokens) has passed, the rest at once."""
    total = sum(weight for _, _, weight in planned) or 1
    running, timed = 0, []
    for name, data, weight in planned:
        running += weight
        timed.append((name, data, first + writing * running / total))
    return timed


def encode(name: str, data: dict[str, Any]) -> bytes:
    return f"event: {name}\ndata: {json.dumps(data, ensure_ascii=False)}\n\n".encode()


def write(
    handler: QuietHandler,
    timed: list[tuple[str, dict[str, Any], float]],
    started: float,
    broken: Break | None,
    sent: list[Sent],
) -> None:
    """Write the ``timed`` events, each when due after ``started`` (``time.monotonic()``), the
    headers with the first; append each written one to ``sent``. With ``broken``, stop before
    the delta (or block stop) after ``broken.after`` deltas: write the ``error`` event and end,
    or drop the connection mid-body."""
    deltas, opened = 0, False
    for name, data, due in timed:
        time.sleep(max(0.0, started + due - time.monotonic()))
        if not opened:
            opened = True
            if not handler.start_chunks(200, HEADERS):
                return
        cutting = name in ("content_block_delta", "content_block_stop")
        if broken is not None and cutting and deltas == broken.after:
            if broken.how == "error" and handler.send_chunk(encode("error", OVERLOADED)):
                sent.append(Sent("error", OVERLOADED, time.monotonic()))
                handler.send_chunk(b"")
            return  # "drop": no last chunk, the connection closes
        if not handler.send_chunk(encode(name, data)):
            return  # the client went away
        sent.append(Sent(name, data, time.monotonic()))
        deltas += name == "content_block_delta"
    handler.send_chunk(b"")
