"""What AWS itself sends the function, besides Slack's requests: the Lambda context object, an
EventBridge scheduled event, the record Lambda's on-failure destination writes for an
asynchronous invocation it gave up on, and the SQS batch that delivers such records.
"""

from __future__ import annotations

import hashlib
import json
import secrets
import time
import uuid
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any

from .slack_requests import ACCOUNT_ID, REGION


@dataclass
class LambdaContext:
    function_name: str
    invoked_function_arn: str
    aws_request_id: str = field(default_factory=lambda: str(uuid.uuid4()))
    function_version: str = "$LATEST"
    memory_limit_in_mb: int = 512
    timeout_s: float = 30.0
    _started: float = field(default_factory=time.monotonic)

    def get_remaining_time_in_millis(self) -> int:
        return max(0, int((self.timeout_s - (time.monotonic() - self._started)) * 1000))


def lambda_context(function_name: str = "weekly-shop-test-slack") -> LambdaContext:
    arn = f"arn:aws:lambda:{REGION}:{ACCOUNT_ID}:function:{function_name}"
    return LambdaContext(function_name=function_name, invoked_function_arn=arn)


def scheduled_event(
    rule_name: str = "weekly-shop-test-weekly", at: datetime | None = None
) -> dict[str, Any]:
    """An EventBridge scheduled-rule event, as AWS delivers it."""
    return {
        "version": "0",
        "id": str(uuid.uuid4()),
        "detail-type": "Scheduled Event",
        "source": "aws.events",
        "account": ACCOUNT_ID,
        "time": (at or datetime.now(UTC)).strftime("%Y-%m-%dT%H:%M:%SZ"),
        "region": REGION,
        "resources": [f"arn:aws:events:{REGION}:{ACCOUNT_ID}:rule/{rule_name}"],
        "detail": {},
    }


def lost_run_record(
    payload: dict[str, Any],
    *,
    condition: str = "RetriesExhausted",
    request_id: str | None = None,
    function_name: str = "weekly-shop-test-slack",
) -> dict[str, Any]:
    """What Lambda's on-failure destination writes for an async invocation it gave up on
    ("Capturing records of Lambda asynchronous invocations": the original event in
    ``requestPayload``, the failure in ``requestContext`` and ``responseContext``)."""
    arn = f"arn:aws:lambda:{REGION}:{ACCOUNT_ID}:function:{function_name}"
    return {
        "version": "1.0",
        "timestamp": datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%S.%f")[:-3] + "Z",
        "requestContext": {
            "requestId": request_id or str(uuid.uuid4()),
            "functionArn": f"{arn}:$LATEST",
            "condition": condition,
            "approximateInvokeCount": 3 if condition == "RetriesExhausted" else 1,
        },
        "requestPayload": payload,
        "responseContext": {
            "statusCode": 200,
            "executedVersion": "$LATEST",
            "functionError": "Unhandled",
        },
        "responsePayload": {"errorType": "Runtime.ExitError", "errorMessage": "exit status 1"},
    }


def sqs_event(*bodies: dict[str, Any], queue: str = "weekly-shop-test-lost-lazy-runs") -> Any:
    """An SQS batch as the event source mapping delivers it to the function."""
    records = []
    for body in bodies:
        text = json.dumps(body)
        records.append(
            {
                "messageId": str(uuid.uuid4()),
                "receiptHandle": secrets.token_urlsafe(32),
                "body": text,
                "attributes": {
                    "ApproximateReceiveCount": "1",
                    "SentTimestamp": str(int(time.time() * 1000)),
                    "SenderId": "AROAEXAMPLE:weekly-shop-test-slack",
                    "ApproximateFirstReceiveTimestamp": str(int(time.time() * 1000)),
                },
                "messageAttributes": {},
                "md5OfBody": hashlib.md5(text.encode()).hexdigest(),  # noqa: S324 - as SQS does
                "eventSource": "aws:sqs",
                "eventSourceARN": f"arn:aws:sqs:{REGION}:{ACCOUNT_ID}:{queue}",
                "awsRegion": REGION,
            }
        )
    return {"Records": records}
