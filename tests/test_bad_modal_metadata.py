"""The change modal's metadata is the bot's own (MACed): edited or foreign metadata is refused in
the modal.
"""

from __future__ import annotations

import json
from typing import Any

from bot.sandbox.block_kit import LIMITS
from bot.sandbox.slack_requests import view_submission
from bot.steps.clicks import GONE
from tests.bad_input_kit import (
    deliver,
)
from tests.bot_kit import (
    SECRET,
    World,
    start_basket,
)
from tests.fault_kit import (
    session_of,
)


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
