"""JSON log lines with the fields an on-call person filters by.

Every line has level, message, logger, and whatever of tenant, session, request (the workflow's
request ID) and lambda_request_id is known in the current context. Tokens and secrets never reach
a log line: we never pass them, and Slack tokens found in a message are masked as a last resort.
"""

from __future__ import annotations

import contextvars
import json
import logging
import re
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

_CONTEXT: contextvars.ContextVar[dict[str, str] | None] = contextvars.ContextVar(
    "log_context", default=None
)
_FIELDS = ("tenant", "session", "request", "lambda_request_id", "user")
_SECRET = re.compile(r"xox[abposre][.-][A-Za-z0-9.-]+|xapp-[A-Za-z0-9-]+|sk-ant-[A-Za-z0-9_-]+")


@contextmanager
def log_context(**fields: str | None) -> Iterator[None]:
    """Add fields to every log line written inside the block."""
    merged = {**(_CONTEXT.get() or {}), **{k: v for k, v in fields.items() if v}}
    token = _CONTEXT.set(merged)
    try:
        yield
    finally:
        _CONTEXT.reset(token)


class JsonFormatter(logging.Formatter):
    def format(self, record: logging.LogRecord) -> str:
        line: dict[str, Any] = {
            "level": record.levelname,
            "message": _SECRET.sub("[redacted]", record.getMessage()),
            "logger": record.name,
        }
        line.update(_CONTEXT.get() or {})
        for field in _FIELDS:
            value = getattr(record, field, None)
            if value:
                line[field] = str(value)
        if record.exc_info and record.exc_info[0] is not None:
            error = f"{record.exc_info[0].__name__}: {record.exc_info[1]}"
            line["error"] = _SECRET.sub("[redacted]", error)
        return json.dumps(line, ensure_ascii=False)


def configure_logging(level: int = logging.INFO) -> None:
    """One JSON handler on the root logger (Lambda's own handler removed)."""
    root = logging.getLogger()
    for handler in list(root.handlers):
        root.removeHandler(handler)
    handler = logging.StreamHandler()
    handler.setFormatter(JsonFormatter())
    root.addHandler(handler)
    root.setLevel(level)
    for noisy in ("botocore", "urllib3", "httpx", "anthropic"):
        logging.getLogger(noisy).setLevel(logging.WARNING)
