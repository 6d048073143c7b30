"""What Slack sends the bot, as Lambda receives it: signed requests in API Gateway v2 events.

Slash commands, ``block_actions`` and ``view_submission`` payloads, built as Slack and API
Gateway build them (what AWS itself sends the function: ``bot.sandbox.aws_events``). The tests,
``bench/`` and the sandbox page all build their requests here. Each builder form-encodes the
body as Slack does, signs it as Slack does (``v0:{timestamp}:{body}``, HMAC-SHA256 with the
signing secret, via ``SignatureVerifier.generate_signature``), and wraps it like API Gateway v2:
lowercase header
names, ``requestContext.http.method``, and the form body base64-encoded with
``isBase64Encoded: true`` (pass ``base64_encoded=False`` for a plain body).

``response_url``s point at ``response_url_base`` (give it ``FakeSlack.hooks_url``, whose fake
understands the path), else at a loopback port where nothing listens, so a stray ``respond()``
fails fast and never reaches the internet. Bolt's Lambda handler mutates the event it is given
(it adds ``headers["cookie"]``), so build a fresh event for every call.

Longer than most modules (about 330 lines): it is one table of Slack's payload shapes, read
side by side, and some twenty test modules import its builders by this name.

(Over 300 lines: one builder per kind of request Slack sends, each signed the same way; they are
read one at a time, never together.)
"""

from __future__ import annotations

import base64
import copy
import json
import secrets
import time
from datetime import UTC, datetime
from typing import Any
from urllib.parse import urlencode

from slack_sdk.signature import SignatureVerifier

ACCOUNT_ID = "123456789012"
REGION = "us-east-1"
APP_ID = "A0WEEKLY"
TEAM_DOMAIN = "weekly-shop"
CHANNEL_NAME = "shop"
VERIFICATION_TOKEN = "fake-verification-token"  # Slack's deprecated per-app token, sent anyway
NOWHERE = "http://127.0.0.1:9"  # the discard port: connection refused on loopback
SLACKBOT_UA = "Slackbot 1.0 (+https://api.slack.com/robots)"


def new_trigger_id() -> str:
    """A fresh trigger_id shaped like Slack's (``digits.digits.hex``)."""
    return f"{secrets.randbelow(10**13)}.{secrets.randbelow(10**12)}.{secrets.token_hex(16)}"


def response_url(
    base: str | None, kind: str, team_id: str, channel_id: str, user_id: str, ts: str | None
) -> str:
    """``{base}/{kind}/{team}/{channel}/{user}/{ts or -}/{issued}/{nonce}``; FakeSlack parses
    it, and refuses the URL after 5 uses or 30 minutes from ``issued``, as Slack does."""
    issued = int(time.time())
    path = f"{kind}/{team_id}/{channel_id}/{user_id}/{ts or '-'}/{issued}/{secrets.token_hex(12)}"
    return f"{(base or NOWHERE).rstrip('/')}/{path}"


def http_event(
    secret: str,
    body: str,
    *,
    timestamp: int | None = None,
    retry_num: int | None = None,
    retry_reason: str = "http_timeout",
    base64_encoded: bool = True,
    content_type: str = "application/x-www-form-urlencoded",
) -> dict[str, Any]:
    """A signed ``POST /slack/events`` carrying ``body`` (a form, or JSON for the Events API),
    as API Gateway v2 sends it."""
    ts = str(int(time.time()) if timestamp is None else timestamp)
    signature = SignatureVerifier(secret).generate_signature(timestamp=ts, body=body)
    now = datetime.now(UTC)
    headers = {
        "accept": "application/json,*/*",
        "accept-encoding": "gzip,deflate",
        "content-length": str(len(body.encode())),
        "content-type": content_type,
        "host": f"fakeapi123.execute-api.{REGION}.amazonaws.com",
        "user-agent": SLACKBOT_UA,
        "x-amzn-trace-id": f"Root=1-{int(now.timestamp()):08x}-{secrets.token_hex(12)}",
        "x-forwarded-for": "3.80.1.1",
        "x-forwarded-port": "443",
        "x-forwarded-proto": "https",
        "x-slack-request-timestamp": ts,
        "x-slack-signature": signature,
    }
    if retry_num is not None:
        headers.update({"x-slack-retry-num": str(retry_num), "x-slack-retry-reason": retry_reason})
    return {
        "version": "2.0",
        "routeKey": "POST /slack/events",
        "rawPath": "/slack/events",
        "rawQueryString": "",
        "headers": headers,
        "requestContext": {
            "accountId": ACCOUNT_ID,
            "apiId": "fakeapi123",
            "domainName": headers["host"],
            "domainPrefix": "fakeapi123",
            "http": {
                "method": "POST",
                "path": "/slack/events",
                "protocol": "HTTP/1.1",
                "sourceIp": headers["x-forwarded-for"],
                "userAgent": SLACKBOT_UA,
            },
            "requestId": secrets.token_urlsafe(12),
            "routeKey": "POST /slack/events",
            "stage": "$default",
            "time": now.strftime("%d/%b/%Y:%H:%M:%S +0000"),
            "timeEpoch": int(now.timestamp() * 1000),
        },
        "body": base64.b64encode(body.encode()).decode() if base64_encoded else body,
        "isBase64Encoded": base64_encoded,
    }


def decoded_body(event: dict[str, Any]) -> str:
    body = str(event.get("body") or "")
    return base64.b64decode(body).decode() if event.get("isBase64Encoded") else body


def with_bad_signature(event: dict[str, Any]) -> dict[str, Any]:
    """A copy of ``event`` whose signature no longer matches its body."""
    bad = copy.deepcopy(event)
    sig = bad["headers"]["x-slack-signature"]
    bad["headers"]["x-slack-signature"] = sig[:-1] + ("0" if sig[-1] != "0" else "1")
    return bad


def _user(user_id: str, team_id: str) -> dict[str, str]:
    name = user_id.removeprefix("U0").lower()
    return {"id": user_id, "username": name, "name": name, "team_id": team_id}


def slash_command(
    secret: str,
    *,
    text: str,
    team_id: str = "T0TEAM",
    user_id: str = "U0ALICE",
    channel_id: str = "C0SHOP",
    trigger_id: str | None = None,
    command: str = "/shop",
    timestamp: int | None = None,
    retry_num: int | None = None,
    response_url_base: str | None = None,
    base64_encoded: bool = True,
    enterprise_id: str = "",
) -> dict[str, Any]:
    """``/shop`` typed in a channel (``enterprise_id``: in a workspace of an Enterprise Grid
    org, which Slack names as well)."""
    form = {
        "token": VERIFICATION_TOKEN,
        "team_id": team_id,
        "team_domain": TEAM_DOMAIN,
        "channel_id": channel_id,
        "channel_name": CHANNEL_NAME,
        "user_id": user_id,
        "user_name": _user(user_id, team_id)["name"],
        "command": command,
        "text": text,
        "api_app_id": APP_ID,
        "is_enterprise_install": "false",
        "response_url": response_url(
            response_url_base, "commands", team_id, channel_id, user_id, None
        ),
        "trigger_id": trigger_id or new_trigger_id(),
        **({"enterprise_id": enterprise_id, "enterprise_name": "Org"} if enterprise_id else {}),
    }
    kw: dict[str, Any] = {"timestamp": timestamp, "retry_num": retry_num}
    kw["base64_encoded"] = base64_encoded
    return http_event(secret, urlencode(form), **kw)


def action_base(team_id: str, user_id: str, trigger_id: str | None = None) -> dict[str, Any]:
    """What every ``block_actions`` payload starts with: who, where, the app, a trigger ID."""
    return {
        "type": "block_actions",
        "team": {"id": team_id, "domain": TEAM_DOMAIN},
        "user": _user(user_id, team_id),
        "api_app_id": APP_ID,
        "token": VERIFICATION_TOKEN,
        "trigger_id": trigger_id or new_trigger_id(),
        "enterprise": None,
        "is_enterprise_install": False,
    }


def _interaction(secret: str, payload: dict[str, Any], **kw: Any) -> dict[str, Any]:
    body = urlencode({"payload": json.dumps(payload, separators=(",", ":"))})
    return http_event(secret, body, **kw)


def block_action(
    secret: str,
    *,
    action_id: str,
    value: str,
    team_id: str = "T0TEAM",
    user_id: str = "U0BOB",
    channel_id: str = "C0SHOP",
    message_ts: str = "1700000000.000100",
    trigger_id: str | None = None,
    response_url_base: str | None = None,
    timestamp: int | None = None,
    block_id: str = "actions",
    message: dict[str, Any] | None = None,
    is_ephemeral: bool = False,
    base64_encoded: bool = True,
    thread_ts: str | None = None,
    action_type: str = "button",
) -> dict[str, Any]:
    """A button click on message ``message_ts`` (pass ``message=`` to carry its real content;
    ``thread_ts`` in a thread, named in the container too; ``action_type="feedback_buttons"``
    with the clicked button's ``value``: a feedback click, as bolt-js FeedbackButtonsAction)."""
    now = f"{time.time():.6f}"
    payload: dict[str, Any] = {
        **action_base(team_id, user_id, trigger_id),
        "container": {
            "type": "message",
            "message_ts": message_ts,
            "channel_id": channel_id,
            "is_ephemeral": is_ephemeral,
            **({"thread_ts": thread_ts} if thread_ts else {}),
        },
        "channel": {"id": channel_id, "name": CHANNEL_NAME},
        "message": message or {"type": "message", "ts": message_ts, "text": "", "blocks": []},
        "state": {"values": {}},
        "response_url": response_url(
            response_url_base, "actions", team_id, channel_id, user_id, message_ts
        ),
        "actions": [
            {
                "action_id": action_id,
                "block_id": block_id,
                "text": {"type": "plain_text", "text": action_id, "emoji": True},
                "value": value,
                "type": action_type,
                "action_ts": now,
            }
        ],
    }
    return _interaction(secret, payload, timestamp=timestamp, base64_encoded=base64_encoded)


def _state(values: dict[str, dict[str, Any]]) -> dict[str, dict[str, Any]]:
    """``{block_id: {action_id: value}}`` as Slack's ``state.values``: a plain string becomes a
    ``plain_text_input``'s value; a dict is passed through as Slack's shape."""
    return {
        block: {
            action: v if isinstance(v, dict) else {"type": "plain_text_input", "value": v}
            for action, v in actions.items()
        }
        for block, actions in values.items()
    }


def view_action(
    secret: str,
    *,
    view: dict[str, Any],
    values: dict[str, dict[str, Any]],
    block_id: str,
    action: dict[str, Any],
    team_id: str = "T0TEAM",
    user_id: str = "U0BOB",
    trigger_id: str | None = None,
) -> dict[str, Any]:
    """An element of an open modal dispatched (Enter in a ``plain_text_input`` whose input block
    has ``dispatch_action``, a select chosen): the ``block_actions`` payload Slack sends, with
    the view as it is and its full state so far (Slack's 2020-09 "full state" change).
    ``action`` is the element's part: ``type``, ``action_id`` and its value's field."""
    payload: dict[str, Any] = {
        **action_base(team_id, user_id, trigger_id),
        "container": {"type": "view", "view_id": view["id"]},
        "view": {**view, "state": {"values": _state(values)}},
        "actions": [{**action, "block_id": block_id, "action_ts": f"{time.time():.6f}"}],
    }
    return _interaction(secret, payload)


def view_submission(
    secret: str,
    *,
    callback_id: str,
    private_metadata: str,
    values: dict[str, dict[str, Any]],
    team_id: str = "T0TEAM",
    user_id: str = "U0BOB",
    timestamp: int | None = None,
    view_id: str | None = None,
    base64_encoded: bool = True,
) -> dict[str, Any]:
    """A modal submitted. ``values`` is ``{block_id: {action_id: value}}``: a plain string becomes
    ``{"type": "plain_text_input", "value": ...}``; a dict is passed through as Slack's shape."""
    state = _state(values)
    view_id = view_id or f"V{secrets.token_hex(5).upper()}"
    payload: dict[str, Any] = {
        "type": "view_submission",
        "team": {"id": team_id, "domain": TEAM_DOMAIN},
        "user": _user(user_id, team_id),
        "api_app_id": APP_ID,
        "token": VERIFICATION_TOKEN,
        "trigger_id": new_trigger_id(),
        "view": {
            "id": view_id,
            "team_id": team_id,
            "type": "modal",
            "callback_id": callback_id,
            "private_metadata": private_metadata,
            "blocks": [],
            "state": {"values": state},
            "hash": f"{int(time.time())}.{secrets.token_hex(4)}",
            "title": {"type": "plain_text", "text": "Weekly shop"},
            "clear_on_close": False,
            "notify_on_close": False,
            "root_view_id": view_id,
            "previous_view_id": None,
            "app_id": APP_ID,
            "external_id": "",
            "app_installed_team_id": team_id,
            "bot_id": "BBOT",
        },
        "response_urls": [],
        "enterprise": None,
        "is_enterprise_install": False,
    }
    return _interaction(secret, payload, timestamp=timestamp, base64_encoded=base64_encoded)
