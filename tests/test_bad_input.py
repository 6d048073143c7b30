"""Bad input: Slack payloads, checkpoint bytes and model output.

Slack payloads go through the real Lambda handler as signed API Gateway v2 events. Whatever the
payload, the answer is an ack (2xx) or a 4xx, every lazy invocation it triggers ends without an
exception, no S3 object changes and no lock is left. Tampered checkpoints are refused in the
thread and nothing is ordered. Whatever the model writes, the basket message fits Slack's limits,
pings nobody, says how many items it left out, and can still be approved.
"""

from __future__ import annotations

import base64
import copy
import dataclasses
import json
import zlib
from collections.abc import Iterator
from typing import Any
from urllib.parse import parse_qs, quote, urlencode

import pytest
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st
from slack_bolt.adapter.aws_lambda.handler import to_bolt_request

import bot.handler
from bot.app import build_app
from bot.blocks import (
    ITEMS_TEXT_BUDGET,
    MAX_ITEM_CHARS,
    Ref,
    answered_blocks,
    basket_blocks,
    modal_metadata,
)
from bot.clicks import BROKEN, GONE
from bot.handler import GuardedRequestHandler
from bot.runtime import Runtime
from bot.sandbox.anthropic_api import Reply
from bot.sandbox.block_kit import LIMITS, block_errors
from bot.sandbox.block_kit import texts as block_texts
from bot.sandbox.slack_requests import block_action, http_event, slash_command, view_submission
from tests.bot_kit import (
    CHANNEL,
    SECRET,
    World,
    context_text,
    objects,
    section_text,
    start_basket,
)
from tests.fault_kit import (
    TENANT,
    ephemeral_texts,
    listener_failures,
    lock_keys,
    session_of,
    thread_texts,
)
from workflow.errors import CheckpointError
from workflow.shop.records import SHOP_RECORDS
from workflow.signing import CheckpointSigner
from workflow.store import CheckpointRecord

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


@pytest.fixture
def guarded(world: World, monkeypatch: pytest.MonkeyPatch) -> World:
    """The world with a freshly built :class:`GuardedRequestHandler` (what bot/handler.py wires),
    so the property runs against the adapter itself as well as the deployed entry point."""
    monkeypatch.setattr(bot.handler, "_slack", GuardedRequestHandler(build_app(runtime())))
    return world


@pytest.fixture
def memo() -> dict[str, Any]:
    """Somewhere to keep a value across the examples of one hypothesis test."""
    return {}


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


# ---------------------------------------------------------------- hypothesis: payload shapes

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


def _payload_of(event: dict[str, Any]) -> dict[str, Any]:
    body = base64.b64decode(event["body"]).decode()
    return dict(json.loads(parse_qs(body)["payload"][0]))


def _signed_payload(payload: Any) -> dict[str, Any]:
    body = urlencode({"payload": json.dumps(payload, separators=(",", ":"))})
    return http_event(SECRET, body)


def _click_payload(action: str, value: str, **kw: Any) -> dict[str, Any]:
    return _payload_of(block_action(SECRET, action_id=action, value=value, **kw))


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
    basket = _paused(either)
    wrong_request = json.dumps({"s": session_of(either, basket), "r": "0" * 32})
    action = data.draw(st.sampled_from(["approve_basket", "reject_basket", "change_basket"]))
    click = _click_payload(action, wrong_request, message_ts=basket["ts"])
    metadata = modal_metadata(
        runtime().metadata_key,
        TENANT,
        Ref(session_of(either, basket), "0" * 32),
        CHANNEL,
        basket["ts"],
    )
    submission = _payload_of(
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


def _paused(world: World) -> dict[str, Any]:
    baskets = world.baskets()
    return baskets[0] if baskets else start_basket(world)


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
        event = _signed_payload(shape)
        assert world.send(event)["statusCode"] == 400, shape
        event = _signed_payload(shape)
        event["headers"]["x-slack-signature"] = "v0=" + "0" * 64
        assert world.send(event)["statusCode"] == 401, shape
    assert world.lam.invocations == [] and world.slack.calls == []


# ---------------------------------------------------------------- explicit hostile clicks


def test_a_button_naming_another_tenants_session_finds_nothing(
    world: World, s3: Any, bucket: str
) -> None:
    world.shop(team_id="T0OTHER")
    world.run_lazies()
    (theirs,) = world.baskets()
    for action in ("approve_basket", "reject_basket"):
        deliver(world, _click_event(world, theirs, action, team_id=TENANT), s3, bucket)
    assert ephemeral_texts(world, "U0BOB") == [GONE, GONE]
    world.click(theirs, "approve_basket", team_id="T0OTHER")  # their own click still works
    world.run_lazies()
    assert thread_texts(world, theirs) == ["Ordered 10 items."]


def _click_event(
    world: World, message: dict[str, Any], action: str, value: str | None = None, **kw: Any
) -> dict[str, Any]:
    return block_action(
        SECRET,
        action_id=action,
        value=value if value is not None else world.buttons(message)[action],
        message_ts=message["ts"],
        **kw,
    )


@pytest.mark.parametrize("where", ["session", "request"])
def test_hostile_ids_in_a_button_value_are_told_gone_and_touch_nothing(
    world: World, s3: Any, bucket: str, where: str
) -> None:
    basket = start_basket(world)
    real = json.loads(world.buttons(basket)["approve_basket"])
    for n, hostile in enumerate(HOSTILE_IDS, start=1):
        value = json.dumps({**real, ("s" if where == "session" else "r"): hostile})
        for action in ("approve_basket", "change_basket"):
            deliver(world, _click_event(world, basket, action, value=value), s3, bucket)
        assert ephemeral_texts(world, "U0BOB") == [GONE, GONE] * n, repr(hostile)
    assert world.slack.calls_to("views.open") == []
    assert world.buttons(world.baskets()[0])  # the real basket still waits


def test_a_button_value_that_is_not_ours_is_told_gone(world: World, s3: Any, bucket: str) -> None:
    basket = start_basket(world)
    values = ["", "not json", "[]", "null", '{"s": 1, "r": 2}', '{"s": "a"}', "v" * 100_000]
    for n, value in enumerate(values, start=1):
        deliver(world, _click_event(world, basket, "approve_basket", value=value), s3, bucket)
        assert ephemeral_texts(world, "U0BOB") == [GONE] * n, value[:20]


BAD_CLICK_FIELDS: list[tuple[str, Any]] = [
    ("user", "U0BOB"),
    ("user", {"id": "U0BOB> <!channel"}),
    ("user", {"id": 12345}),
    ("team", {"id": "../T0TEAM"}),
    ("channel", {"id": "C0 SHOP"}),
    ("container", {"message_ts": "../1"}),
]


def test_a_click_with_a_bad_user_team_channel_or_ts_is_ignored(
    world: World, s3: Any, bucket: str
) -> None:
    basket = start_basket(world)
    for field, bad in BAD_CLICK_FIELDS:
        payload = _click_payload(
            "approve_basket", world.buttons(basket)["approve_basket"], message_ts=basket["ts"]
        )
        payload[field] = bad
        if field == "channel":
            payload["container"]["channel_id"] = bad["id"]
        if field == "container":
            payload["message"]["ts"] = "../1"
        deliver(world, _signed_payload(payload), s3, bucket)
        assert world.slack.ephemerals() == [] and thread_texts(world, basket) == [], field


def test_an_unknown_action_id_is_acked_and_does_nothing(world: World, s3: Any, bucket: str) -> None:
    basket = start_basket(world)
    value = world.buttons(basket)["approve_basket"]
    for action in ["delete_everything", "", "APPROVE_BASKET", "approve_basket ", "a" * 300]:
        response = deliver(world, _click_event(world, basket, action, value=value), s3, bucket)
        assert response["statusCode"] in (200, 404), action
    assert world.lam.invocations == [] and world.slack.ephemerals() == []
    assert world.buttons(world.baskets()[0])


# ---------------------------------------------------------------- the change modal's metadata


def _opened_metadata(world: World, basket: dict[str, Any]) -> str:
    world.click(basket, "change_basket")
    view = world.slack.calls_to("views.open")[-1].args["view"]
    view = json.loads(view) if isinstance(view, str) else view
    metadata = str(view["private_metadata"])
    assert len(metadata) <= LIMITS["view.private_metadata"]
    return metadata


def _edits(metadata: str, other_session: str) -> dict[str, str]:
    data = json.loads(metadata)
    return {
        "another session": json.dumps({**data, "s": other_session}),
        "another request": json.dumps({**data, "r": "f" * 32}),
        "another message": json.dumps({**data, "m": "1700000000.999999"}),
        "another channel": json.dumps({**data, "c": "C0ELSEWHERE"}),
        "no mac": json.dumps({k: v for k, v in data.items() if k != "h"}),
        "forged mac": json.dumps({**data, "h": "A" * len(data["h"])}),
        "missing keys": json.dumps({"s": data["s"]}),
        "wrong types": json.dumps({k: 1 for k in data}),
        "garbage JSON": metadata[:-3],
        "not an object": json.dumps([data]),
        "empty": "",
        "huge": "m" * 3000,
    }


def test_edited_modal_metadata_is_refused_in_the_modal(world: World, s3: Any, bucket: str) -> None:
    basket = start_basket(world)
    world.shop(text="another week")
    world.run_lazies()
    other_session = session_of(world, world.baskets()[1])
    metadata = _opened_metadata(world, basket)
    for name, edited in _edits(metadata, other_session).items():
        event = view_submission(
            SECRET,
            callback_id="change_basket_modal",
            private_metadata=edited,
            values={"change": {"change_text": "no pizza"}},
        )
        response = deliver(world, event, s3, bucket)
        assert json.loads(response["body"]) == {
            "response_action": "errors",
            "errors": {"change": GONE},
        }, name
    assert world.claude.message_calls == 2  # the two first baskets, no revision
    assert all(world.buttons(b) for b in world.baskets())


def test_modal_metadata_from_another_workspace_is_refused(
    world: World, s3: Any, bucket: str
) -> None:
    basket = start_basket(world)
    metadata = _opened_metadata(world, basket)
    event = view_submission(
        SECRET,
        callback_id="change_basket_modal",
        private_metadata=metadata,
        values={"change": {"change_text": "no pizza"}},
        team_id="T0OTHER",
    )
    response = deliver(world, event, s3, bucket)
    assert json.loads(response["body"])["errors"] == {"change": GONE}


def test_an_empty_or_overlong_change_is_asked_again(world: World, s3: Any, bucket: str) -> None:
    basket = start_basket(world)
    metadata = _opened_metadata(world, basket)
    for text in ["   ", "x" * 501, {"type": "plain_text_input", "value": None}]:
        event = view_submission(
            SECRET,
            callback_id="change_basket_modal",
            private_metadata=metadata,
            values={"change": {"change_text": text}},
        )
        response = deliver(world, event, s3, bucket)
        errors = json.loads(response["body"])["errors"]
        assert errors == {"change": "Say what should change, in at most 500 characters."}
    assert world.claude.message_calls == 1


def test_the_real_metadata_still_works(world: World) -> None:
    basket = start_basket(world)
    metadata = _opened_metadata(world, basket)
    assert json.loads(metadata).keys() == {"s", "r", "c", "m", "h"}
    response = world.submit_change("no pizza")
    assert response["statusCode"] == 200 and not response.get("body")
    world.run_lazies()
    assert [b["text"] for b in world.baskets()][-1].startswith("Basket 2 of 3")


# ---------------------------------------------------------------- slash commands


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


# ---------------------------------------------------------------- checkpoint bytes


def _latest(s3: Any, bucket: str) -> str:
    return min(k for k in objects(s3, bucket) if "/cp/" in k)


def _record(raw: bytes, session: str) -> CheckpointRecord:
    return SHOP_RECORDS.from_bytes(raw, "checkpoint", TENANT, session)


def _readable(raw: bytes, session: str) -> CheckpointRecord | None:
    try:
        return _record(raw, session)
    except CheckpointError:
        return None


def _plain(record: CheckpointRecord, state: str | None = None, **header: Any) -> bytes:
    """The record in plain zlib (which every reader accepts), header fields overridden."""
    line = {
        "v": 1,
        "id": record.id,
        "cp": record.checkpoint_id,
        "parent": record.parent_checkpoint_id,
        "run": record.run_id,
        "at": int(record.created_at.timestamp() * 1000),
        "seq": record.sequence,
        "sig": record.signature,
        **header,
    }
    text = record.state if state is None else state
    return zlib.compress(json.dumps(line).encode() + b"\n" + text.encode())


def _resigned(record: CheckpointRecord, state: str, signer: CheckpointSigner) -> bytes:
    edited = dataclasses.replace(record, state=state)
    return SHOP_RECORDS.to_bytes(dataclasses.replace(edited, signature=signer.sign(edited)))


def _tampered(kind: str, raw: bytes, session: str) -> bytes:
    if kind == "truncated":
        return raw[: len(raw) // 2]
    if kind == "last byte cut":
        return raw[:-1]
    if kind == "bytes after the end":
        return raw + b"\x00"
    if kind == "not zlib":
        return b"PK\x03\x04 definitely not a checkpoint"
    record = _record(raw, session)
    state = record.state
    real = runtime().signer
    doc = json.loads(state)
    caviar = state.replace("chicken breast", "beluga caviar")
    if kind == "header not JSON":
        return zlib.compress(b"{header\n" + state.encode())
    if kind == "edited item":
        return SHOP_RECORDS.to_bytes(dataclasses.replace(record, state=caviar))
    if kind == "signed with another key":
        return _resigned(record, caviar, CheckpointSigner(b"another-key-" * 3))
    if kind == "record version 2":
        return _plain(record, v=2)
    if kind == "state format 2":
        return _resigned(record, json.dumps({**doc, "format": 2}), real)
    if kind == "unknown type tag":
        return _resigned(record, state.replace('"t":"Basket"', '"t":"Pizza"'), real)
    if kind == "value of the wrong type":
        doc["requests"][0]["data"]["v"]["items"] = "everything"
        return _resigned(record, json.dumps(doc), real)
    if kind == "state not JSON":
        return _resigned(record, state[:-1], real)
    if kind == "another session's checkpoint":
        return raw  # put under another session's key by the test
    raise AssertionError(kind)


TAMPERS = [
    "truncated",
    "last byte cut",
    "bytes after the end",
    "not zlib",
    "header not JSON",
    "edited item",
    "signed with another key",
    "record version 2",
    "state format 2",
    "unknown type tag",
    "value of the wrong type",
    "state not JSON",
    "another session's checkpoint",
]


def _refused(world: World, basket: dict[str, Any], s3: Any, bucket: str) -> None:
    """Approve: the thread says the basket can't be resumed; nothing ordered, nothing written."""
    before = objects(s3, bucket)
    said = len(thread_texts(world, basket))
    with listener_failures() as failures:
        world.click(basket, "approve_basket")
        world.run_lazies()
    assert failures == []
    assert thread_texts(world, basket)[said:] == [BROKEN]
    assert not [t for t in thread_texts(world, basket) if t.startswith("Ordered")]
    assert objects(s3, bucket) == before
    assert lock_keys(s3, bucket) == []
    assert world.buttons(world.baskets()[0])


def test_a_bad_checkpoint_is_refused_and_nothing_is_ordered(
    world: World, s3: Any, bucket: str
) -> None:
    basket = start_basket(world)
    session = session_of(world, basket)
    key = _latest(s3, bucket)
    original = s3.get_object(Bucket=bucket, Key=key)["Body"].read()
    world.shop(text="another week")
    world.run_lazies()
    other = session_of(world, world.baskets()[1])
    other_key = min(k for k in objects(s3, bucket) if f"/{other}/cp/" in k)
    theirs = s3.get_object(Bucket=bucket, Key=other_key)["Body"].read()
    for kind in TAMPERS:
        raw = theirs if kind == "another session's checkpoint" else original
        s3.put_object(Bucket=bucket, Key=key, Body=_tampered(kind, raw, session))
        _refused(world, basket, s3, bucket)
    s3.put_object(Bucket=bucket, Key=key, Body=original)  # the untouched checkpoint still works
    world.click(basket, "approve_basket")
    world.run_lazies()
    assert thread_texts(world, basket) == [BROKEN] * len(TAMPERS) + ["Ordered 10 items."]


@FUZZ
@given(data=st.data())
def test_any_change_to_a_checkpoint_is_refused(
    world: World, s3: Any, bucket: str, memo: dict[str, Any], data: st.DataObject
) -> None:
    basket = _paused(world)
    key = _latest(s3, bucket)
    if "original" not in memo:
        memo["original"] = s3.get_object(Bucket=bucket, Key=key)["Body"].read()
    original: bytes = memo["original"]
    session = session_of(world, basket)
    record = _record(original, session)
    how = data.draw(st.sampled_from(["cut", "flip a byte", "edit the state"]))
    if how == "cut":
        tampered = original[: data.draw(st.integers(0, len(original) - 1))]
    elif how == "flip a byte":
        at = data.draw(st.integers(0, len(original) - 1))
        bit = 1 << data.draw(st.integers(0, 7))
        tampered = original[:at] + bytes([original[at] ^ bit]) + original[at + 1 :]
        if _readable(tampered, session) == record:
            return  # a flip in the deflate stream's padding bits changes nothing that is read
    else:
        at = data.draw(st.integers(0, len(record.state) - 1))
        new = data.draw(st.text(min_size=1, max_size=5))
        edited = record.state[:at] + new + record.state[at + 1 :]
        if edited == record.state:
            return
        tampered = SHOP_RECORDS.to_bytes(dataclasses.replace(record, state=edited))
    s3.put_object(Bucket=bucket, Key=key, Body=tampered)
    _refused(world, basket, s3, bucket)


# ---------------------------------------------------------------- model output

INJECTION = "\n".join(
    [
        "<!channel> milk",
        "<!here> eggs",
        "<!everyone> bread",
        "<@U123> butter",
        "<@W999|boss> cheese",
        "<!subteam^S1> apples",
        "<!subteam^S1|@team> pears",
        "<https://evil.test|free groceries>",
        "<mailto:x@evil.test|mail>",
        "*bold* _italic_ ~strike~ `code`",
        "> quoted & <b>html</b>",
        "&lt;!channel&gt; pre-escaped",
    ]
)


def _basket_checks(world: World, expected_items: int) -> dict[str, Any]:
    """The posted basket fits Slack, pings no one and counts what it left out."""
    assert world.slack.violations == []
    (basket,) = world.baskets()
    text = section_text(basket)
    shown = text.count("\n• ") + text.startswith("• ")
    if shown < expected_items:
        hidden = expected_items - shown
        assert f"…and {hidden} more item" in text
        assert f"(approving orders all {expected_items})" in text
    else:
        assert "more item" not in text
    assert sum(len(t) for t in block_texts(basket["blocks"])) <= LIMITS["message.blocks_text"]
    for call in world.slack.calls_to("chat.postMessage") + world.slack.calls_to("chat.update"):
        assert len(call.args.get("text") or "") <= 3000
    return basket


def _approve_and_check(world: World, basket: dict[str, Any], expected_items: int) -> None:
    world.click(basket, "approve_basket")
    world.run_lazies()
    assert world.slack.violations == []
    assert thread_texts(world, basket) == [f"Ordered {expected_items} items."]
    assert "Approved by <@U0BOB>" in context_text(world.baskets()[0])
    assert set(world.slack.mentions()) <= {"<@U0ALICE>", "<@U0BOB>"}


@pytest.mark.parametrize(
    "text, items",
    [
        ("", 0),
        ("\n\n  \n- \n*\n", 0),
        ("\n".join(f"{i} g of item number {i}" for i in range(10_000)), 500),
        ("\n".join("x" * 5000 for _ in range(50)), 50),
        ("\n".join(f"{i:03d} " + "word " * 39 for i in range(500)), 500),
        (INJECTION, 12),
        ("\u202eevil\u202c\n\x00nul\n\ttab\n" + "😀" * 400, 4),
    ],
    ids=[
        "empty",
        "only bullets",
        "10000 lines",
        "5000-char lines",
        "500 long items",
        "mrkdwn",
        "control chars",
    ],
)
def test_any_model_output_becomes_a_basket_that_fits_and_can_be_approved(
    world: World, text: str, items: int
) -> None:
    world.claude.script(Reply(text=text))
    world.shop()
    world.run_lazies()
    basket = _basket_checks(world, items)
    if items == 0:
        assert section_text(basket) == "_(the shopper wrote no items)_"
    if "x" * 10 in text:
        lines = section_text(basket).splitlines()
        assert all(len(line) <= MAX_ITEM_CHARS + 2 for line in lines)
        assert all(line.endswith("…") for line in lines if line.startswith("• x"))
    if text == INJECTION:
        shown = section_text(basket)
        assert "&lt;!channel&gt; milk" in shown and "&lt;https://evil.test|free" in shown
        assert "&amp;lt;!channel&amp;gt; pre-escaped" in shown
        assert "<http" not in json.dumps(world.slack.calls_to("chat.postMessage")[-1].args)
    assert set(world.slack.mentions()) <= {"<@U0ALICE>"}
    _approve_and_check(world, basket, items)


def test_a_revised_basket_with_injection_fits_and_pings_no_one(world: World) -> None:
    from tests.bot_kit import change

    basket = start_basket(world)
    many = "\n".join(f"{i} g of something long enough to need the budget" for i in range(600))
    world.claude.script(Reply(text=INJECTION + "\n" + many))
    change(world, basket, "<!channel> more, and <@U0BOSS> decides")
    first, second = world.baskets()
    assert world.slack.violations == []
    assert "&lt;!channel&gt; more" in context_text(first)
    assert "approving orders all 500" in section_text(second)
    world.click(second, "approve_basket")
    world.run_lazies()
    assert thread_texts(world, second) == ["Ordered 500 items."]
    assert set(world.slack.mentions()) <= {"<@U0ALICE>", "<@U0BOB>"}


items_lists = st.lists(
    st.text(
        st.characters(codec="utf-8", exclude_categories=["Cs"]) | st.sampled_from("<>&@!|*_`\n"),
        min_size=1,
        max_size=600,
    ),
    max_size=500,
)


@settings(max_examples=150, deadline=None)
@given(items=items_lists, note=st.text(max_size=500), round=st.integers(1, 10))
def test_basket_blocks_always_fit_slack(items: list[str], note: str, round: int) -> None:
    """Block Kit for any items (as a Basket can hold: ≤ 500 of ≤ 500 characters)."""
    items = [i[:500] for i in items]
    ref = Ref("0" * 24, "f" * 32)
    for blocks in (
        basket_blocks(
            round=round, max_rounds=10, items=items, requested_by="U0ALICE", progress=note, ref=ref
        ),
        answered_blocks(
            round=round,
            max_rounds=10,
            items=items,
            verdict="Approved",
            user="U0BOB",
            at=1,
            note=note,
        ),
    ):
        assert block_errors(blocks) == []
        texts = list(block_texts(blocks))
        assert sum(map(len, texts)) <= LIMITS["message.blocks_text"]
        sections = "\n".join(b["text"]["text"] for b in blocks if b["type"] == "section")
        assert "<" not in sections and ">" not in sections
        shown = sum(1 for line in sections.split("\n") if line.startswith("• "))
        if shown < len(items):
            assert f"…and {len(items) - shown} more item" in sections
            assert sum(len(line) + 1 for line in sections.split("\n")[:shown]) <= ITEMS_TEXT_BUDGET
        else:
            assert "more item" not in sections
