"""What Slack's Events API sends the bot, and what the Home tab's buttons send, signed and wrapped
as API Gateway delivers them (the builders of ``bot.sandbox.slack_requests``, for JSON bodies).

An Events API delivery is JSON (``content-type: application/json``), signed like every Slack
request; Slack retries one it thinks timed out with ``X-Slack-Retry-Num`` and the same
``event_id``. A button on a Home tab is a ``block_actions`` whose container is the view: it has
no channel and no message.
"""

from __future__ import annotations

import json
import secrets
import time
from typing import Any

from .slack_requests import (
    APP_ID,
    VERIFICATION_TOKEN,
    _interaction,
    action_base,
    http_event,
)


def _json_event(secret: str, payload: dict[str, Any], **kw: Any) -> dict[str, Any]:
    body = json.dumps(payload, separators=(",", ":"))
    return http_event(secret, body, content_type="application/json", **kw)


def url_verification(secret: str, challenge: str, **kw: Any) -> dict[str, Any]:
    """What Slack sends when the Events API request URL is saved: answer with the challenge."""
    payload = {"token": VERIFICATION_TOKEN, "challenge": challenge, "type": "url_verification"}
    return _json_event(secret, payload, **kw)


def event_callback(
    secret: str,
    event: dict[str, Any],
    *,
    team_id: str = "T0TEAM",
    event_id: str | None = None,
    event_time: int | None = None,
    **kw: Any,
) -> dict[str, Any]:
    """An Events API delivery of ``event`` (``retry_num=`` for Slack's retries of it, which
    carry the same ``event_id``)."""
    now = int(time.time()) if event_time is None else event_time
    payload = {
        "token": VERIFICATION_TOKEN,
        "team_id": team_id,
        "api_app_id": APP_ID,
        "event": {**event, "event_ts": f"{now}.000100"},
        "type": "event_callback",
        "event_id": event_id or f"Ev{secrets.token_hex(5).upper()}",
        "event_time": now,
        "authorizations": [
            {"team_id": team_id, "user_id": "U0BOT", "is_bot": True, "is_enterprise_install": False}
        ],
        "is_ext_shared_channel": False,
        "event_context": secrets.token_urlsafe(16),
    }
    return _json_event(secret, payload, **kw)


def app_home_opened(secret: str, user_id: str, *, tab: str = "home", **kw: Any) -> dict[str, Any]:
    """The person opened the app's Home tab (or its Messages tab: ``tab="messages"``)."""
    event = {"type": "app_home_opened", "user": user_id, "channel": "D0HOME", "tab": tab}
    return event_callback(secret, event, **kw)


def home_action(
    secret: str,
    *,
    action_id: str,
    value: str,
    view_id: str = "VH0000001",
    team_id: str = "T0TEAM",
    user_id: str = "U0BOB",
    trigger_id: str | None = None,
    **kw: Any,
) -> dict[str, Any]:
    """A button on the Home tab: its container is the view, there is no channel or message."""
    payload: dict[str, Any] = {
        **action_base(team_id, user_id, trigger_id),
        "container": {"type": "view", "view_id": view_id},
        "view": {"id": view_id, "team_id": team_id, "type": "home", "blocks": [], "hash": "1.x"},
        "actions": [
            {
                "action_id": action_id,
                "block_id": "home",
                "text": {"type": "plain_text", "text": action_id, "emoji": True},
                "value": value,
                "type": "button",
                "action_ts": f"{time.time():.6f}",
            }
        ],
    }
    return _interaction(secret, payload, **kw)
