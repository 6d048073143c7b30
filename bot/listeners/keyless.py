"""A Settings modal's lazy run (its submission, or a ZIP search from it, whose ``block_actions``
carries the whole view's state), without the keys typed into it.

Bolt's Lambda lazy runner invokes the function again with the very event the ack answered
(``request.context["lambda_request"]``: ``LambdaLazyListenerRunner.start`` adds two headers and
``"method": "NONE"`` and sends it whole as the asynchronous invocation's payload). A submission
with an Instacart API key or a webhook signing secret typed in would carry it to that run, to
Lambda's async queue and, should the run fail every retry, to the lost-runs queue. So the ack
stores the keys (``bot.steps.settings``) and, before Bolt starts the lazy run, puts in the
context the same event with each key input emptied (as Slack sends an empty input:
``"value": null``), its body signed again with the app's signing secret and the request's own
timestamp: the lazy run checks the signature again (and its age, as before), and so does the
lost-runs queue (``bot.steps.lost``). The function holds that secret anyway; the signature says
only that Slack or this function wrote the body.

It is done where the payload is sent (``bot.listeners.lambda_adapter.LazyRunner.start``), and
it fails closed: a submission Bolt read as holding a key input (:func:`typed_keys`) whose event
cannot be read here as well (a body Bolt's lenient parser took and this strict one does not)
starts no lazy run at all, rather than one with the key in it.
"""

from __future__ import annotations

import base64
import json
from typing import Any
from urllib.parse import parse_qsl, urlencode

from slack_sdk.signature import SignatureVerifier

from bot.slack.order_form import KEY_BLOCKS

SIGNATURE = "x-slack-signature"
TIMESTAMP = "x-slack-request-timestamp"


def typed_keys(body: Any) -> bool:
    """Whether a request, as Bolt read it, is a view submitted with a key input in it."""
    view = body.get("view") if isinstance(body, dict) else None
    state = view.get("state") if isinstance(view, dict) else None
    values = state.get("values") if isinstance(state, dict) else None
    return isinstance(values, dict) and any(b in values for b in KEY_BLOCKS.values())


def without_keys(event: dict[str, Any], secret: str) -> dict[str, Any] | None:
    """``event`` (API Gateway's, payload 2.0) with the key inputs of its submission emptied and
    its body signed again; None when it carries no key input or cannot be read (it was read
    and verified already: None only for what no Settings submission is)."""
    raw = str(event.get("body") or "")
    try:
        body = base64.b64decode(raw).decode() if event.get("isBase64Encoded") else raw
        form = parse_qsl(body, keep_blank_values=True, strict_parsing=True)
        payload = json.loads(dict(form)["payload"])
        values = payload["view"]["state"]["values"]
    except (ValueError, KeyError, TypeError):
        return None
    if not isinstance(values, dict) or not any(b in values for b in KEY_BLOCKS.values()):
        return None
    for block in KEY_BLOCKS.values():
        inputs = values.get(block)
        if isinstance(inputs, dict):
            values[block] = {
                action: {**state, "value": None} if isinstance(state, dict) else None
                for action, state in inputs.items()
            }
    new_body = urlencode([(k, json.dumps(payload) if k == "payload" else v) for k, v in form])
    headers = {
        str(k): v
        for k, v in (event.get("headers") or {}).items()
        if str(k).lower() not in (SIGNATURE, "content-length")
    }
    timestamp = next(
        (str(v) for k, v in (event.get("headers") or {}).items() if str(k).lower() == TIMESTAMP),
        "",
    )
    headers[SIGNATURE] = SignatureVerifier(secret).generate_signature(
        timestamp=timestamp, body=new_body
    )
    return {**event, "headers": headers, "body": new_body, "isBase64Encoded": False}
