"""Run one Lambda invocation in this (fresh) process: ``python -m tests.lambda_invoke < event``.

Prints the handler's response and whether the anthropic SDK was imported, as one JSON line. The
environment (Slack, S3, Lambda and Anthropic endpoints, secrets) comes from the parent test.
"""

from __future__ import annotations

import json
import sys

from tests.fakes.slack_events import lambda_context


def main() -> None:
    event = json.load(sys.stdin)
    from bot.handler import handler

    response = handler(event, lambda_context())
    print(json.dumps({"response": response, "anthropic_imported": "anthropic" in sys.modules}))


if __name__ == "__main__":
    main()
