"""A local fake of the Slack Web API (and of ``response_url``), for ``WebClient(base_url=...)``.

``FakeSlack`` serves ``/api/<method>`` on 127.0.0.1 and port 0: form or JSON bodies, the token
from ``Authorization: Bearer`` (or a ``token`` argument), checked against the configured one (a
per-run secret in the sandbox, so only the bot process can call it). The workspace behind it
(``bot.sandbox.slack_workspace``) refuses what Slack refuses: Block Kit and size limits,
membership, expired or reused trigger IDs, a ``response_url`` used too often or too late. It can
be told to fail the next call of a method (HTTP 429 with ``Retry-After``, or an ``ok: false``
body), to answer it late (Slack slow: later than the client's timeout is a timeout), or to drop
the connection without answering (a reset on the way). Any other path (``hooks_url`` + ...)
acts as a ``response_url``. The tests, ``bench/`` and the sandbox all use this one fake.

It can hold more than one workspace, as Slack does: the fake itself is the first (its
``team_id``), :meth:`FakeSlack.add_workspace` adds another, and each call is answered by the
workspace of its token's team (``oauth.tokens``), each ``response_url`` by the workspace it was
issued for. Channels, messages, ephemerals, views and trigger IDs of one workspace are never seen
from another. A token of a team with no workspace of its own is answered by the first one (tests
that only care which token a request was authorised with).
"""

from __future__ import annotations

import base64
import contextlib
import json
import secrets
import time
from collections import defaultdict, deque
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler
from typing import Any
from urllib.parse import parse_qsl, urlsplit

from .loopback import LoopbackServer, QuietHandler, refused
from .slack_oauth import SlackOAuth
from .slack_workspace import MESSAGE_METHODS, Reject, SlackWorkspace, Violation

_JSON_ARGS = ("blocks", "attachments", "view", "metadata")
# What a response_url answers with 404: no such message, or the URL itself is spent or unknown.
_GONE_URL = ("message_not_found", "used_url", "expired_url", "invalid_url")


@dataclass(frozen=True)
class Call:
    method: str
    args: dict[str, Any]
    token: str | None
    error: str | None = None  # the error answered, None when the call succeeded


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


@dataclass(frozen=True)
class _Late:
    seconds: float
    drop: bool  # no answer at all: the connection is closed after ``seconds``


class FakeSlack(SlackWorkspace, LoopbackServer):
    def __init__(self, token: str = "xoxb-test", **workspace: Any) -> None:
        super().__init__(**workspace)
        self.token = token
        self.oauth = SlackOAuth(token, self.team_id, self.user_id, self.bot_id)
        self.calls: list[Call] = []
        self.responses: list[HookPost] = []
        self._failures: dict[str, deque[_Failure]] = defaultdict(deque)
        self._late: dict[str, deque[_Late]] = defaultdict(deque)
        self._serve(_handler(self))
        self.url = f"{self.root}/api/"
        # A response_url's secret is its path: only URLs under this per-fake one are taken.
        self.hooks_url = f"{self.root}/hooks/{secrets.token_hex(8)}"
        self._workspaces: dict[str, SlackWorkspace] = {self.team_id: self}

    # ------------------------------------------------------------ workspaces

    def add_workspace(
        self, team_id: str, channels: Mapping[str, Iterable[str]] | None = None
    ) -> SlackWorkspace:
        """Another workspace behind this Web API, with the same bot user (reached with a token
        ``oauth.v2.access`` issued for ``team_id``); ``channels`` as for the first."""
        added = SlackWorkspace(
            team_id=team_id,
            user_id=self.user_id,
            bot_id=self.bot_id,
            channels=channels,
            clock=self.clock,
            wall=self.wall,
            ts_base=self.ts_base,
        )
        added.on_change = self._changed  # whoever watches this fake sees every workspace change
        with self._lock:
            if team_id in self._workspaces:
                raise ValueError(f"workspace {team_id} is already here")
            self._workspaces[team_id] = added
        return added

    def workspace(self, team_id: str) -> SlackWorkspace:
        """The workspace of ``team_id`` (KeyError if this fake holds none)."""
        with self._lock:
            return self._workspaces[team_id]

    def team_ids(self) -> list[str]:
        """Every workspace's team, the first one first."""
        with self._lock:
            return list(self._workspaces)

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

    def delay_next(
        self, method: str, seconds: float, times: int = 1, *, drop: bool = False
    ) -> None:
        """Answer the next ``times`` calls of ``method`` ``seconds`` late, as a slow Slack does
        (later than the client's timeout: the client times out, and the call has happened all
        the same); with ``drop``, close the connection then without answering, as a reset on
        the way does (the call never reaches the workspace)."""
        with self._lock:
            self._late[method].extend(_Late(seconds, drop) for _ in range(times))

    def on_time(self, method: str) -> None:
        """Answer ``method`` at once again: the delays and drops not used yet are forgotten."""
        with self._lock:
            self._late[method].clear()

    def calls_to(self, method: str) -> list[Call]:
        with self._lock:
            return [c for c in self.calls if c.method == method]

    def mention_sources(self) -> list[Any]:
        with self._lock:
            sources = [c.args for c in self.calls if c.method in MESSAGE_METHODS and not c.error]
            return sources + [r.body for r in self.responses if r.status == 200]

    # ------------------------------------------------------------ dispatch

    def _lateness(self, method: str, args: dict[str, Any], token: str | None) -> _Late | None:
        """How late the call now arriving is answered, if it is (dropped: recorded, not run)."""
        with self._lock:
            late = self._late[method].popleft() if self._late[method] else None
            if late is not None and late.drop:
                self.calls.append(Call(method, args, token, "(connection dropped)"))
            return late

    def _api(
        self, method: str, args: dict[str, Any], token: str | None
    ) -> tuple[int, dict[str, str], dict[str, Any]]:
        with self._lock:
            failure = self._failures[method].popleft() if self._failures[method] else None
            status, headers, error = 200, {}, None
            extra: dict[str, Any] = {}
            team = self.oauth.team_of(token)
            if method == "oauth.v2.access":
                error, extra = self.oauth.access(args)
            elif team is None:
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
                    extra = self._workspaces.get(team, self).method(method, args)
                    if method == "auth.test":  # which workspace this token is of
                        extra["team_id"] = team
                except Reject as e:
                    error, extra = e.error, dict(e.extra)
                    if e.errors:
                        messages = [f"[ERROR] {m}" for m in e.errors]
                        extra = {"errors": e.errors, "response_metadata": {"messages": messages}}
            self.calls.append(Call(method, args, token, error))
            return status, headers, _answer(error, extra)

    def _hook_post(self, path: str, body: dict[str, Any]) -> tuple[int, dict[str, Any]]:
        error, workspace = None, self._hook_workspace(path)
        try:
            if not path.startswith(urlsplit(self.hooks_url).path + "/"):
                raise Reject("invalid_url")
            status = workspace.hook(path, body)
        except Reject as e:
            status, error = (404 if e.error in _GONE_URL else 400), e.error
            if e.errors:
                with self._lock:
                    workspace.violations.append(Violation("response_url", e.errors))
        with self._lock:
            self.responses.append(HookPost(path, body, status))
        return status, _answer(error, {})

    def _hook_workspace(self, path: str) -> SlackWorkspace:
        """The workspace a response_url was issued for (its path names the team)."""
        seg = [s for s in path.split("/") if s][-7:]
        with self._lock:
            return self._workspaces.get(seg[1], self) if len(seg) == 7 else self


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
    class Handler(QuietHandler):
        def do_GET(self) -> None:
            self.do_POST()

        def do_POST(self) -> None:
            if refused(fake, self):
                return
            parts = urlsplit(self.path)
            raw = self.rfile.read(int(self.headers.get("content-length") or 0))
            args = _parse(parts.query, raw, self.headers.get("content-type", ""))
            method = parts.path.removeprefix("/api/")
            headers: dict[str, str] = {}
            if parts.path.startswith("/api/") and "/" not in method:
                auth = self.headers.get("authorization", "")
                token = auth.removeprefix("Bearer ") if auth.startswith("Bearer ") else None
                token = token or args.pop("token", None)
                if auth.startswith("Basic "):  # oauth.v2.access: the app's client ID and secret
                    pair = base64.b64decode(auth.removeprefix("Basic ")).decode(errors="replace")
                    args["client_id"], _, args["client_secret"] = pair.partition(":")
                late = fake._lateness(method, args, token)
                if late is not None and late.drop:
                    time.sleep(late.seconds)
                    self.close_connection = True  # no status line: the client's read fails
                    return
                status, headers, body = fake._api(method, args, token)
                time.sleep(late.seconds if late is not None else 0)
            else:
                status, body = fake._hook_post(parts.path, args)
            data = json.dumps(body).encode()
            self.send_response(status)
            headers["content-type"] = "application/json; charset=utf-8"
            for name, value in headers.items():
                self.send_header(name, value)
            self.send_header("content-length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)

    return Handler
