"""Bolt's ``SocketModeHandler``, running each Socket Mode envelope once per process.

Slack may send an envelope again: an Events API one not acked within 3 seconds comes back with
``retry_attempt`` and ``retry_reason`` (docs.slack.dev, "Socket Mode implementation"), and a
connection being replaced can carry one twice. slack_sdk's built-in client hands each message to
a pool of worker threads (``SocketModeClient.message_workers``), so the two copies would run at
the same time. The session lock refuses the second copy of the same work while the first is
young (``DuplicateDelivery``, ``workflow.persistence.lock``: on Lambda, the refused one is
retried a minute later); here nothing retries it, and nothing needs to: the first copy is
running or done in this very process, and if the process dies the copy dies with it. So a
repeated ``envelope_id`` is acked with nothing and dropped. A restarted process remembers
nothing and runs a redelivery as the Lambda path does.
"""

from __future__ import annotations

import threading
from collections import OrderedDict

from slack_bolt import App
from slack_bolt.adapter.socket_mode import SocketModeHandler
from slack_sdk.socket_mode.builtin import SocketModeClient
from slack_sdk.socket_mode.request import SocketModeRequest
from slack_sdk.socket_mode.response import SocketModeResponse

REMEMBERED = 10_000  # envelope IDs kept: hours of a developer's clicks, a few hundred KB


class OnceHandler(SocketModeHandler):
    """``SocketModeHandler`` that acks a repeated envelope and runs it no more."""

    def __init__(self, app: App, app_token: str) -> None:
        super().__init__(app, app_token)
        self._seen: OrderedDict[str, None] = OrderedDict()
        self._seen_lock = threading.Lock()

    def handle(self, client: SocketModeClient, req: SocketModeRequest) -> None:  # type: ignore[override]
        with self._seen_lock:
            again = req.envelope_id in self._seen
            self._seen[req.envelope_id] = None
            while len(self._seen) > REMEMBERED:
                self._seen.popitem(last=False)
        if again:
            client.send_socket_mode_response(SocketModeResponse(envelope_id=req.envelope_id))
            return
        super().handle(client, req)
