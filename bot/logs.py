"""JSON log lines with the fields an on-call person filters by.

Every line has its own time (ISO 8601, UTC, milliseconds: ``2026-12-05T04:10:00.123Z``), level,
message, logger, and whatever of tenant, session, request (the workflow's request ID) and
lambda_request_id is known in the current context; the lines of a process's first invocation
carry ``"cold_start": true`` (:func:`mark_cold_start`, from ``bot.handler``). A line logged with
an exception (``log.exception``, ``exc_info=``) carries ``error`` (its type and message) and
``stack`` (the formatted traceback, chained causes included). Tokens and secrets never reach
a log line: we never pass them, and as a last resort :func:`redact` masks, in every line and
traceback, Slack and Anthropic tokens and what Bolt's own DEBUG lines would show of a request
(it logs whole events): the request signature, the OAuth ``code``, ``state`` and state cookie,
a client secret, an ``Authorization`` header, a ``response_url`` and the request body; and
every bytes literal (``b'…'``), which is how botocore at DEBUG shows a request's or an
answer's body (an SSM parameter's value among them).
"""

from __future__ import annotations

import contextvars
import json
import logging
import re
import time
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

_CONTEXT: contextvars.ContextVar[dict[str, str] | None] = contextvars.ContextVar(
    "log_context", default=None
)
_FIELDS = ("tenant", "session", "request", "lambda_request_id", "user")
_SECRET = re.compile(
    r"xox[abposre][.-][A-Za-z0-9.-]+|xapp-[A-Za-z0-9-]+|sk-ant-[A-Za-z0-9_-]+"
    r"|v0=[0-9a-f]{64}|Bearer\s+[^\s'\",]+|(?<=with code: )[^\s'\",]+"
)
_NAMES = (
    r"x-slack-signature|cookie|set-cookie|authorization|code|state|client_secret|token"
    r"|response_url|body|slack-app-oauth-state|trigger_id|rawQueryString|x-amz-security-token"
)
# 'name': 'value' / "name": "value", as a dict's repr or JSON shows it
_QUOTED = re.compile(rf"""(['"])({_NAMES})\1(\s*:\s*)(['"])((?:\\.|(?!\4).)*)\4""", re.I)
# name=value in a query string, a form body or a cookie
_ASSIGNED = re.compile(rf"(?<![A-Za-z0-9_-])({_NAMES})=([^&\s'\";]+)", re.I)
# b'…' / b"…": a bytes repr in a log line is a request's or an answer's body (botocore at DEBUG
# logs ``'body': b'{"Name": …, "Value": …}'`` and ``Response body:\nb'…'``, an SSM key's
# value among them): masked whole, whatever names it holds
_BYTES = re.compile(r"""(?<![A-Za-z0-9_])b(['"])(?:\\.|(?!\1).)*\1""", re.S)


_COLD: contextvars.ContextVar[bool] = contextvars.ContextVar("cold_start", default=False)


@contextmanager
def mark_cold_start(cold: bool) -> Iterator[None]:
    """Mark every line written inside the block ``"cold_start": true`` if ``cold``."""
    token = _COLD.set(cold)
    try:
        yield
    finally:
        _COLD.reset(token)


def redact(text: str) -> str:
    """``text`` with every secret it could carry masked (see the module docstring)."""
    text = _BYTES.sub(lambda m: f"b{m[1]}[redacted]{m[1]}", text)
    text = _QUOTED.sub(lambda m: f"{m[1]}{m[2]}{m[1]}{m[3]}{m[4]}[redacted]{m[4]}", text)
    text = _ASSIGNED.sub(lambda m: f"{m[1]}=[redacted]", text)
    return _SECRET.sub("[redacted]", text)


@contextmanager
def log_context(**fields: str | None) -> Iterator[None]:
    """Add fields to every log line written inside the block."""
    merged = {**(_CONTEXT.get() or {}), **{k: v for k, v in fields.items() if v}}
    token = _CONTEXT.set(merged)
    try:
        yield
    finally:
        _CONTEXT.reset(token)


def _utc(created: float) -> str:
    """``created`` (seconds since the epoch) as ISO 8601 UTC with milliseconds."""
    seconds = int(created)
    millis = int((created - seconds) * 1000)
    return time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(seconds)) + f".{millis:03d}Z"


class JsonFormatter(logging.Formatter):
    def format(self, record: logging.LogRecord) -> str:
        line: dict[str, Any] = {
            "time": _utc(record.created),
            "level": record.levelname,
            "message": redact(record.getMessage()),
            "logger": record.name,
        }
        line.update(_CONTEXT.get() or {})
        for field in _FIELDS:
            value = getattr(record, field, None)
            if value:
                line[field] = str(value)
        if record.exc_info and record.exc_info[0] is not None:
            error = f"{record.exc_info[0].__name__}: {record.exc_info[1]}"
            line["error"] = redact(error)
            line["stack"] = redact(self.formatException(record.exc_info))
        if _COLD.get():
            line["cold_start"] = True
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
