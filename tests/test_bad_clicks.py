"""Hostile clicks: other tenants' sessions, hostile IDs in button values, bad users, teams,
channels and message timestamps.
"""

from __future__ import annotations

import json
from typing import Any

import pytest

from bot.sandbox.slack_requests import block_action
from bot.steps.clicks import GONE
from tests.bad_input_kit import (
    HOSTILE_IDS,
    click_payload,
    deliver,
    signed_payload,
)
from tests.bot_kit import (
    SECRET,
    World,
    start_basket,
)
from tests.fault_kit import (
    TENANT,
    ephemeral_texts,
    thread_texts,
)


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
        payload = click_payload(
            "approve_basket", world.buttons(basket)["approve_basket"], message_ts=basket["ts"]
        )
        payload[field] = bad
        if field == "channel":
            payload["container"]["channel_id"] = bad["id"]
        if field == "container":
            payload["message"]["ts"] = "../1"
        deliver(world, signed_payload(payload), s3, bucket)
        assert world.slack.ephemerals() == [] and thread_texts(world, basket) == [], field


def test_an_unknown_action_id_is_acked_and_does_nothing(world: World, s3: Any, bucket: str) -> None:
    basket = start_basket(world)
    value = world.buttons(basket)["approve_basket"]
    for action in ["delete_everything", "", "APPROVE_BASKET", "approve_basket ", "a" * 300]:
        response = deliver(world, _click_event(world, basket, action, value=value), s3, bucket)
        assert response["statusCode"] in (200, 404), action
    assert world.lam.invocations == [] and world.slack.ephemerals() == []
    assert world.buttons(world.baskets()[0])
