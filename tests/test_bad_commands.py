"""Slash commands Bolt would misread, or that lack an ID or a text, start nothing."""

from __future__ import annotations

import base64
from typing import Any
from urllib.parse import quote

from bot.sandbox.slack_requests import http_event, slash_command
from tests.bad_input_kit import (
    deliver,
)
from tests.bot_kit import (
    SECRET,
    World,
)


def test_a_shop_request_with_the_word_payload_starts_a_basket(world: World) -> None:
    """Bolt read any form body containing "payload" as an empty interactive payload (404)."""
    ack = world.shop(text="the payload of pasta for Monday")
    assert ack["statusCode"] == 200 and ack["body"] == "Writing your basket…"
    world.run_lazies()
    assert len(world.baskets()) == 1


def test_a_shop_command_missing_an_id_or_text_starts_nothing(
    world: World, s3: Any, bucket: str
) -> None:
    incomplete = "I couldn't read that request. Try /shop again."
    for field, bad in [
        ("team_id", "../T0"),
        ("channel_id", ""),
        ("user_id", "U0 <!here>"),
        ("trigger_id", ""),
    ]:
        event = slash_command(SECRET, text="dinners")
        form = dict(
            pair.split("=", 1) for pair in base64.b64decode(event["body"]).decode().split("&")
        )
        form[field] = quote(bad)
        body = "&".join(f"{k}={v}" for k, v in form.items())
        assert deliver(world, http_event(SECRET, body), s3, bucket)["body"] == incomplete, field
    for text in ["", "   "]:
        response = deliver(world, slash_command(SECRET, text=text), s3, bucket)
        assert response["body"].startswith("Tell me the week's dinners"), text[:5]
    response = deliver(world, slash_command(SECRET, text="x" * 3001), s3, bucket)
    assert response["body"].startswith("That's more than I can read")
    assert world.slack.calls == [] and world.claude.message_calls == 0
