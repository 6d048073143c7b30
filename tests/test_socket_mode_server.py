"""The local Socket Mode server refuses what Slack refuses and behaves as Slack documents
(``bot.sandbox.socket_mode``): tokens of the wrong kind, unknown or used tickets, envelopes and
their acks, an Events API envelope sent again while unacked, ``disconnect``, a dropped
connection. Driven with slack_sdk's own clients where they exist (the WebClient, the built-in
SocketModeClient Bolt uses), and with a bare WebSocket client where the test must misbehave."""

from __future__ import annotations

import asyncio
import json
import threading
from collections.abc import Iterator
from typing import Any

import aiohttp
import pytest
from slack_sdk import WebClient
from slack_sdk.errors import SlackApiError
from slack_sdk.socket_mode.builtin import SocketModeClient
from slack_sdk.socket_mode.request import SocketModeRequest
from slack_sdk.socket_mode.response import SocketModeResponse

from bot.sandbox.slack_requests import block_action, slash_command
from bot.sandbox.socket_mode import SocketModeServer
from bot.sandbox.socket_mode_slack import SocketModeSlack, envelope_of
from tests.socket_mode_kit import socket_mode_slack
from tests.test_sandbox import wait_for


@pytest.fixture
def slack() -> Iterator[SocketModeSlack]:
    with socket_mode_slack() as fake:
        yield fake


def web(slack: SocketModeSlack) -> WebClient:
    return WebClient(base_url=slack.url, timeout=5)


def test_only_the_app_level_token_opens_a_connection(slack: SocketModeSlack) -> None:
    for token, error in ((slack.token, "not_allowed_token_type"), ("xapp-1-other", "invalid_auth")):
        with pytest.raises(SlackApiError) as refused:
            web(slack).apps_connections_open(app_token=token)
        assert refused.value.response["error"] == error
    with pytest.raises(SlackApiError) as refused:
        web(slack).api_call("apps.connections.open")  # no token at all
    assert refused.value.response["error"] == "missing_args"
    url = web(slack).apps_connections_open(app_token=slack.app_token)["url"]
    assert url.startswith(f"wss://127.0.0.1:{slack.socket_mode.port}/link/?ticket=")
    assert "&app_id=A0WEEKLY" in url
    with pytest.raises(SlackApiError) as refused:
        web(slack).chat_postMessage(token=slack.app_token, channel="C0SHOP", text="hi")
    assert refused.value.response["error"] == "not_allowed_token_type"
    assert all(slack.app_token != call.token for call in slack.calls)  # never kept


async def handshake(url: str) -> tuple[int, list[dict[str, Any]]]:
    """Connect to a Socket Mode URL (ws:// on the loopback port, as slack_sdk's built-in client
    does off port 443): the HTTP status, and the messages received in the first second."""
    plain = url.replace("wss://", "ws://", 1)
    received: list[dict[str, Any]] = []
    async with aiohttp.ClientSession() as session:
        try:
            async with session.ws_connect(plain, headers={"Host": "127.0.0.1"}) as ws:
                try:
                    while True:
                        msg = await ws.receive(timeout=1.0)
                        if msg.type != aiohttp.WSMsgType.TEXT:
                            break
                        received.append(json.loads(msg.data))
                except TimeoutError:
                    pass
                return 101, received
        except aiohttp.WSServerHandshakeError as exc:
            return exc.status, received


def test_a_ticket_opens_one_connection_and_an_unknown_one_none(slack: SocketModeSlack) -> None:
    url = web(slack).apps_connections_open(app_token=slack.app_token)["url"]
    status, received = asyncio.run(handshake(url))
    assert status == 101
    assert received[0]["type"] == "hello" and received[0]["connection_info"]["app_id"] == "A0WEEKLY"
    assert asyncio.run(handshake(url))[0] == 401  # used already
    forged = url.split("ticket=")[0] + "ticket=not-one-it-gave&app_id=A0WEEKLY"
    assert asyncio.run(handshake(forged))[0] == 401
    assert slack.socket_mode.refused_tickets == 2


class Recorder:
    """slack_sdk's built-in SocketModeClient (the one Bolt's handler wraps), acking every
    request at once and keeping it, with a short ping interval so a dead connection is seen."""

    def __init__(self, slack: SocketModeSlack, ack: bool = True) -> None:
        self.requests: list[SocketModeRequest] = []
        self.ack = ack
        self._lock = threading.Lock()
        self.client = SocketModeClient(
            app_token=slack.app_token, web_client=web(slack), ping_interval=1
        )
        self.client.socket_mode_request_listeners.append(self._on_request)  # type: ignore[arg-type]

    def _on_request(self, client: SocketModeClient, req: SocketModeRequest) -> None:
        with self._lock:
            self.requests.append(req)
        if self.ack:
            client.send_socket_mode_response(SocketModeResponse(envelope_id=req.envelope_id))

    def seen(self) -> list[SocketModeRequest]:
        with self._lock:
            return list(self.requests)


def test_envelopes_arrive_as_slack_shapes_them_and_acks_are_timed(slack: SocketModeSlack) -> None:
    recorder = Recorder(slack)
    recorder.client.connect()
    try:
        slack.socket_mode.wait_connected(1)
        command = slack.send(slash_command("-", text="tacos", response_url_base=slack.hooks_url))
        click = slack.send(block_action("-", action_id="approve_basket", value="v"))
        for envelope in (command, click):
            assert (slack.socket_mode.wait_acked(envelope).ack_seconds or 9) < 3
        seen = wait_for(lambda: recorder.seen() if len(recorder.seen()) == 2 else None)
        # The client runs each message on a worker thread of its own: in any order.
        first, second = sorted(seen, key=lambda r: r.type != "slash_commands")
        assert (first.type, first.accepts_response_payload) == ("slash_commands", True)
        assert first.payload["command"] == "/shop" and first.payload["text"] == "tacos"
        assert (second.type, second.accepts_response_payload) == ("interactive", False)
        assert second.payload["type"] == "block_actions"
        assert list(slack.socket_mode.late()) == []
    finally:
        recorder.client.close()


def test_an_unacked_event_comes_back_and_an_unacked_click_does_not() -> None:
    with SocketModeServer("xapp-1-test", ack_within=0.3) as server:
        url = server.open_connection("xapp-1-test")[1]["url"]

        async def listen() -> list[dict[str, Any]]:
            plain = url.replace("wss://", "ws://", 1)
            got: list[dict[str, Any]] = []
            async with aiohttp.ClientSession() as session, session.ws_connect(plain) as ws:
                await ws.receive(timeout=2)  # hello
                await asyncio.to_thread(server.deliver, "events_api", {"type": "event_callback"})
                await asyncio.to_thread(server.deliver, "interactive", {"type": "block_actions"})
                try:
                    while True:
                        got.append(json.loads((await ws.receive(timeout=1.5)).data))
                except TimeoutError:
                    return got

        got = asyncio.run(listen())
    events = [m for m in got if m["type"] == "events_api"]
    assert [(m["retry_attempt"], m["retry_reason"]) for m in events] == [
        (0, ""),
        (1, "timeout"),
        (2, "timeout"),
        (3, "timeout"),
    ]
    assert len({m["envelope_id"] for m in events}) == 1
    assert [m["type"] for m in got].count("interactive") == 1
    assert {e.kind for e in server.late()} == {"events_api", "interactive"}


def test_disconnect_and_a_dropped_connection_each_end_in_a_new_connection(
    slack: SocketModeSlack,
) -> None:
    recorder = Recorder(slack)
    recorder.client.connect()
    server = slack.socket_mode
    try:
        server.wait_connected(1)
        assert server.disconnect(grace=0.5) == 1  # refresh_requested
        server.wait_connected(2)
        wait_for(lambda: server.open_connections() == 1)
        server.drop()
        server.wait_connected(3, timeout=30)
        envelope = slack.send(slash_command("-", text="after", response_url_base=slack.hooks_url))
        server.wait_acked(envelope)
    finally:
        recorder.client.close()
    calls = [c for c in slack.calls if c.method == "apps.connections.open"]
    assert len(calls) == 3 and all(c.error is None for c in calls)


def test_envelope_of_reads_the_signed_requests_the_tests_build() -> None:
    kind, payload = envelope_of(slash_command("secret", text="the payload of pasta"))
    assert kind == "slash_commands" and payload["text"] == "the payload of pasta"
    kind, payload = envelope_of(block_action("secret", action_id="a", value="v"))
    assert kind == "interactive" and payload["actions"][0]["action_id"] == "a"
