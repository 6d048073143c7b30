"""One Lambda invocation in this (fresh) process: ``python -m bot.sandbox.invoke < event``.

Reads the event (JSON) on standard input, runs ``bot.handler.handler`` once with a Lambda context,
and prints its response and whether the anthropic SDK and pydantic were imported, as one JSON
line. The environment (Slack, S3, Lambda and Anthropic endpoints, secrets) comes from the parent.
A cold start is exactly this: a new interpreter, the module imports, one event.
"""

from __future__ import annotations

import json
import sys
from typing import Any

# At module level, as Lambda's runtime imports a handler: imported from inside a function, a
# deeper stack makes CPython 3.11 map and unmap stack chunks while compiling urllib3's regexes
# (~30 ms no Lambda cold start pays).
from bot.handler import handler

from .aws_events import lambda_context


def invoke_once(event: dict[str, Any]) -> dict[str, Any]:
    response: dict[str, Any] = handler(event, lambda_context())
    return {
        "response": response,
        "anthropic_imported": "anthropic" in sys.modules,
        "pydantic_imported": "pydantic" in sys.modules,
    }


def main() -> None:
    print(json.dumps(invoke_once(json.load(sys.stdin))))


if __name__ == "__main__":
    main()
