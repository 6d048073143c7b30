"""What the bad-input tests share: the invariants every hostile request must keep
(:func:`deliver`), hostile IDs, signed payload builders, and the hypothesis settings."""

from __future__ import annotations

import base64
import json
from typing import Any
from urllib.parse import parse_qs, urlencode

from hypothesis import HealthCheck, settings

import bot.handler
from bot.runtime import Runtime
from bot.sandbox.slack_requests import block_action, http_event
from tests.bot_kit import (
    SECRET,
    World,
    objects,
    start_basket,
)
from tests.fault_kit import (
    listener_failures,
    lock_keys,
)

FUZZ = settings(
    max_examples=40,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
HOSTILE_IDS = [
    "../T0OTHER/s/x",
    "..",
    "a/b",
    "a\\b",
    "a\x00b",
    "a\nb",
    "x" * 500,
    "",
    " ",
    "%2e%2e%2f",
    "séance",
    "<!channel>",
]


def runtime() -> Runtime:
    """The runtime of the current cold start (the World's)."""
    assert bot.handler._runtime is not None
    return bot.handler._runtime


def deliver(world: World, event: dict[str, Any], s3: Any, bucket: str) -> dict[str, Any]:
    """Send ``event`` and every lazy invocation it triggers; check the bad-input invariants."""
    before = objects(s3, bucket)
    with listener_failures() as failures:
        response = world.send(event)
        lazies = world.run_lazies()
    status = response["statusCode"]
    assert 200 <= status < 300 or 400 <= status < 500, response
    assert all(200 <= r["statusCode"] < 300 for r in lazies), lazies
    assert failures == []
    assert objects(s3, bucket) == before
    assert lock_keys(s3, bucket) == []
    assert not [m for m in world.slack.mentions() if m.startswith("<!")]
    return response


def payload_of(event: dict[str, Any]) -> dict[str, Any]:
    body = base64.b64decode(event["body"]).decode()
    return dict(json.loads(parse_qs(body)["payload"][0]))


def signed_payload(payload: Any) -> dict[str, Any]:
    body = urlencode({"payload": json.dumps(payload, separators=(",", ":"))})
    return http_event(SECRET, body)


def click_payload(action: str, value: str, **kw: Any) -> dict[str, Any]:
    return payload_of(block_action(SECRET, action_id=action, value=value, **kw))


def paused_basket(world: World) -> dict[str, Any]:
    baskets = world.baskets()
    return baskets[0] if baskets else start_basket(world)
