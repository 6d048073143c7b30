"""Lambda's asynchronous invocation, played: what happens to an ``InvocationType="Event"``.

docs.aws.amazon.com, "How Lambda handles errors and retries with asynchronous invocation": an
invocation whose function *returns* is a success, whatever it returned (a ``{"statusCode": 500}``
too); one that raises (or whose runtime crashes or times out) is a function error, retried up to
``MaximumRetryAttempts`` times (serverless.yml: 2), about one minute and then about two more
minutes later. After the last failed attempt the on-failure destination gets an invocation record
(``aws_events.lost_run_record``): here, the lost-runs queue, which this function consumes as an SQS
batch (``bot.steps.lost``). The tests, the sandbox and ``bench/`` all run lazy self-invocations
through :func:`invoke_async`, so none of them can count a swallowed failure as done.
"""

from __future__ import annotations

import logging
import uuid
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from .aws_events import lost_run_record, sqs_event

log = logging.getLogger(__name__)

MAX_RETRY_ATTEMPTS = 2  # serverless.yml: maximumRetryAttempts


@dataclass
class AsyncRun:
    """How one asynchronous invocation went: each attempt's error type ("" for the one that
    returned), its response if one returned, and the lost-runs queue's answer if none did."""

    errors: list[str] = field(default_factory=list)
    response: dict[str, Any] | None = None
    lost: dict[str, Any] | None = None

    @property
    def attempts(self) -> int:
        return len(self.errors)

    @property
    def retried(self) -> bool:
        return self.attempts > 1


def invoke_async(
    invoke: Callable[[dict[str, Any]], dict[str, Any]],
    payload: dict[str, Any],
    *,
    retries: int = MAX_RETRY_ATTEMPTS,
    between: Callable[[int], None] = lambda attempt: None,
) -> AsyncRun:
    """Run ``payload`` through ``invoke`` (one invocation of the function, a fresh copy of the
    event each time) as Lambda runs an async invocation: again while it raises, at most
    ``retries`` more times (``between(n)`` before retry ``n``: the sandbox waits there), then
    the invocation record to the lost-runs queue, delivered by ``invoke`` as an SQS batch."""
    import json

    run = AsyncRun()
    request_id = str(uuid.uuid4())  # one per async invocation, the same in its retries
    for attempt in range(retries + 1):
        if attempt:
            between(attempt)
        try:
            run.response = invoke(json.loads(json.dumps(payload)))
        except Exception as exc:  # noqa: BLE001 - a function error, as Lambda sees it
            log.info("async invocation attempt %d raised %s", attempt + 1, type(exc).__name__)
            run.errors.append(type(exc).__name__)
            continue
        run.errors.append("")
        return run
    record = lost_run_record(payload, request_id=request_id)
    record["requestContext"]["approximateInvokeCount"] = run.attempts
    run.lost = invoke(sqs_event(record))
    return run
