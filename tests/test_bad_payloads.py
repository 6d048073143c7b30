"""Hostile Slack payloads, generated: whatever the shape, an ack or a 4xx; nothing changes, no lock
is left.
"""

from __future__ import annotations

import base64
import copy
import json
from collections.abc import Iterator
from typing import Any
from urllib.parse import quote, urlencode

import pytest
from hypothesis import assume, given
from hypothesis import strategies as st
from slack_bolt.adapter.aws_lambda.handler import to_bolt_request

import bot.handler
from bot.listeners.app import build_app
from bot.listeners.lambda_adapter import GuardedRequestHandler
from bot.sandbox.slack_requests import http_event, view_submission
from bot.slack.blocks import Ref
from bot.slack.modal import modal_metadata
from tests.bad_input_kit import (
    FUZZ,
    HOSTILE_IDS,
    click_payload,
    deliver,
    paused_basket,
    payload_of,
    runtime,
    signed_payload,
)
from tests.bot_kit import (
    CHANNEL,
    SECRET,
    World,
)
from tests.fault_kit import (
    TENANT,
    session_of,
)


@pytest.fixture
def guarded(world: World, monkeypatch: pytest.MonkeyPatch) -> World:
    """The world with a freshly built :class:`GuardedRequestHandler` (what bot/handler.py wires),
    so the property runs against the adapter itself as well as the deployed entry point."""
    monkeypatch.setattr(bot.handler, "_slack", GuardedRequestHandler(build_app(runtime())))
    return world


json_scalars = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(min_value=-(2**63), max_value=2**63),
    st.floats(allow_nan=False, allow_infinity=False),
    st.text(max_size=20),
    st.sampled_from(HOSTILE_IDS),
    st.just("y" * 10_000),
)
json_values = st.recursive(
    json_scalars,
    lambda inner: st.one_of(
        st.lists(inner, max_size=3), st.dictionaries(st.text(max_size=8), inner, max_size=3)
    ),
    max_leaves=8,
)


def _paths(value: Any, prefix: tuple[Any, ...] = ()) -> Iterator[tuple[Any, ...]]:
    if isinstance(value, dict):
        for key, item in value.items():
            yield prefix + (key,)
            yield from _paths(item, prefix + (key,))
    elif isinstance(value, list):
        for i, item in enumerate(value):
            yield prefix + (i,)
            yield from _paths(item, prefix + (i,))


@st.composite
def mutated(draw: st.DrawFn, payload: dict[str, Any]) -> dict[str, Any]:
    """``payload`` with one to three fields deleted or replaced by values of any type."""
    data = json.loads(json.dumps(payload))
    for _ in range(draw(st.integers(min_value=1, max_value=3))):
        paths = list(_paths(data))
        if not paths:
            break
        path = draw(st.sampled_from(paths))
        parent = data
        for step in path[:-1]:
            parent = parent[step]
        if draw(st.booleans()) and isinstance(parent, dict):
            del parent[path[-1]]
        else:
            parent[path[-1]] = draw(json_values)
    return data


forms = st.dictionaries(
    st.sampled_from(["command", "text", "team_id", "channel_id", "user_id", "ssl_check", "x"])
    | st.text(max_size=8),
    st.sampled_from(["/shop", "dinners", "T0TEAM", "C0SHOP", "U0BOB", "1", "payload"])
    | st.sampled_from(HOSTILE_IDS)
    | st.text(max_size=30),
    max_size=7,
)  # never a trigger_id: a /shop from these cannot start a session (and must not)


@pytest.fixture(params=["deployed handler", "guarded handler"])
def either(request: pytest.FixtureRequest, world: World) -> World:
    if request.param == "guarded handler":
        return request.getfixturevalue("guarded")
    return world


def _bolt_can_parse(event: dict[str, Any]) -> bool:
    try:
        to_bolt_request(copy.deepcopy(event))
    except Exception:  # noqa: BLE001 - whatever Bolt's parser raises: the guard answers 400
        return False
    return True


@FUZZ
@given(data=st.data())
def test_any_payload_is_acked_or_refused_and_changes_nothing(
    either: World, s3: Any, bucket: str, data: st.DataObject
) -> None:
    basket = paused_basket(either)
    wrong_request = json.dumps({"s": session_of(either, basket), "r": "0" * 32})
    action = data.draw(st.sampled_from(["approve_basket", "reject_basket", "change_basket"]))
    click = click_payload(action, wrong_request, message_ts=basket["ts"])
    metadata = modal_metadata(
        runtime().records.metadata_key,
        TENANT,
        Ref(session_of(either, basket), "0" * 32),
        CHANNEL,
        basket["ts"],
    )
    submission = payload_of(
        view_submission(
            SECRET,
            callback_id="change_basket_modal",
            private_metadata=metadata,
            values={"change": {"change_text": "no pizza"}},
        )
    )
    body = data.draw(
        st.one_of(
            st.text(max_size=200),
            forms.map(urlencode),
            json_values.map(lambda v: "payload=" + quote(json.dumps(v))),
            json_values.map(json.dumps),
            mutated(click).map(lambda p: urlencode({"payload": json.dumps(p)})),
            mutated(submission).map(lambda p: urlencode({"payload": json.dumps(p)})),
        )
    )
    event = http_event(SECRET, body)
    if not isinstance(bot.handler._slack, GuardedRequestHandler):
        assume(_bolt_can_parse(event))
    deliver(either, event, s3, bucket)


UNPARSEABLE = [
    b"payload=%7Bnot-json",
    b"payload=",
    b"payload=null",
    b"payload=%5B1%2C2%5D",
    b"payload=%22text%22",
    b"{not json",
    b"\xff\xfe\x00garbage",
    b'payload={"type":"block_actions","enterprise":5}',
]


def test_an_unparseable_body_gets_400_from_the_guarded_handler(
    guarded: World, s3: Any, bucket: str
) -> None:
    for raw in UNPARSEABLE:
        event = http_event(SECRET, "placeholder")
        event["body"] = base64.b64encode(raw).decode()
        assert deliver(guarded, event, s3, bucket)["statusCode"] == 400, raw
    assert guarded.lam.invocations == []


def test_the_deployed_handler_survives_an_unparseable_body(world: World) -> None:
    assert world.send(http_event(SECRET, "payload=%7Bnot-json"))["statusCode"] == 400


def test_an_ill_shaped_signed_payload_gets_400_and_an_unsigned_one_401(world: World) -> None:
    shapes = [
        {"type": "block_actions", "actions": []},
        {"type": "block_actions", "actions": "approve_basket"},
        {"type": "block_actions", "actions": [{"value": "x"}]},
        {"type": "view_submission", "view": "change_basket_modal"},
        {"type": "view_submission", "view": {"state": {}}},
        {"type": "block_actions", "actions": [{"action_id": "approve_basket"}], "user": "U0BOB"},
    ]
    for shape in shapes:
        event = signed_payload(shape)
        assert world.send(event)["statusCode"] == 400, shape
        event = signed_payload(shape)
        event["headers"]["x-slack-signature"] = "v0=" + "0" * 64
        assert world.send(event)["statusCode"] == 401, shape
    assert world.lam.invocations == [] and world.slack.calls == []


@pytest.mark.parametrize("signed", [False, True])
def test_a_public_request_posing_as_a_lazy_run_gets_401_and_runs_nothing(
    world: World, s3: Any, bucket: str, caplog: pytest.LogCaptureFixture, signed: bool
) -> None:
    """Bolt's runner marks its self-invocations with the ``x-slack-bolt-lazy-only`` and
    ``x-slack-bolt-lazy-function-name`` headers and sets the event's top-level ``method`` to
    ``NONE`` (slack_bolt/adapter/aws_lambda/lazy_listener_runner.py). Anyone can send the
    headers through API Gateway, never that key: such a request is answered 401 (before, an
    unsigned one made the handler raise LazyRunFailed: a 500 and an ERROR line), and a signed
    one (a replayed Slack request with the headers added) runs no lazy function either."""
    basket = paused_basket(world)
    before = objects_of(s3, bucket)
    event = signed_payload(click_payload("approve_basket", world.buttons(basket)["approve_basket"]))
    if not signed:
        event["headers"]["x-slack-signature"] = "v0=" + "0" * 64
    event["headers"]["x-slack-bolt-lazy-only"] = "1"
    event["headers"]["x-slack-bolt-lazy-function-name"] = "run_approve"
    calls = len(world.slack.calls)
    with caplog.at_level("WARNING"):
        assert world.send(event)["statusCode"] == 401
    assert world.lam.invocations == [] and len(world.slack.calls) == calls
    assert objects_of(s3, bucket) == before
    assert not [r for r in caplog.records if r.levelname in ("ERROR", "CRITICAL")]
    assert "lazy-run headers refused" in caplog.text


def objects_of(s3: Any, bucket: str) -> dict[str, str]:
    listed = s3.list_objects_v2(Bucket=bucket).get("Contents", [])
    return {o["Key"]: o["ETag"] for o in listed}
