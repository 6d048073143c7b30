"""What Slack sends, built and signed as Slack does, wrapped as API Gateway delivers it.

The sandbox page's clicks and commands become exactly these requests, so the bot runs the same
path as in production: Bolt verifies the signature, acks, and invokes its lazy listeners.
"""

from __future__ import annotations

import base64
import json
import time
import uuid
from dataclasses import dataclass
from typing import Any
from urllib.parse import urlencode

from slack_sdk.signature import SignatureVerifier

TEAM = {"id": "T0SANDBOX", "domain": "sandbox"}
APP_ID = "A0SANDBOX"
FUNCTION_NAME = "weekly-shop-sandbox-slack"
FUNCTION_ARN = f"arn:aws:lambda:us-east-1:000000000000:function:{FUNCTION_NAME}"


def api_gateway_event(secret: str, body: str) -> dict[str, Any]:
    """A signed form POST to /slack/events, as API Gateway HTTP API (payload 2.0) passes it on."""
    timestamp = str(int(time.time()))
    signature = SignatureVerifier(secret).generate_signature(timestamp=timestamp, body=body)
    return {
        "version": "2.0",
        "routeKey": "POST /slack/events",
        "rawPath": "/slack/events",
        "rawQueryString": "",
        "headers": {
            "content-type": "application/x-www-form-urlencoded",
            "host": "sandbox.execute-api.localhost",
            "user-agent": "Slackbot 1.0 (+https://api.slack.com/robots)",
            "x-slack-request-timestamp": timestamp,
            "x-slack-signature": signature,
        },
        "requestContext": {
            "http": {"method": "POST", "path": "/slack/events", "protocol": "HTTP/1.1"},
            "requestId": uuid.uuid4().hex,
            "routeKey": "POST /slack/events",
            "stage": "$default",
            "timeEpoch": int(time.time() * 1000),
        },
        "body": base64.b64encode(body.encode()).decode(),
        "isBase64Encoded": True,
    }


def trigger_id() -> str:
    return f"{int(time.time())}.{uuid.uuid4().int % 10**12}.{uuid.uuid4().hex[:16]}"


def _user(user_id: str, name: str) -> dict[str, str]:
    return {"id": user_id, "username": name.lower(), "name": name.lower(), "team_id": TEAM["id"]}


def slash_command(
    secret: str, *, text: str, user_id: str, user_name: str, channel: str, trigger: str
) -> dict[str, Any]:
    form = {
        "token": "sandbox-verification-token",
        "team_id": TEAM["id"],
        "team_domain": TEAM["domain"],
        "channel_id": channel,
        "channel_name": "weekly-shop",
        "user_id": user_id,
        "user_name": user_name.lower(),
        "command": "/shop",
        "text": text,
        "api_app_id": APP_ID,
        "response_url": "http://127.0.0.1:9/hooks/unused",
        "trigger_id": trigger,
    }
    return api_gateway_event(secret, urlencode(form))


def _interaction(secret: str, payload: dict[str, Any]) -> dict[str, Any]:
    return api_gateway_event(secret, urlencode({"payload": json.dumps(payload)}))


@dataclass(frozen=True)
class Clicked:
    user_id: str
    user_name: str
    channel: str
    message: dict[str, Any]
    action: dict[str, Any]
    block_id: str


def block_actions(secret: str, clicked: Clicked, trigger: str) -> dict[str, Any]:
    action = clicked.action
    payload = {
        "type": "block_actions",
        "team": TEAM,
        "user": _user(clicked.user_id, clicked.user_name),
        "api_app_id": APP_ID,
        "token": "sandbox-verification-token",
        "container": {
            "type": "message",
            "message_ts": clicked.message["ts"],
            "channel_id": clicked.channel,
            "is_ephemeral": False,
        },
        "trigger_id": trigger,
        "channel": {"id": clicked.channel, "name": "weekly-shop"},
        "message": clicked.message,
        "response_url": "http://127.0.0.1:9/hooks/unused",
        "actions": [
            {
                "action_id": action.get("action_id"),
                "block_id": clicked.block_id,
                "value": action.get("value"),
                "type": "button",
                "text": action.get("text"),
                "action_ts": f"{time.time():.6f}",
            }
        ],
    }
    return _interaction(secret, payload)


def view_submission(
    secret: str, *, user_id: str, user_name: str, view: dict[str, Any], values: dict[str, Any]
) -> dict[str, Any]:
    state = {
        block: {
            action: {"type": "plain_text_input", "value": text} for action, text in fields.items()
        }
        for block, fields in values.items()
    }
    payload = {
        "type": "view_submission",
        "team": TEAM,
        "user": _user(user_id, user_name),
        "api_app_id": APP_ID,
        "token": "sandbox-verification-token",
        "trigger_id": trigger_id(),
        "view": {**view, "state": {"values": state}},
    }
    return _interaction(secret, payload)


@dataclass(frozen=True)
class LambdaContext:
    aws_request_id: str
    function_name: str = FUNCTION_NAME
    invoked_function_arn: str = FUNCTION_ARN
    memory_limit_in_mb: int = 512

    def get_remaining_time_in_millis(self) -> int:
        return 60_000


def lambda_context() -> LambdaContext:
    return LambdaContext(aws_request_id=str(uuid.uuid4()))
