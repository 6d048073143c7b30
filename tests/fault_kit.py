"""Helpers for the bad-input and service-fault tests: what to watch, and faults on the wire.

``S3Faults`` answers chosen S3 requests with an error *from the wire*: a ``before-send`` handler
on the client returns the HTTP response, so botocore parses it, and its standard retry mode retries
it, exactly as it would a real 503. botocore still calls every ``before-send`` handler (moto's
included) and keeps the first response, so a fault is one of two kinds:

- refused (the default): S3 did nothing and said so; moto is told to skip the request
  (:func:`moto_skips_refused`);
- applied: S3 did the write but its answer was an error (a lost or late response), so a retry
  of a conditional write then meets its own first attempt.
"""

from __future__ import annotations

import io
import json
import logging
import secrets
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import unquote

from botocore.awsrequest import AWSResponse

from bot.sandbox.moto_server import client_of
from tests.bot_kit import CHANNEL, World
from workflow.persistence.s3_store import S3CheckpointStore
from workflow.shop.records import SHOP_PREFIX, SHOP_RECORDS

TENANT = "T0TEAM"
REFUSED = "x-test-fault-refused"  # a header our before-send handler puts on a refused request


def s3_of(world: World) -> Any:
    """An S3 client of the world's moto *server* (the ``served`` fixture), for checks."""
    return client_of(world.env)


def lock_keys(s3: Any, bucket: str) -> list[str]:
    listed = s3.list_objects_v2(Bucket=bucket).get("Contents", [])
    return [o["Key"] for o in listed if o["Key"].endswith("/lock")]


def session_of(world: World, message: dict[str, Any]) -> str:
    return str(json.loads(world.buttons(message)["approve_basket"])["s"])


def thread_texts(world: World, message: dict[str, Any]) -> list[str]:
    return [m["text"] for m in world.slack.thread(CHANNEL, message["ts"])]


def ephemeral_texts(world: World, user: str | None = None) -> list[str]:
    return [e["text"] for e in world.slack.ephemerals(user)]


def assert_chain_intact(s3: Any, bucket: str, session: str, tenant: str = TENANT) -> None:
    """Sequences 0..n-1 with no gap, each checkpoint's parent the one before it."""
    infos = S3CheckpointStore(bucket, SHOP_PREFIX, s3_client=s3, codec=SHOP_RECORDS).list(
        tenant, session
    )
    assert [i.sequence for i in infos] == list(range(len(infos)))
    parents = [i.parent_checkpoint_id for i in infos]
    assert parents == [None] + [i.checkpoint_id for i in infos[:-1]]


class _Failures(logging.Handler):
    """Log records saying a listener raised: Bolt catches those and only logs them."""

    def __init__(self) -> None:
        super().__init__(logging.DEBUG)
        self.seen: list[str] = []

    def emit(self, record: logging.LogRecord) -> None:
        message = record.getMessage()
        if message.startswith("Failed to run") or record.exc_info:
            self.seen.append(f"{record.name}: {message}")


@contextmanager
def listener_failures() -> Iterator[list[str]]:
    """Collect, while the block runs, every exception a Bolt listener (lazy or not) swallowed.

    Attach after ``world.boot()``: a cold start replaces the root logger's handlers.
    """
    handler = _Failures()
    root = logging.getLogger()
    root.addHandler(handler)
    try:
        yield handler.seen
    finally:
        root.removeHandler(handler)


# ---------------------------------------------------------------- S3 errors from the wire


class _Raw(io.BytesIO):
    def stream(self, **_: Any) -> Iterator[bytes]:
        yield self.getvalue()


@dataclass
class Fault:
    """Answer ``times`` requests that ``matches`` with HTTP ``status`` and S3 error ``code``."""

    matches: Callable[[str, Any], bool]
    status: int
    code: str
    times: int
    applied: bool = False
    hits: int = 0


@dataclass
class S3Faults:
    faults: list[Fault] = field(default_factory=list)
    sent: list[str] = field(default_factory=list)  # every operation that reached the handler

    def install(self, client: Any) -> S3Faults:
        client.meta.events.register_first("before-send.s3", self._before_send)
        return self

    def uninstall(self, client: Any) -> None:
        client.meta.events.unregister("before-send.s3", self._before_send)

    def add(
        self,
        matches: Callable[[str, Any], bool],
        status: int,
        code: str,
        times: int = 1,
        *,
        applied: bool = False,
    ) -> Fault:
        fault = Fault(matches, status, code, times, applied)
        self.faults.append(fault)
        return fault

    def clear(self) -> None:
        self.faults.clear()

    def _before_send(self, request: Any, event_name: str, **_: Any) -> AWSResponse | None:
        operation = event_name.rsplit(".", 1)[-1]
        self.sent.append(operation)
        for fault in self.faults:
            if fault.hits < fault.times and fault.matches(operation, request):
                fault.hits += 1
                if not fault.applied:
                    request.headers[REFUSED] = "1"
                return _error_response(request.url, fault.status, fault.code)
        return None


def moto_skips_refused(monkeypatch: Any) -> None:
    """Make mock_aws leave alone every request a refused fault answered."""
    from moto.core.botocore_stubber import BotocoreStubber

    process = BotocoreStubber.process_request

    def process_unless_refused(self: Any, request: Any) -> Any:
        return None if request.headers.get(REFUSED) else process(self, request)

    monkeypatch.setattr(BotocoreStubber, "process_request", process_unless_refused)


def _error_response(url: str, status: int, code: str) -> AWSResponse:
    request_id = secrets.token_hex(8).upper()
    body = (
        '<?xml version="1.0" encoding="UTF-8"?>\n'
        f"<Error><Code>{code}</Code><Message>injected {code}</Message>"
        f"<RequestId>{request_id}</RequestId></Error>"
    ).encode()
    headers = {"x-amz-request-id": request_id, "content-type": "application/xml"}
    return AWSResponse(url, status, headers, _Raw(body))


def op(
    name: str, key_part: str = "", *, conditional: str | None = None
) -> Callable[[str, Any], bool]:
    """Match S3 operation ``name`` on a key containing ``key_part`` (and, for ``conditional``,
    a request carrying that header: ``If-None-Match`` or ``If-Match``)."""

    def matches(operation: str, request: Any) -> bool:
        if operation != name or key_part not in unquote(request.url):
            return False
        return conditional is None or conditional in request.headers

    return matches
