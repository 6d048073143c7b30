"""A local fake of the Slack Web API (and of ``response_url``), for ``WebClient(base_url=...)``.

``FakeSlack`` serves ``/api/<method>`` on 127.0.0.1: form or JSON bodies, the token from
``Authorization: Bearer`` (or a ``token`` argument), checked against the configured one. It keeps
channel messages, threads, ephemerals and modals, checks every message and view against the Block
Kit limits below (a breach answers ``invalid_blocks`` and is recorded in ``.violations``), and can
be told to fail the next call of a method (HTTP 429 with ``Retry-After``, or an ``ok: false`` body).
Any other path (``hooks_url`` + ...) acts as a ``response_url``; see ``slack_events.response_url``.
"""

from __future__ import annotations

import contextlib
import copy
import itertools
import json
import re
import threading
from collections import defaultdict, deque
from collections.abc import Iterator
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any
from urllib.parse import parse_qsl, urlsplit

# Block Kit limits, from Slack's reference pages on docs.slack.dev (header-block, section-block,
# context-block, button-element, plain-text-input-element, confirmation-dialog-object,
# views/modal-views) and api.slack.com/reference/block-kit/blocks (50/100 blocks, 25 actions
# elements). "message.text" (40,000) is not on a Slack page we could read: third-party docs cite
# Slack's changelog "2018-04-truncating-really-long-messages", where Slack truncates rather than
# rejects; this fake rejects with msg_too_long so a test notices. "message.blocks_text" (all text
# in a message's blocks together) is undocumented too: Slack answers msg_blocks_too_long, a Slack
# engineer cited "12,000 text characters with a buffer for block containers" (bolt-js #2509) and
# a report saw 11,341 characters of section/header text refused (bolt-js #2867); the fake refuses
# over 12,000, so keep real messages well under it.
LIMITS: dict[str, int] = {
    "message.text": 40_000,
    "message.blocks_text": 12_000,
    "message.blocks": 50,
    "modal.blocks": 100,  # also Home tabs
    "block_id": 255,
    "action_id": 255,
    "header.text": 150,
    "section.text": 3000,
    "section.fields": 10,
    "section.field_text": 2000,
    "context.elements": 10,
    "actions.elements": 25,
    "button.text": 75,
    "button.value": 2000,
    "button.url": 3000,
    "confirm.title": 100,
    "confirm.text": 300,
    "confirm.confirm": 30,
    "confirm.deny": 30,
    "plain_text_input.max_length": 3000,
    "modal.title": 24,
    "modal.submit": 24,
    "modal.close": 24,
    "view.private_metadata": 3000,
    "view.callback_id": 255,
}

MESSAGE_METHODS = ("chat.postMessage", "chat.update", "chat.postEphemeral")
_JSON_ARGS = ("blocks", "attachments", "view", "metadata")
_MENTION = re.compile(
    r"<(?:!channel|!here|!everyone|@[UW][A-Z0-9]+|!subteam\^[A-Z0-9]+)(?:\|[^>]*)?>"
)


@dataclass(frozen=True)
class Call:
    method: str
    args: dict[str, Any]
    token: str | None
    error: str | None = None  # the error answered, None when the call succeeded


@dataclass(frozen=True)
class Violation:
    method: str
    errors: list[str]


@dataclass(frozen=True)
class HookPost:
    """A POST to a response_url served by the fake."""

    path: str
    body: dict[str, Any]
    status: int


@dataclass
class _Failure:
    status: int
    retry_after: int
    error: str | None


class _Reject(Exception):
    def __init__(self, error: str, errors: list[str] | None = None) -> None:
        super().__init__(error)
        self.error, self.errors = error, errors or []


# ---------------------------------------------------------------- Block Kit validation

# How each key of a block, element, confirm or view is checked against LIMITS: "len" a string,
# "max" a number, "items" an array's length, "text"/"plain" a text object (plain: plain_text only),
# "texts" each text object of an array. Limits named in _REQUIRED must be present.
_CHECKS: dict[str, list[tuple[str, str, str]]] = {
    "*": [("block_id", "len", "block_id"), ("action_id", "len", "action_id")],
    "header": [("text", "plain", "header.text")],
    "section": [
        ("text", "text", "section.text"),
        ("fields", "items", "section.fields"),
        ("fields", "texts", "section.field_text"),
    ],
    "context": [("elements", "items", "context.elements")],
    "actions": [("elements", "items", "actions.elements")],
    "button": [
        ("text", "plain", "button.text"),
        ("value", "len", "button.value"),
        ("url", "len", "button.url"),
    ],
    "plain_text_input": [("max_length", "max", "plain_text_input.max_length")],
    "confirm": [
        ("title", "plain", "confirm.title"),
        ("text", "text", "confirm.text"),
        ("confirm", "plain", "confirm.confirm"),
        ("deny", "plain", "confirm.deny"),
    ],
    "modal": [
        ("title", "plain", "modal.title"),
        ("submit", "plain", "modal.submit"),
        ("close", "plain", "modal.close"),
    ],
    "view": [
        ("private_metadata", "len", "view.private_metadata"),
        ("callback_id", "len", "view.callback_id"),
        ("blocks", "items", "modal.blocks"),
    ],
}
_REQUIRED = {"header.text", "button.text", "modal.title", "confirm.title", "confirm.text"}
_REQUIRED |= {"confirm.confirm", "confirm.deny"}


def _check(value: Any, how: str, limit: str, ptr: str, errs: list[str]) -> None:
    n = LIMITS[limit]
    if how == "texts":
        for i, item in enumerate(value if isinstance(value, list) else []):
            _check(item, "text", limit, f"{ptr}/{i}", errs)
    elif how in ("text", "plain"):
        kinds = ("plain_text",) if how == "plain" else ("plain_text", "mrkdwn")
        if not isinstance(value, dict) or not isinstance(value.get("text"), str):
            errs.append(f"must be a text object [json-pointer:{ptr}]")
        elif value.get("type") not in kinds:
            errs.append(f"must be {' or '.join(kinds)} [json-pointer:{ptr}/type]")
        else:
            _check(value["text"], "len", limit, f"{ptr}/text", errs)
    elif how == "items" and not isinstance(value, list):
        errs.append(f"must be an array [json-pointer:{ptr}]")
    elif how == "items" and len(value) > n:
        errs.append(f"must have at most {n} items [json-pointer:{ptr}]")
    elif how == "len" and isinstance(value, str) and len(value) > n:
        errs.append(f"must be less than {n + 1} characters [json-pointer:{ptr}]")
    elif how == "max" and isinstance(value, int) and value > n:
        errs.append(f"must be at most {n} [json-pointer:{ptr}]")


def _walk(obj: Any, kind: str, ptr: str, errs: list[str]) -> None:
    if not isinstance(obj, dict):
        errs.append(f"must be an object [json-pointer:{ptr}]")
        return
    for key, how, limit in _CHECKS["*"] + _CHECKS.get(kind, []):
        if obj.get(key) is not None:
            _check(obj[key], how, limit, f"{ptr}/{key}", errs)
        elif limit in _REQUIRED:
            errs.append(f"is required [json-pointer:{ptr}/{key}]")
    if kind == "actions":
        _walk_all(obj.get("elements"), f"{ptr}/elements", errs)
    for key in ("accessory", "element"):
        if kind in ("section", "input") and isinstance(obj.get(key), dict):
            _walk(obj[key], str(obj[key].get("type")), f"{ptr}/{key}", errs)
    if "confirm" in obj and kind not in ("confirm", "modal", "view"):
        _walk(obj["confirm"], "confirm", f"{ptr}/confirm", errs)


def _walk_all(items: Any, ptr: str, errs: list[str]) -> None:
    for i, item in enumerate(items if isinstance(items, list) else []):
        _walk(item, str(item.get("type")) if isinstance(item, dict) else "", f"{ptr}/{i}", errs)


def block_errors(blocks: Any, *, modal: bool = False, ptr: str = "/blocks") -> list[str]:
    """Every Block Kit limit the ``blocks`` array breaks (empty when it is fine)."""
    errs: list[str] = []
    _check(blocks, "items", "modal.blocks" if modal else "message.blocks", ptr, errs)
    _walk_all(blocks, ptr, errs)
    return errs


def view_errors(view: Any) -> list[str]:
    """Every limit a modal (or Home tab) view breaks, its blocks included."""
    errs: list[str] = []
    _walk(view, "view", "/view", errs)
    if isinstance(view, dict):
        if view.get("type") == "modal":
            _walk(view, "modal", "/view", errs)
        _walk_all(view.get("blocks"), "/view/blocks", errs)
    return errs


def _texts(obj: Any) -> Iterator[str]:
    """Strings under a "text" key anywhere in ``obj`` (message text, text objects, fields)."""
    if isinstance(obj, dict):
        for key, value in obj.items():
            if key == "text" and isinstance(value, str):
                yield value
            else:
                yield from _texts(value)
    elif isinstance(obj, list):
        for item in obj:
            yield from _texts(item)


# ---------------------------------------------------------------- the fake


class FakeSlack:
    def __init__(
        self,
        token: str = "xoxb-test",
        *,
        team_id: str = "T0TEAM",
        user_id: str = "UBOT",
        bot_id: str = "BBOT",
    ) -> None:
        self.token, self.team_id, self.user_id, self.bot_id = token, team_id, user_id, bot_id
        self.calls: list[Call] = []
        self.violations: list[Violation] = []
        self.responses: list[HookPost] = []
        self.views: dict[str, dict[str, Any]] = {}
        self._lock = threading.RLock()
        self._channels: dict[str, list[dict[str, Any]]] = defaultdict(list)
        self._ephemerals: list[dict[str, Any]] = []
        self._used_triggers: set[str] = set()
        self._failures: dict[str, deque[_Failure]] = defaultdict(deque)
        self._seq = itertools.count(1)
        self._server = ThreadingHTTPServer(("127.0.0.1", 0), _handler(self))
        self._server.daemon_threads = True
        self.root = f"http://127.0.0.1:{self._server.server_address[1]}"
        self.url = f"{self.root}/api/"
        self.hooks_url = f"{self.root}/hooks"
        self._thread = threading.Thread(
            target=self._server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True
        )

    def start(self) -> FakeSlack:
        self._thread.start()
        return self

    def stop(self) -> None:
        self._server.shutdown()
        self._server.server_close()

    def __enter__(self) -> FakeSlack:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    # ------------------------------------------------------------ test helpers

    def fail_next(
        self,
        method: str,
        status: int = 429,
        retry_after: int = 1,
        times: int = 1,
        *,
        error: str | None = None,
    ) -> None:
        """Fail the next ``times`` calls of ``method``: HTTP ``status`` (429 carries
        ``Retry-After``), or with ``error`` given, HTTP 200 ``{"ok": false, "error": error}``."""
        with self._lock:
            self._failures[method].extend(
                _Failure(status, retry_after, error) for _ in range(times)
            )

    def calls_to(self, method: str) -> list[Call]:
        with self._lock:
            return [c for c in self.calls if c.method == method]

    def messages(self, channel: str) -> list[dict[str, Any]]:
        """The channel's top-level messages as they are now (after updates), oldest first."""
        with self._lock:
            return [
                copy.deepcopy(m)
                for m in self._channels[channel]
                if m.get("thread_ts") in (None, m["ts"]) or m.get("reply_broadcast")
            ]

    def thread(self, channel: str, ts: str) -> list[dict[str, Any]]:
        """The replies in thread ``ts`` (parent excluded), oldest first."""
        with self._lock:
            msgs = self._channels[channel]
            return [copy.deepcopy(m) for m in msgs if m.get("thread_ts") == ts and m["ts"] != ts]

    def ephemerals(self, user: str | None = None) -> list[dict[str, Any]]:
        with self._lock:
            return [copy.deepcopy(e) for e in self._ephemerals if user in (None, e["user"])]

    def mentions(self) -> list[str]:
        """Every unescaped ``<!channel>``/``<!here>``/``<!everyone>``/``<@U…>``/``<!subteam^…>``
        in anything successfully posted (messages, updates, ephemerals, response_url posts)."""
        with self._lock:
            sources = [c.args for c in self.calls if c.method in MESSAGE_METHODS and not c.error]
            sources += [r.body for r in self.responses if r.status == 200]
        return [m for src in sources for s in _texts(src) for m in _MENTION.findall(s)]

    # ------------------------------------------------------------ dispatch

    def _api(
        self, method: str, args: dict[str, Any], token: str | None
    ) -> tuple[int, dict[str, str], dict[str, Any]]:
        with self._lock:
            failure = self._failures[method].popleft() if self._failures[method] else None
            status, headers, error = 200, {}, None
            extra: dict[str, Any] = {}
            if token != self.token:
                error = "invalid_auth"
            elif failure and failure.error:
                error = failure.error
            elif failure:
                status = failure.status
                error = "ratelimited" if status == 429 else "fatal_error"
                if status == 429:
                    headers["Retry-After"] = str(failure.retry_after)
            else:
                try:
                    extra = getattr(self, "_m_" + method.replace(".", "_"), lambda a: {})(args)
                except _Reject as e:
                    error = e.error
                    if e.errors:
                        self.violations.append(Violation(method, e.errors))
                        messages = [f"[ERROR] {m}" for m in e.errors]
                        extra = {"errors": e.errors, "response_metadata": {"messages": messages}}
            self.calls.append(Call(method, args, token, error))
            return status, headers, _answer(error, extra)

    def _next_ts(self) -> str:
        micros = next(self._seq) * 100
        return f"{1_700_000_000 + micros // 1_000_000}.{micros % 1_000_000:06d}"

    def _check_message(self, args: dict[str, Any]) -> None:
        text = args.get("text")
        if isinstance(text, str) and len(text) > LIMITS["message.text"]:
            raise _Reject(
                "msg_too_long", ["must be less than 40001 characters [json-pointer:/text]"]
            )
        if args.get("blocks") is not None:
            errs = block_errors(args["blocks"])
            if errs:
                raise _Reject("invalid_blocks", errs)
            total = sum(len(t) for t in _texts(args["blocks"]))
            if total > LIMITS["message.blocks_text"]:
                limit = LIMITS["message.blocks_text"]
                error = f"{total} characters of text, over {limit} [json-pointer:/blocks]"
                raise _Reject("msg_blocks_too_long", [error])

    def _find(self, channel: str, ts: str) -> dict[str, Any]:
        for msg in self._channels.get(channel, []):
            if msg["ts"] == ts:
                return msg
        raise _Reject("message_not_found")

    # ------------------------------------------------------------ Web API methods

    def _m_auth_test(self, args: dict[str, Any]) -> dict[str, Any]:
        return {
            "url": "https://weekly-shop.slack.com/",
            "team": "Weekly Shop",
            "user": "weekly-shop",
            "team_id": self.team_id,
            "user_id": self.user_id,
            "bot_id": self.bot_id,
            "is_enterprise_install": False,
        }

    def _post(self, channel: str, args: dict[str, Any]) -> dict[str, Any]:
        if not (args.get("text") or args.get("blocks") or args.get("attachments")):
            raise _Reject("no_text")
        msg: dict[str, Any] = {"type": "message", "user": self.user_id, "bot_id": self.bot_id}
        msg.update(ts=self._next_ts(), text=args.get("text") or "", blocks=args.get("blocks") or [])
        if args.get("thread_ts"):
            broadcast = args.get("reply_broadcast") in (True, 1, "true", "1")
            msg.update(thread_ts=str(args["thread_ts"]), reply_broadcast=broadcast)
        self._channels[channel].append(msg)
        return msg

    def _m_chat_postMessage(self, args: dict[str, Any]) -> dict[str, Any]:
        if not args.get("channel"):
            raise _Reject("channel_not_found")
        self._check_message(args)
        msg = self._post(args["channel"], args)
        return {"channel": args["channel"], "ts": msg["ts"], "message": copy.deepcopy(msg)}

    def _m_chat_update(self, args: dict[str, Any]) -> dict[str, Any]:
        msg = self._find(str(args.get("channel")), str(args.get("ts")))
        self._check_message(args)
        for key in ("text", "blocks"):
            if key in args:
                msg[key] = args[key] if args[key] is not None else ("" if key == "text" else [])
        msg["edited"] = {"user": self.user_id, "ts": self._next_ts()}
        return {"channel": args["channel"], "ts": msg["ts"], "message": copy.deepcopy(msg)}

    def _m_chat_delete(self, args: dict[str, Any]) -> dict[str, Any]:
        channel = str(args.get("channel"))
        self._channels[channel].remove(self._find(channel, str(args.get("ts"))))
        return {"channel": args["channel"], "ts": args["ts"]}

    def _m_chat_postEphemeral(self, args: dict[str, Any]) -> dict[str, Any]:
        if not args.get("channel") or not args.get("user"):
            raise _Reject("user_not_in_channel" if args.get("channel") else "channel_not_found")
        self._check_message(args)
        eph: dict[str, Any] = {"channel": args["channel"], "user": args["user"]}
        eph["message_ts"] = self._next_ts()
        eph.update(text=args.get("text") or "", blocks=args.get("blocks") or [])
        self._ephemerals.append(eph)
        return {"message_ts": eph["message_ts"]}

    def _store_view(self, view: Any, view_id: str) -> dict[str, Any]:
        errs = view_errors(view)
        if errs:
            raise _Reject("invalid_blocks", errs)
        stored = {**view, "id": view_id, "team_id": self.team_id, "bot_id": self.bot_id}
        stored.setdefault("private_metadata", "")
        stored.setdefault("callback_id", "")
        stored.update(state={"values": {}}, hash=f"{next(self._seq)}.fakehash")
        self.views[view_id] = stored
        return {"view": copy.deepcopy(stored)}

    def _m_views_open(self, args: dict[str, Any]) -> dict[str, Any]:
        trigger = args.get("trigger_id")
        if not trigger or "view" not in args:
            raise _Reject("invalid_arguments")
        if trigger in self._used_triggers:
            raise _Reject("expired_trigger_id")
        result = self._store_view(args["view"], f"V{next(self._seq):08d}")
        self._used_triggers.add(trigger)
        return result

    def _m_views_update(self, args: dict[str, Any]) -> dict[str, Any]:
        if args.get("view_id") not in self.views:
            raise _Reject("not_found")
        return self._store_view(args.get("view"), str(args["view_id"]))

    # ------------------------------------------------------------ response_url

    def _hook(self, path: str, body: dict[str, Any]) -> tuple[int, dict[str, str], dict[str, Any]]:
        """A response_url POST: the path ends {kind}/{team}/{channel}/{user}/{ts or -}/{nonce}."""
        seg = [s for s in path.split("/") if s][-6:]
        channel, user, ts = (seg[2], seg[3], seg[4]) if len(seg) == 6 else ("", "", "-")
        status, error = 200, None
        with self._lock:
            try:
                self._check_message(body)
                if body.get("delete_original") or body.get("replace_original"):
                    target = self._original(channel, ts)
                    if body.get("delete_original"):
                        msgs = self._channels[channel]
                        (msgs if target in msgs else self._ephemerals).remove(target)
                    else:
                        target.update(text=body.get("text") or "", blocks=body.get("blocks") or [])
                elif body.get("response_type") == "in_channel":
                    self._post(channel, body)
                else:
                    eph: dict[str, Any] = {"channel": channel, "user": user}
                    eph["message_ts"] = self._next_ts()
                    eph.update(text=body.get("text") or "", blocks=body.get("blocks") or [])
                    self._ephemerals.append(eph)
            except _Reject as e:
                status, error = (404 if e.error == "message_not_found" else 400), e.error
                if e.errors:
                    self.violations.append(Violation("response_url", e.errors))
            self.responses.append(HookPost(path, body, status))
        return status, {}, _answer(error, {})

    def _original(self, channel: str, ts: str) -> dict[str, Any]:
        for eph in self._ephemerals:
            if eph["message_ts"] == ts and eph["channel"] == channel:
                return eph
        return self._find(channel, ts)


def _answer(error: str | None, extra: dict[str, Any]) -> dict[str, Any]:
    return {"ok": True, **extra} if error is None else {"ok": False, "error": error, **extra}


def _parse(query: str, raw: bytes, content_type: str) -> dict[str, Any]:
    args: dict[str, Any] = dict(parse_qsl(query, keep_blank_values=True))
    with contextlib.suppress(ValueError):
        if "json" in content_type and raw:
            args.update(json.loads(raw))
        elif "x-www-form-urlencoded" in content_type:
            args.update(parse_qsl(raw.decode(), keep_blank_values=True))
    for key in _JSON_ARGS:  # form bodies carry these as JSON strings
        if isinstance(args.get(key), str) and args[key][:1] in ("[", "{"):
            with contextlib.suppress(ValueError):
                args[key] = json.loads(args[key])
    return args


def _handler(fake: FakeSlack) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        def log_message(self, *args: Any) -> None:
            pass

        def do_GET(self) -> None:
            self.do_POST()

        def do_POST(self) -> None:
            parts = urlsplit(self.path)
            raw = self.rfile.read(int(self.headers.get("content-length") or 0))
            args = _parse(parts.query, raw, self.headers.get("content-type", ""))
            method = parts.path.removeprefix("/api/")
            if parts.path.startswith("/api/") and "/" not in method:
                auth = self.headers.get("authorization", "")
                token = auth.removeprefix("Bearer ") if auth.startswith("Bearer ") else None
                token = token or args.pop("token", None)
                status, headers, body = fake._api(method, args, token)
            else:
                status, headers, body = fake._hook(parts.path, args)
            data = json.dumps(body).encode()
            self.send_response(status)
            headers["content-type"] = "application/json; charset=utf-8"
            for name, value in headers.items():
                self.send_header(name, value)
            self.send_header("content-length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)

    return Handler
