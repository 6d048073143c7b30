"""A local fake of the AWS Lambda Invoke API, for ``AWS_ENDPOINT_URL_LAMBDA``.

Bolt's lazy-listener runner re-invokes the function with
``boto3.client("lambda").invoke(FunctionName=<invoked ARN>, InvocationType="Event", ...)``.
``FakeLambda`` serves ``POST /2015-03-31/functions/{FunctionName}/invocations`` on 127.0.0.1,
records each invocation (the ARN arrives URL-encoded in the path) and answers like Lambda does:
202 with an empty body for ``Event``, 200 ``{}`` for ``RequestResponse``, 204 for ``DryRun``.
Tests then run the recorded payloads through the handler themselves (``take()``); the sandbox
gives an ``on_invoke`` callback instead, which runs each one as a new invocation at once.
"""

from __future__ import annotations

import json
import re
import threading
import time
import uuid
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler
from typing import Any
from urllib.parse import parse_qs, unquote, urlsplit

from .loopback import LoopbackServer, QuietHandler, refused

_PATH = re.compile(r"^/2015-03-31/functions/([^/]+)/invocations$")


@dataclass(frozen=True)
class Invocation:
    function_name: str  # as the caller gave it: a name, an ARN, or a partial ARN
    invocation_type: str  # Event | RequestResponse | DryRun
    payload: dict[str, Any]
    qualifier: str | None = None


class FakeLambda(LoopbackServer):
    def __init__(
        self,
        on_invoke: Callable[[Invocation], None] | None = None,
        *,
        access_key_id: str = "testing",
    ) -> None:
        """Only requests signed (SigV4) with ``access_key_id`` are taken, as Lambda takes only
        known credentials; the sandbox gives a per-run one to the bot alone."""
        self.on_invoke = on_invoke
        self.access_key_id = access_key_id
        self.invocations: list[Invocation] = []
        self.failed_attempts = 0
        self._cond = threading.Condition()
        self._failures: deque[tuple[int, str]] = deque()
        self._serve(_handler(self))
        self.url = self.root

    def take(self) -> list[Invocation]:
        """Remove and return every invocation recorded so far."""
        with self._cond:
            taken, self.invocations = self.invocations, []
            return taken

    def wait_for(self, n: int = 1, timeout: float = 5.0) -> list[Invocation]:
        """Wait until at least ``n`` invocations are recorded; return them (without taking)."""
        deadline = time.monotonic() + timeout
        with self._cond:
            while len(self.invocations) < n:
                left = deadline - time.monotonic()
                if left <= 0:
                    raise TimeoutError(f"{len(self.invocations)} invocations, wanted {n}")
                self._cond.wait(left)
            return list(self.invocations)

    def fail_next(
        self, status: int = 500, error_type: str = "ServiceException", times: int = 1
    ) -> None:
        """Answer the next ``times`` invocations with an AWS error (botocore's standard retry
        mode retries 500/502/503/504 and throttling, up to 3 attempts in all)."""
        with self._cond:
            self._failures.extend([(status, error_type)] * times)

    def _invoke(
        self, path: str, headers: dict[str, str], raw: bytes
    ) -> tuple[int, dict[str, str], bytes]:
        parts = urlsplit(path)
        match = _PATH.match(parts.path)
        request_id = {"x-amzn-RequestId": str(uuid.uuid4())}
        if match is None:
            return _error(404, "ResourceNotFoundException", f"no route {parts.path}", request_id)
        if f"Credential={self.access_key_id}/" not in headers.get("authorization", ""):
            message = "The security token included in the request is invalid."
            return _error(403, "UnrecognizedClientException", message, request_id)
        with self._cond:
            if self._failures:
                self.failed_attempts += 1
                return _error(*self._failures.popleft(), "injected failure", request_id)
            try:
                payload = json.loads(raw or b"{}")
            except ValueError:
                return _error(400, "InvalidRequestContentException", "bad JSON", request_id)
            kind = headers.get("x-amz-invocation-type", "RequestResponse")
            qualifier = parse_qs(parts.query).get("Qualifier", [None])[0]
            invocation = Invocation(unquote(match[1]), kind, payload, qualifier)
            if self.on_invoke is None:
                self.invocations.append(invocation)
                self._cond.notify_all()
        if self.on_invoke is not None:
            self.on_invoke(invocation)
        if kind == "Event":
            return 202, request_id, b""
        if kind == "DryRun":
            return 204, request_id, b""
        return 200, {**request_id, "X-Amz-Executed-Version": "$LATEST"}, b"{}"


def _error(
    status: int, error_type: str, message: str, headers: dict[str, str]
) -> tuple[int, dict[str, str], bytes]:
    body = json.dumps({"Type": "User" if status < 500 else "Service", "message": message})
    return status, {**headers, "x-amzn-ErrorType": error_type}, body.encode()


def _handler(fake: FakeLambda) -> type[BaseHTTPRequestHandler]:
    class Handler(QuietHandler):
        def do_POST(self) -> None:
            if refused(fake, self):
                return
            raw = self.rfile.read(int(self.headers.get("content-length") or 0))
            headers = {k.lower(): v for k, v in self.headers.items()}
            status, out_headers, body = fake._invoke(self.path, headers, raw)
            self.send_response(status)
            out_headers["content-type"] = "application/json"
            out_headers["content-length"] = str(len(body))
            for name, value in out_headers.items():
                self.send_header(name, value)
            self.end_headers()
            self.wfile.write(body)

    return Handler
