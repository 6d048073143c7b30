"""Opening the Home tab's Settings modal and submitting it, as Slack would, in the test world.

``submitted`` turns a modal's input blocks into ``view.state.values`` in the shape Slack sends
for each element type (from its initial values, as a person who changes nothing would submit
it), then applies ``changes`` ({block_id: the element's state fields}).
"""

from __future__ import annotations

import json
import time
from typing import Any
from urllib.parse import urlencode

from bot.sandbox.slack_events import home_action
from bot.sandbox.slack_requests import action_base, http_event, view_submission
from bot.slack.settings_form import OPEN_SETTINGS, SETTINGS_MODAL

from .bot_kit import SECRET, World

STATE_OF = {
    "multi_users_select": lambda e: {"selected_users": list(e.get("initial_users", []))},
    "multi_static_select": lambda e: {"selected_options": list(e.get("initial_options", []))},
    "number_input": lambda e: {"value": e.get("initial_value")},
    "checkboxes": lambda e: {"selected_options": list(e.get("initial_options", []))},
    "static_select": lambda e: {"selected_option": e.get("initial_option")},
    "timepicker": lambda e: {"selected_time": e.get("initial_time")},
    "conversations_select": lambda e: {"selected_conversation": e.get("initial_conversation")},
    "plain_text_input": lambda e: {"value": e.get("initial_value")},
}


def open_settings(world: World, user: str) -> dict[str, Any] | None:
    """Press Settings on ``user``'s Home tab: the modal the lazy run left open for them."""
    trigger = world.slack.issue_trigger(user)
    ack = world.send(
        home_action(SECRET, action_id=OPEN_SETTINGS, value="open", user_id=user, trigger_id=trigger)
    )
    assert ack["statusCode"] == 200 and not ack.get("body"), ack
    world.run_lazies()
    return world.slack.open_view(user)


def submitted(view: dict[str, Any], **changes: dict[str, Any]) -> dict[str, dict[str, Any]]:
    values: dict[str, dict[str, Any]] = {}
    for block in view["blocks"]:
        if block["type"] != "input":
            continue
        element = block["element"]
        state = {"type": element["type"], **STATE_OF[element["type"]](element)}
        state.update(changes.get(block["block_id"], {}))
        values[block["block_id"]] = {element["action_id"]: state}
    return values


def save(
    world: World,
    user: str,
    view: dict[str, Any],
    metadata: str | None = None,
    **changes: dict[str, Any],
) -> dict[str, Any]:
    """Submit ``view`` with ``changes``; the ack's answer ({} when it closes the modal)."""
    ack = world.send(
        view_submission(
            SECRET,
            callback_id=SETTINGS_MODAL,
            private_metadata=view.get("private_metadata", "") if metadata is None else metadata,
            values=submitted(view, **changes),
            user_id=user,
        )
    )
    assert ack["statusCode"] == 200, ack
    answer: dict[str, Any] = json.loads(ack["body"]) if ack.get("body") else {}
    world.run_lazies()
    return answer


def users(*ids: str) -> dict[str, Any]:
    return {"selected_users": list(ids)}


def number(n: int | str) -> dict[str, Any]:
    return {"value": str(n)}


def option(value: str) -> dict[str, Any]:
    return {"selected_option": {"text": {"type": "plain_text", "text": value}, "value": value}}


def text(value: str) -> dict[str, Any]:
    return {"value": value}


def settle(world: World, *approvers: str, needed: int) -> None:
    """Carol (an admin) saves ``approvers`` and ``needed`` approvals in the Settings modal."""
    form = open_settings(world, "U0CAROL")
    assert form is not None
    answer = save(world, "U0CAROL", form, approvers=users(*approvers), approvals=number(needed))
    assert answer == {}, answer


def zip_entered(
    world: World, user: str, view: dict[str, Any], zip_code: str, **changes: dict[str, Any]
) -> dict[str, Any] | None:
    """Type ``zip_code`` into the open Settings modal's ZIP field and press Enter (with
    ``changes`` typed elsewhere first), acked empty; the modal after the lazy run."""
    ack = world.send(zip_event(user, view, zip_code, **changes))
    assert ack["statusCode"] == 200 and not ack.get("body"), ack
    world.run_lazies()
    return world.slack.open_view(user)


def zip_event(
    user: str, view: dict[str, Any], zip_code: str, **changes: dict[str, Any]
) -> dict[str, Any]:
    """The ``block_actions`` Slack sends for Enter in an input block with ``dispatch_action``:
    its container the view, and the view with its ``hash``, metadata and whole state (as
    block_actions carry it since 2020)."""
    values = submitted(view, **changes)
    (zip_input,) = values["store_zip"].items()
    values["store_zip"] = {zip_input[0]: {"type": "plain_text_input", "value": zip_code}}
    payload = {
        **action_base("T0TEAM", user),
        "container": {"type": "view", "view_id": view["id"]},
        "view": {**view, "state": {"values": values}},
        "actions": [
            {
                "type": "plain_text_input",
                "block_id": "store_zip",
                "action_id": zip_input[0],
                "value": zip_code,
                "action_ts": f"{time.time():.6f}",
            }
        ],
    }
    body = urlencode({"payload": json.dumps(payload, separators=(",", ":"))})
    return http_event(SECRET, body)
