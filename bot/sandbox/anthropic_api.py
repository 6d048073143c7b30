"""A local fake of the Anthropic Messages API, for ``ANTHROPIC_BASE_URL``.

It refuses what the API refuses: a request without the configured key, in ``x-api-key`` or as
``Authorization: Bearer`` (the anthropic SDK 2.15 sends the latter), is 401
``authentication_error``; one without an ``anthropic-version`` header, or not shaped like a
Messages request (a model, a positive ``max_tokens``, a non-empty ``messages`` list of
user/assistant turns starting with the user, no unknown fields), is 400
``invalid_request_error``; so is a strict tool whose schema uses what strict schemas cannot
(numeric, length and count bounds, an object without ``"additionalProperties": false``), and a
``tool_choice`` naming a tool the request does not define. A valid one is answered from a script
of replies (text and stop reason, or an HTTP error status such as 529, optionally after a delay
so a client times out); with the script empty, by ``responder`` (by default
:data:`DEFAULT_BASKET`, whatever was asked). When the request forces a tool (``tool_choice``
``{"type": "tool"}``), as the weekly shop's shopper does, the reply is that tool's call, as the
API answers it: a ``tool_use`` block whose input is the reply's text read one item a line
(:func:`tool_input`), and ``stop_reason`` ``"tool_use"``. Every request is recorded, so tests can
count model calls and read prompts.

With ``"stream": true`` the same answer, decided the same way (a refusal or a scripted error
status is the same JSON error before any event), is written as server-sent events
(``bot.sandbox.anthropic_stream``): paced by the same model of the API's speed, recorded event by
event in :attr:`FakeAnthropic.streams`, and cut short on demand (``Reply.break_after``).
"""

from __future__ import annotations

import json
import threading
import time
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from typing import Any

from workflow.shop.shopper import EARLIER_OPENING, REVISION_OPENING, WEEK_OPENING

from .anthropic_cache import PromptCache, cache_problem, tokens_of
from .anthropic_stream import Break, Sent, eager, events, schedule, write
from .anthropic_tools import called_tool, revision_input, tool_input, tools_problem
from .loopback import LoopbackServer, QuietHandler, refused

API_KEY = "test-key-not-real"
# The Messages API's request fields (docs.anthropic.com, "Create a Message"); others are refused.
REQUEST_FIELDS = {
    "model", "max_tokens", "messages", "system", "metadata", "stop_sequences", "stream",
    "temperature", "top_k", "top_p", "tools", "tool_choice", "thinking", "service_tier",
    "container", "mcp_servers", "output_format", "context_management",
}  # fmt: skip

DEFAULT_BASKET = "\n".join(
    [
        "- 500 g chicken breast",
        "- 2 bell peppers",
        "* 1 head broccoli",
        "• 3 carrots",
        "",
        "1 bulb garlic",
        "250 g red lentils",
        "400 g tinned chopped tomatoes",
        "2 pizza bases",
        "250 g mozzarella",
        "150 g mushrooms",
    ]
)


@dataclass
class Reply:
    text: str = DEFAULT_BASKET
    stop_reason: str | None = None  # default: "tool_use" when a tool is forced, else "end_turn"
    status: int = 200
    output_tokens: int = 321
    delay: float = 0.0  # seconds before answering (longer than the client's timeout: a timeout)
    tool_input: Any = None  # the forced tool's input as given, instead of read from ``text``
    preamble: str = ""  # a text block before the tool call ("Here is your basket:")
    tool: str | None = None  # with tool_choice "any": the tool called (default: submit_basket)
    # A streamed answer cut short after this many deltas (None: whole), by an ``error`` event
    # (overloaded_error, break_with "error") or by the connection dropping ("drop").
    break_after: int | None = None
    break_with: str = "error"


@dataclass
class Answer:
    """What the fake answers a request: the status and JSON (a message or an error), the seconds
    before it (a stream's first event), and for a stream the seconds its deltas are spread over,
    whether a tool's input streams fine-grained, and how it breaks."""

    status: int
    payload: Any
    delay: float = 0.0
    writing: float = 0.0
    fine: bool = False
    broken: Break | None = None


def _text(content: Any) -> str:
    if isinstance(content, list):
        texts = [b.get("text", "") for b in content if isinstance(b, dict)]
        return "\n\n".join(t for t in texts if isinstance(t, str))
    return str(content)


def prompt_of(request: dict[str, Any]) -> str:
    """The last user turn's text: a string, or its text blocks joined as paragraphs."""
    return _text(request["messages"][-1].get("content", ""))


def week_of(request: dict[str, Any]) -> str:
    """The week's request as the shopper sent it (in the system prompt, after its opening)."""
    return _text(request.get("system", "")).partition(f"{WEEK_OPENING}\n")[2]


def default_reply(request: dict[str, Any]) -> Reply:
    return Reply()


def shorter_revisions(request: dict[str, Any]) -> Reply:
    """A scenario callers opt into: the default basket, and the first 8 of its lines when the
    weekly shop's shopper asks for a revision (its prompt opens with ``REVISION_OPENING``, after
    what the workspace said of its household, if anything).

    A revision after earlier changes notes on its first item how many changes it follows, so
    that each revision changes the basket (the workflow asks about an unchanged one again,
    as the same round: ``workflow.shop.executors.UNCHANGED``)."""
    prompt = prompt_of(request)
    at = prompt.find(REVISION_OPENING)
    if at < 0:
        return Reply()
    asked = prompt[at:]
    text = "\n".join(DEFAULT_BASKET.splitlines()[:8])
    earlier = asked.partition(EARLIER_OPENING)[2].partition("\n\n")[0]
    count = sum(1 for line in earlier.splitlines() if line.startswith("- "))
    given = tool_input(text)
    if count:
        given["items"][0]["note"] = f"after {count + 1} changes"
    if request.get("tool_choice", {}).get("type") == "any":  # asked for the difference
        return Reply(text=text, tool="revise_basket", tool_input=revision_input(asked, given))
    return Reply(text=text, tool_input=given if count else None)


def request_problem(body: Any) -> str | None:
    """Why ``body`` is not a Messages API request (None when it is one)."""
    if not isinstance(body, dict):
        return "the request body must be a JSON object"
    extra = sorted(set(body) - REQUEST_FIELDS)
    if extra:
        return f"{extra[0]}: Extra inputs are not permitted"
    if not isinstance(body.get("model"), str) or not body["model"]:
        return "model: Field required"
    tokens = body.get("max_tokens")
    if not isinstance(tokens, int) or isinstance(tokens, bool) or tokens < 1:
        return "max_tokens: Field required (a positive integer)"
    messages = body.get("messages")
    if not isinstance(messages, list) or not messages:
        return "messages: at least one message is required"
    for i, message in enumerate(messages):
        if not isinstance(message, dict) or message.get("role") not in ("user", "assistant"):
            return f"messages.{i}.role: Input should be 'user' or 'assistant'"
        if not isinstance(message.get("content"), str | list):
            return f"messages.{i}.content: Field required"
    if messages[0]["role"] != "user":
        return "messages: the first message must use the user role"
    if not isinstance(body.get("stream", False), bool):
        return "stream: Input should be a valid boolean"
    return None


def _error(status: int, kind: str, message: str) -> Answer:
    return Answer(status, {"type": "error", "error": {"type": kind, "message": message}})


@dataclass
class FakeAnthropic(LoopbackServer):
    api_key: str = API_KEY
    responder: Callable[[dict[str, Any]], Reply] = default_reply
    replies: deque[Reply] = field(default_factory=deque)
    requests: list[dict[str, Any]] = field(default_factory=list)
    headers: list[dict[str, str]] = field(default_factory=list)
    url: str = ""
    # A model of the API's speed, for make bench: with ``speed`` (output tokens a second), each
    # reply's output tokens are estimated from what it writes (``tokens_of``) and it answers
    # ``base_latency`` + tokens ÷ speed seconds later. None: at once, with the reply's tokens.
    speed: float | None = None
    base_latency: float = 0.5
    cache: PromptCache = field(default_factory=PromptCache)
    usages: list[dict[str, int]] = field(default_factory=list)  # each answer's, in order
    streams: list[list[Sent]] = field(default_factory=list)  # each stream's events as written

    def __post_init__(self) -> None:
        self._lock = threading.Lock()
        fake = self

        class Handler(QuietHandler):
            def do_POST(self) -> None:
                if refused(fake, self):
                    return
                length = int(self.headers.get("content-length", 0))
                try:
                    body = json.loads(self.rfile.read(length) or b"{}")
                except ValueError:
                    body = None
                started = time.monotonic()
                answer = fake._answer(self.path, body, dict(self.headers))
                if answer.status == 200 and body.get("stream") is True:
                    fake._stream(self, answer, started)
                    return
                time.sleep(answer.delay)
                headers = {"content-type": "application/json"}
                headers |= {"retry-after-ms": "5"} if answer.status >= 400 else {}
                self.answer(answer.status, json.dumps(answer.payload).encode(), headers)

        self._serve(Handler)
        self.url = self.root

    def script(self, *replies: Reply) -> None:
        with self._lock:
            self.replies.extend(replies)

    @property
    def message_calls(self) -> int:
        return len(self.requests)

    def _stream(self, handler: QuietHandler, answer: Answer, started: float) -> None:
        sent: list[Sent] = []
        with self._lock:
            self.streams.append(sent)
        timed = schedule(events(answer.payload, answer.fine), answer.delay, answer.writing)
        write(handler, timed, started, answer.broken, sent)

    def _answer(self, path: str, body: dict[str, Any], headers: dict[str, str]) -> Answer:
        lower = {k.lower(): v for k, v in headers.items()}
        with self._lock:
            self.requests.append(body if isinstance(body, dict) else {})
            self.headers.append(lower)
        if path.rstrip("/") != "/v1/messages":
            return _error(404, "not_found_error", path)
        bearer = lower.get("authorization", "").removeprefix("Bearer ")
        if self.api_key not in (lower.get("x-api-key"), bearer):
            return _error(401, "authentication_error", "invalid x-api-key")
        if not lower.get("anthropic-version"):
            return _error(400, "invalid_request_error", "anthropic-version: header is required")
        problem = request_problem(body) or tools_problem(body) or cache_problem(body)
        if problem is not None:
            return _error(400, "invalid_request_error", problem)
        with self._lock:
            reply = self.replies.popleft() if self.replies else None
        if reply is None:
            reply = self.responder(body)
        if reply.status != 200:
            kind = {529: "overloaded_error", 429: "rate_limit_error"}.get(reply.status, "api_error")
            return replace(_error(reply.status, kind, "fake"), delay=reply.delay)
        tool = called_tool(body, reply.tool)
        content: list[dict[str, Any]] = [{"type": "text", "text": reply.preamble or reply.text}]
        if tool is not None:
            call = {
                "type": "tool_use",
                "id": f"toolu_fake_{len(self.requests)}",
                "name": tool,
                "input": tool_input(reply.text) if reply.tool_input is None else reply.tool_input,
            }
            content = content[:1] + [call] if reply.preamble else [call]
        stop = reply.stop_reason or ("tool_use" if tool else "end_turn")
        output, delay, writing = reply.output_tokens, reply.delay, 0.0
        if self.speed is not None:  # the bench's model of the API's speed
            output = sum(tokens_of(b.get("input", b.get("text"))) for b in content)
            if not delay:  # a stream's first event after the base latency, its deltas after
                writing = output / self.speed
                delay = self.base_latency + (0.0 if body.get("stream") is True else writing)
        with self._lock:
            usage = {**self.cache.usage(body, time.time()), "output_tokens": output}
            self.usages.append(usage)
        broken = None if reply.break_after is None else Break(reply.break_after, reply.break_with)
        return Answer(
            200,
            {
                "id": f"msg_fake_{len(self.requests)}",
                "type": "message",
                "role": "assistant",
                "model": body["model"],
                "content": content,
                "stop_reason": stop,
                "stop_sequence": None,
                "usage": usage,
            },
            delay,
            writing,
            tool is not None and eager(body, lower, tool),
            broken,
        )
