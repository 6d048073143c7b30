"""Prompt caching and token counts as the fake Messages API (``bot.sandbox.anthropic_api``) plays
them.

What the API refuses (400 ``invalid_request_error``): more than 4 blocks with ``cache_control``
("A maximum of 4 blocks with cache_control may be provided"), a ``cache_control`` whose ``type``
is not ``ephemeral`` or whose ``ttl`` is not ``5m`` or ``1h``, and one on an empty text block
("cache_control cannot be set for empty text blocks").

What it reports (``usage``): the prompt is rendered in the API's order, tools, then system, then
messages; each block with ``cache_control`` ends a cacheable prefix. A prefix shorter than the
model's minimum (:func:`minimum_of`) is not cached, silently. Otherwise a prefix seen in the last
5 minutes (1 hour with ``ttl: 1h``) is read (``cache_read_input_tokens``), and the longest
breakpoint's prefix beyond it is written (``cache_creation_input_tokens``); ``input_tokens`` is
the rest. A different ``tool_choice`` misses the prefixes that end in the messages (the tools'
and the system prompt's still hit: platform.claude.com, "Tool use with prompt caching": a change
at one level of tools → system → messages invalidates that level and those after it). Token
counts here are a model, not Claude's tokenizer: :func:`tokens_of` counts four characters of the
block's JSON as a token.
"""

from __future__ import annotations

import hashlib
import json
import math
from dataclasses import dataclass, field
from typing import Any

MAX_BREAKPOINTS = 4
TTL = {"5m": 300.0, "1h": 3600.0}
# The smallest prefix each model caches (platform.claude.com, "Prompt caching": 4,096 for Claude
# Haiku 4.5, Opus 4.5 and 4.6; 2,048 for Haiku 3 and 3.5; 1,024 for Sonnet 4.x, Opus 4 and 4.1).
# The default model here, claude-haiku-5-5, was in none of the sources this project could read:
# it is taken as 1,024, an assumption the README states beside the bench's figures.
MINIMUMS = (("haiku-4-5", 4096), ("opus-4-5", 4096), ("opus-4-6", 4096), ("haiku-3", 2048))
DEFAULT_MINIMUM = 1024


def minimum_of(model: str) -> int:
    return next((least for name, least in MINIMUMS if name in model), DEFAULT_MINIMUM)


def tokens_of(block: Any) -> int:
    """The model of a block's token count: its JSON's characters (its cache mark aside), four
    to a token."""
    if isinstance(block, dict) and "cache_control" in block:
        block = {k: v for k, v in block.items() if k != "cache_control"}
    return math.ceil(len(json.dumps(block, sort_keys=True, ensure_ascii=False)) / 4)


def prefix_tokens(body: dict[str, Any]) -> int:
    """The tokens up to the request's last cache mark (0 without one)."""
    running, found = 0, 0
    for block in _blocks(body):
        running += tokens_of(block)
        if "cache_control" in block:
            found = running
    return found


def _blocks(body: dict[str, Any]) -> list[dict[str, Any]]:
    """The prompt's blocks in the API's render order: tools, system, then each message's."""
    return _head(body) + _messages(body)


def _head(body: dict[str, Any]) -> list[dict[str, Any]]:
    found: list[dict[str, Any]] = [t for t in body.get("tools") or [] if isinstance(t, dict)]
    system = body.get("system")
    if isinstance(system, str):
        found.append({"type": "text", "text": system})
    elif isinstance(system, list):
        found += [b for b in system if isinstance(b, dict)]
    return found


def _messages(body: dict[str, Any]) -> list[dict[str, Any]]:
    found: list[dict[str, Any]] = []
    for message in body.get("messages") or []:
        content = message.get("content") if isinstance(message, dict) else None
        if isinstance(content, str):
            found.append({"type": "text", "text": content})
        elif isinstance(content, list):
            found += [b for b in content if isinstance(b, dict)]
    return found


def cache_problem(body: dict[str, Any]) -> str | None:
    """Why the request's ``cache_control`` blocks would be refused (None when fine)."""
    marked = [b for b in _blocks(body) if "cache_control" in b]
    if len(marked) > MAX_BREAKPOINTS:
        return (
            f"A maximum of {MAX_BREAKPOINTS} blocks with cache_control may be provided. "
            f"Found {len(marked)}."
        )
    for block in marked:
        control = block["cache_control"]
        if not isinstance(control, dict) or control.get("type") != "ephemeral":
            return "cache_control.type: Input should be 'ephemeral'"
        if "ttl" in control and control["ttl"] not in TTL:
            return "cache_control.ttl: Input should be '5m' or '1h'"
        if block.get("type") == "text" and not block.get("text"):
            return "cache_control cannot be set for empty text blocks"
    return None


@dataclass
class PromptCache:
    """What the fake has cached: a prefix's hash → when it expires, and its tokens."""

    entries: dict[str, tuple[float, int]] = field(default_factory=dict)

    def usage(self, body: dict[str, Any], now: float) -> dict[str, int]:
        """``input_tokens``, ``cache_creation_input_tokens`` and ``cache_read_input_tokens`` of
        a request, caching what it writes."""
        head, tail = _head(body), _messages(body)
        total = sum(tokens_of(b) for b in head + tail)
        least = minimum_of(str(body.get("model", "")))
        digest, running, prefixes = hashlib.sha256(str(body.get("model")).encode()), 0, []
        for at, block in enumerate(head + tail):
            if at == len(head):  # a change of tool_choice invalidates the messages' cache only
                digest.update(json.dumps(body.get("tool_choice"), sort_keys=True).encode())
            plain = {k: v for k, v in block.items() if k != "cache_control"}
            digest.update(json.dumps(plain, sort_keys=True).encode())
            running += tokens_of(block)
            if "cache_control" in block:
                ttl = TTL[block["cache_control"].get("ttl", "5m")]
                prefixes.append((digest.hexdigest(), running, ttl))
        read = 0
        for key, size, _ in reversed(prefixes):
            found = self.entries.get(key)
            if found is not None and found[0] > now:
                read = size
                break
        written = 0
        for key, size, ttl in prefixes:
            if size < least:
                continue  # below the model's minimum: not cached, and nothing said
            if size > read:
                written = size - read
            self.entries[key] = (now + ttl, size)  # a read refreshes its lifetime too
        return {
            "input_tokens": total - read - written,
            "cache_creation_input_tokens": written,
            "cache_read_input_tokens": read,
        }
