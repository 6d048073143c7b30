"""The fake Slack with Socket Mode on: ``FakeSlack``'s Web API, plus ``apps.connections.open`` for
the app-level token, plus the WebSocket end it hands out (``socket_mode``); and what a person does
in Slack, sent as Socket Mode envelopes.

Slack's Web API takes an app-level token (``xapp-``) only for the few ``apps.*`` methods made for
it (docs.slack.dev, "App-level tokens"); a method called with a token of the wrong type answers
``not_allowed_token_type`` (the Web API's documented error for it), which is what a bot token
gets from ``apps.connections.open`` and the app-level token from any other method here. Which
exact error Slack gives in each case was not checked against Slack itself.

Envelopes carry what Slack would otherwise POST to the request URL, decoded (docs.slack.dev,
"Socket Mode implementation"): a slash command's form fields as a JSON object
(``slash_commands``), an interaction's ``payload`` object (``interactive``), an Events API body
(``events_api``). :func:`envelope_of` makes one from the signed HTTP requests the tests and the
sandbox already build (``slack_requests``, ``slack_events``), so there is one table of payload
shapes, not two.
"""

from __future__ import annotations

import json
from typing import Any
from urllib.parse import parse_qsl

from .slack_api import Call, FakeSlack
from .slack_requests import decoded_body
from .socket_mode import Envelope, SocketModeServer

APP_METHODS = ("apps.connections.open",)  # the methods an app-level token may call here


def envelope_of(event: dict[str, Any]) -> tuple[str, dict[str, Any]]:
    """(envelope type, payload) of a signed HTTP request built by ``slack_requests`` or
    ``slack_events``: what Slack sends over Socket Mode instead of that request."""
    body = decoded_body(event)
    content_type = str((event.get("headers") or {}).get("content-type", ""))
    if "json" in content_type:
        return "events_api", json.loads(body)
    form = dict(parse_qsl(body, keep_blank_values=True))
    if "payload" in form and "command" not in form:
        return "interactive", json.loads(form["payload"])
    return "slash_commands", form


class SocketModeSlack(FakeSlack):
    """``FakeSlack`` whose app has Socket Mode on, with ``app_token`` its app-level token;
    ``socket_mode`` is the WebSocket end. ``start``/``stop`` run both."""

    def __init__(self, token: str, app_token: str, **workspace: Any) -> None:
        super().__init__(token, **workspace)
        self.app_token = app_token
        self.socket_mode = SocketModeServer(app_token)

    def start(self) -> SocketModeSlack:
        self.socket_mode.start()
        super().start()
        return self

    def stop(self) -> None:
        super().stop()
        self.socket_mode.stop()

    def _api(
        self, method: str, args: dict[str, Any], token: str | None
    ) -> tuple[int, dict[str, str], dict[str, Any]]:
        if method not in APP_METHODS and token != self.app_token:
            return super()._api(method, args, token)
        error: str | None = "not_allowed_token_type"
        extra: dict[str, Any] = {}
        if method in APP_METHODS:
            error, extra = self.socket_mode.open_connection(token)
        with self._lock:
            # The app-level token itself is never kept in the record of calls.
            shown = "xapp-(app-level token)" if token == self.app_token else token
            self.calls.append(Call(method, args, shown, error))
        body = {"ok": True, **extra} if error is None else {"ok": False, "error": error}
        return 200, {}, body

    def send(self, event: dict[str, Any]) -> Envelope:
        """What the person did (a signed request from ``slack_requests``/``slack_events``),
        delivered as an envelope to the app's newest connection."""
        kind, payload = envelope_of(event)
        return self.socket_mode.deliver(kind, payload)
