"""Slack's Socket Mode, played on 127.0.0.1: the WebSocket end that ``apps.connections.open`` hands
out (``socket_mode_slack`` serves that method), for the tests and ``weekly-shop dev``.

What Slack documents (docs.slack.dev, "Using Socket Mode", "Socket Mode implementation"; the
envelopes' shapes as slack_sdk's own tests hold them: slackapi/python-slack-sdk,
``tests/slack_sdk/socket_mode/mock_socket_mode_server.py``), and what this server does:

1. ``apps.connections.open`` (api.slack.com/methods/apps.connections.open) with the app-level
   token (``xapp-``, ``connections:write``) answers ``wss://…/link/?ticket=…&app_id=…``; no
   token is ``missing_args``, an unknown one ``invalid_auth``, a bot or user token
   ``not_allowed_token_type`` (the Web API's error for a token of the wrong type). Here a ticket
   opens one connection; one never issued, or used, gets HTTP 401 at the handshake (what Slack
   answers there is not documented).
2. Slack's first message is ``{"type": "hello", "num_connections", "debug_info",
   "connection_info": {"app_id"}}``.
3. Each request is an envelope, ``{"envelope_id", "type": "slash_commands" | "interactive" |
   "events_api", "payload", "accepts_response_payload"}`` (Events API ones with
   ``retry_attempt`` and ``retry_reason``), acked with ``{"envelope_id", "payload"?}`` within 3
   s. An unacked Events API envelope is sent again, at most 3 times, as the Events API retries
   (the reason's wording, ``timeout``, is this fake's); a command or a click is not (the person
   sees the app fail): it is only recorded as late.
4. ``{"type": "disconnect", "reason": "refresh_requested"}`` asks for a new connection; Slack
   closes the old one a little later (here ``grace`` seconds).

``wss://`` without TLS: slack_sdk's built-in client (under Bolt's ``SocketModeHandler``) wraps
its socket in TLS only on port 443 and sends plain frames to any other port ("only for library
testing": ``slack_sdk/socket_mode/builtin/internals.py``, ``_establish_new_socket_connection``).
A fake on a free loopback port hands out the ``wss://`` URL Slack would and serves plain frames
behind it, as slack_sdk's own tests do. That client's handshake sends ``Host`` without the port.

A little over 300 lines: the protocol's server side is read in one place (tickets, ``hello``,
envelopes, acks and their retries, ``disconnect``), as Slack's page describes it.
"""

from __future__ import annotations

import asyncio
import json
import secrets
import threading
import time
import uuid
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from aiohttp import WSMsgType, web

APP_ID = "A0WEEKLY"  # slack_requests.APP_ID: the app the fake's payloads name
ACK_WITHIN = 3.0  # seconds: Slack's limit for an ack
EVENT_RETRIES = 3  # an Events API envelope is sent again at most this many times
KINDS = ("slash_commands", "interactive", "events_api")


class NotConnected(Exception):
    """An envelope was to be sent while the app had no open connection."""


@dataclass
class Envelope:
    """One envelope as delivered: when each copy went out, and the app's ack."""

    envelope_id: str
    kind: str
    payload: dict[str, Any]
    sent: list[float] = field(default_factory=list)  # monotonic times, one per delivery
    acked: float | None = None  # monotonic time of the first ack
    acks: int = 0
    response: dict[str, Any] | None = None  # the ack's payload, if it carried one

    @property
    def ack_seconds(self) -> float | None:
        """From the first delivery to the first ack (None: never acked)."""
        return None if self.acked is None or not self.sent else self.acked - self.sent[0]

    def message(self, retry_attempt: int = 0, retry_reason: str = "") -> dict[str, Any]:
        """The envelope's JSON as Slack writes it."""
        body: dict[str, Any] = {
            "envelope_id": self.envelope_id,
            "payload": self.payload,
            "type": self.kind,
            # Slack takes a response in the ack for commands and view submissions.
            "accepts_response_payload": self.kind == "slash_commands"
            or self.payload.get("type") == "view_submission",
        }
        if self.kind == "events_api":
            body.update(retry_attempt=retry_attempt, retry_reason=retry_reason)
        return body


@dataclass
class _Connection:
    ws: web.WebSocketResponse
    transport: asyncio.BaseTransport | None


class SocketModeServer:
    """The WebSocket end of Socket Mode for ``app_token``'s app, on 127.0.0.1 and a free port.

    :meth:`open_connection` is ``apps.connections.open``; :meth:`deliver` sends an envelope to
    the newest connection; :meth:`disconnect` and :meth:`drop` end connections as Slack and a
    network do. ``start``/``stop`` (or ``with``) run it in a thread of its own.
    """

    def __init__(
        self, app_token: str, app_id: str = APP_ID, ack_within: float = ACK_WITHIN
    ) -> None:
        self.app_token = app_token
        self.app_id = app_id
        self.ack_within = ack_within
        self.envelopes: dict[str, Envelope] = {}
        self.connected = 0  # connections that got their hello, all time
        self.refused_tickets = 0
        self._tickets: set[str] = set()
        self._open: list[_Connection] = []  # newest last
        self._lock = threading.Lock()
        self._changed = threading.Condition(self._lock)
        self._loop = asyncio.new_event_loop()
        self._thread = threading.Thread(target=self._loop.run_forever, daemon=True)
        self._runner: web.AppRunner | None = None
        self.port = 0

    def start(self) -> SocketModeServer:
        self._thread.start()
        self.port = self._call(self._serve())
        return self

    def stop(self) -> None:
        if self._runner is not None:
            self._call(self._runner.cleanup())
        self._loop.call_soon_threadsafe(self._loop.stop)
        self._thread.join(timeout=5)

    def __enter__(self) -> SocketModeServer:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    async def _serve(self) -> int:
        app = web.Application()
        app.router.add_get("/link/", self._link)
        self._runner = web.AppRunner(app, access_log=None)
        await self._runner.setup()
        site = web.TCPSite(self._runner, host="127.0.0.1", port=0)
        await site.start()
        return int(site._server.sockets[0].getsockname()[1])  # type: ignore[union-attr]

    def _call(self, coroutine: Any, timeout: float = 10) -> Any:
        return asyncio.run_coroutine_threadsafe(coroutine, self._loop).result(timeout)

    def open_connection(self, token: str | None) -> tuple[str | None, dict[str, Any]]:
        """``apps.connections.open`` for ``token``: (error, fields) as the Web API answers."""
        if not token:
            return "missing_args", {}
        if token != self.app_token:
            wrong_type = token[:5] in ("xoxb-", "xoxp-")
            return ("not_allowed_token_type" if wrong_type else "invalid_auth"), {}
        ticket = secrets.token_urlsafe(24)
        with self._lock:
            self._tickets.add(ticket)
        url = f"wss://127.0.0.1:{self.port}/link/?ticket={ticket}&app_id={self.app_id}"
        return None, {"url": url}

    async def _link(self, request: web.Request) -> web.StreamResponse:
        host = request.headers.get("Host", "")
        if host not in ("127.0.0.1", f"127.0.0.1:{self.port}") or "Origin" in request.headers:
            return web.Response(status=403, text="not from this machine's app")
        ticket = request.query.get("ticket", "")
        with self._lock:
            known = ticket in self._tickets
            self._tickets.discard(ticket)
            if not known:
                self.refused_tickets += 1
        if not known:
            return web.Response(status=401, text="invalid ticket")
        ws = web.WebSocketResponse(autoping=True)
        await ws.prepare(request)
        connection = _Connection(ws, request.transport)
        with self._changed:
            self._open.append(connection)
            count = len(self._open)
        hello = {
            "type": "hello",
            "num_connections": count,
            "debug_info": {"host": "applink-local", "approximate_connection_time": 18060},
            "connection_info": {"app_id": self.app_id},
        }
        await ws.send_str(json.dumps(hello))
        with self._changed:
            self.connected += 1
            self._changed.notify_all()
        try:
            async for msg in ws:
                if msg.type == WSMsgType.TEXT:
                    self._acked(msg.data)
        finally:
            with self._changed:
                if connection in self._open:
                    self._open.remove(connection)
                self._changed.notify_all()
        return ws

    def _acked(self, text: str) -> None:
        try:
            ack = json.loads(text)
        except ValueError:
            return
        if not isinstance(ack, dict):
            return
        with self._changed:
            envelope = self.envelopes.get(str(ack.get("envelope_id")))
            if envelope is None:
                return
            envelope.acks += 1
            if envelope.acked is None:
                envelope.acked = time.monotonic()
                payload = ack.get("payload")
                envelope.response = payload if isinstance(payload, dict) else None
            self._changed.notify_all()

    def deliver(self, kind: str, payload: dict[str, Any]) -> Envelope:
        """Send a new envelope of ``kind`` to the newest connection (NotConnected if none);
        an Events API one is sent again while it is not acked (module docstring, 3)."""
        if kind not in KINDS:
            raise ValueError(f"unknown envelope type {kind!r}")
        envelope = Envelope(str(uuid.uuid4()), kind, payload)
        with self._lock:
            self.envelopes[envelope.envelope_id] = envelope
        self._send(envelope, envelope.message())
        if kind == "events_api":
            self._loop.call_soon_threadsafe(self._watch, envelope, 1)
        return envelope

    def deliver_again(self, envelope: Envelope) -> None:
        """The same envelope (same ``envelope_id``) once more, as Slack may deliver one twice."""
        attempt = len(envelope.sent)
        self._send(envelope, envelope.message(attempt, "timeout" if attempt else ""))

    def _send(self, envelope: Envelope, message: dict[str, Any]) -> None:
        with self._lock:
            if not self._open:
                raise NotConnected(f"no Socket Mode connection for {envelope.kind}")
            ws = self._open[-1].ws
            envelope.sent.append(time.monotonic())
        self._call(ws.send_str(json.dumps(message)))

    def _watch(self, envelope: Envelope, attempt: int) -> None:
        def check() -> None:
            if envelope.acked is not None or attempt > EVENT_RETRIES:
                return
            try:
                with self._lock:
                    ws = self._open[-1].ws if self._open else None
                    if ws is not None:
                        envelope.sent.append(time.monotonic())
                if ws is not None:
                    message = envelope.message(attempt, "timeout")
                    asyncio.ensure_future(ws.send_str(json.dumps(message)))
            finally:
                self._watch(envelope, attempt + 1)

        self._loop.call_later(self.ack_within, check)

    def disconnect(self, reason: str = "refresh_requested", grace: float = 5.0) -> int:
        """Ask every open connection to reconnect (Slack's ``disconnect``), and close each
        ``grace`` seconds later; how many were asked."""
        with self._lock:
            asked = list(self._open)
        message = json.dumps({"type": "disconnect", "reason": reason, "debug_info": {}})
        for connection in asked:
            self._call(connection.ws.send_str(message))
            self._loop.call_soon_threadsafe(self._close_later, connection, grace)
        return len(asked)

    def _close_later(self, connection: _Connection, grace: float) -> None:
        def close() -> None:
            asyncio.ensure_future(connection.ws.close())

        self._loop.call_later(grace, close)

    def drop(self) -> None:
        """Cut the newest connection without a close frame, as a network does."""
        with self._lock:
            connection = self._open[-1] if self._open else None
        if connection is not None and connection.transport is not None:
            self._loop.call_soon_threadsafe(connection.transport.abort)  # type: ignore[attr-defined]

    def wait_connected(self, count: int, timeout: float = 20) -> None:
        """Until ``count`` connections have been opened in all (TimeoutError after ``timeout``)."""
        self._wait(lambda: self.connected >= count and bool(self._open), timeout)

    def wait_acked(self, envelope: Envelope, timeout: float = 10) -> Envelope:
        self._wait(lambda: envelope.acked is not None, timeout)
        return envelope

    def open_connections(self) -> int:
        with self._lock:
            return len(self._open)

    def _wait(self, done: Callable[[], bool], timeout: float) -> None:
        with self._changed:
            if not self._changed.wait_for(done, timeout):
                raise TimeoutError("Socket Mode: not reached in time")

    def late(self) -> list[Envelope]:
        """Every envelope acked later than Slack allows, or not at all."""
        with self._lock:
            envelopes = list(self.envelopes.values())
        return [e for e in envelopes if e.ack_seconds is None or e.ack_seconds > self.ack_within]
