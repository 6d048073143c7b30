"""moto's S3 and EventBridge Scheduler on 127.0.0.1 and a free port, answering only the bot: the
stand-in the sandbox, the tests that start other processes, and ``bench/`` share.

moto's own server (``ThreadedMotoServer``) answers anyone who finds its port: it checks no
signature, no ``Host`` and no ``Origin`` (it echoes any Origin in its CORS headers), and it serves
``/moto-api/``, whose ``POST /moto-api/reset`` erases every bucket. A web page open in the
developer's browser can scan localhost ports in seconds and then list, delete or plant keys with
no-cors requests. So :class:`MotoStandIn` serves the same moto application behind three checks,
like every other local stand-in (``loopback``): a browser's request (``Origin``,
``Sec-Fetch-Site: cross-site``, a foreign ``Host``) is refused; ``/moto-api/`` does not exist;
and every request must carry a SigV4 signature made with this run's access key and secret key
(``sigv4``), as S3 refuses an unsigned or wrongly signed request (403 ``AccessDenied``,
``InvalidAccessKeyId``, ``SignatureDoesNotMatch``).

Real S3 makes a conditional write atomic; moto 5.2.5 does not. ``S3Response.put_object`` and
``delete_object`` (moto/s3/responses.py) look the key up with ``backend.get_object``, compare it
with ``If-None-Match: *`` / ``If-Match: <etag>``, and only then call ``backend.put_object`` /
``delete_object``, with no lock between; and moto's server serves each request on its own
thread. So two lock takers in two processes could both be told 200, and a race test would test
moto, not the bot. The stand-in serves every request that writes (any method but GET, HEAD and
OPTIONS) under one lock, :data:`WRITES`, so that a check and its write have no other write
between them (an unconditional PUT too: it must not land between another's check and write):

    A: PUT …/lock If-None-Match:*   takes WRITES; moto checks: no key
    B: PUT …/lock If-None-Match:*   waits for WRITES
    A:                              moto writes; 200, ETag E1; releases WRITES
    B:                              takes WRITES; moto checks: E1 is there -> 412

Without it, B's check could fall between A's check and A's write, and both get 200 (what
``tests/test_sandbox_s3_races.py`` forces on plain moto); and moto could answer 500 to a PUT
whose new object a concurrent PUT of the same key had just disposed of. Reads stay concurrent.
The lock is one per process because moto's backends are: every stand-in in a process serves
the same buckets. Real S3 may also answer 409 ``ConditionalRequestConflict`` to a racing
conditional write; the stand-in never does (``tests/test_service_faults.py`` injects it).
"""

from __future__ import annotations

import io
import logging
import secrets
import threading
import time
from collections.abc import Callable, Iterable, Iterator
from contextlib import contextmanager
from typing import Any
from xml.sax.saxutils import escape

import boto3

from .loopback import LoopbackServer
from .sigv4 import credential_problem, environ_header, payload_problem, signature_problem

REGION = "us-east-1"
MAX_BODY = 16 * 1024 * 1024  # far above any checkpoint; a larger body is refused unread
READS = frozenset({"GET", "HEAD", "OPTIONS"})  # served concurrently; every other method writes
WRITES = threading.Lock()  # held by each write while moto checks and writes (module docstring)


def new_credentials() -> tuple[str, str]:
    """A per-run access key ID and secret access key, known only to this process and the bot."""
    return f"LOCAL{secrets.token_hex(8).upper()}", secrets.token_urlsafe(30)


def aws_error(
    start_response: Callable[..., Any], status: str, code: str, message: str
) -> list[bytes]:
    """An error as S3 writes one (XML ``<Error>``), which botocore reads for every protocol."""
    body = (
        f"<?xml version='1.0' encoding='UTF-8'?><Error><Code>{code}</Code>"
        f"<Message>{escape(message)}</Message></Error>"
    ).encode()
    start_response(
        status, [("Content-Type", "application/xml"), ("Content-Length", str(len(body)))]
    )
    return [body]


class MotoStandIn(LoopbackServer):
    """moto's application on 127.0.0.1:0 that answers only requests signed with ``key_id`` and
    ``secret`` (the bot's, from the environment :meth:`env` gives it)."""

    def __init__(self, key_id: str, secret: str, clock: Callable[[], float] = time.time) -> None:
        from moto.moto_server.werkzeug_app import (
            DomainDispatcherApplication,
            MotoRequestHandler,
            create_backend_app,
        )
        from werkzeug.serving import make_server

        logging.getLogger("werkzeug").setLevel(logging.ERROR)  # one line per request otherwise
        self.key_id = key_id
        self.secret = secret
        self.clock = clock
        self._moto: Callable[..., Iterable[bytes]] = DomainDispatcherApplication(create_backend_app)
        self._server = make_server(  # type: ignore[assignment]
            "127.0.0.1", 0, self._answer, threaded=True, request_handler=MotoRequestHandler
        )
        self._server.daemon_threads = True
        self.root = f"http://127.0.0.1:{self._server.server_address[1]}"
        self._thread = threading.Thread(
            target=self._server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True
        )

    def env(self) -> dict[str, str]:
        """The environment that points botocore (and so the bot) here with this run's key."""
        return {
            "AWS_ENDPOINT_URL": self.root,
            "AWS_ACCESS_KEY_ID": self.key_id,
            "AWS_SECRET_ACCESS_KEY": self.secret,
            "AWS_DEFAULT_REGION": REGION,
        }

    def client(self, service: str = "s3") -> Any:
        """A boto3 client of this stand-in, signed with this run's key."""
        return client_of(self.env(), service)

    def _answer(
        self, environ: dict[str, Any], start_response: Callable[..., Any]
    ) -> Iterable[bytes]:
        headers = {
            name: value
            for name in ("host", "origin", "sec-fetch-site")
            if (value := environ_header(environ, name)) is not None
        }
        problem = self.refusal(headers)
        if problem is not None:
            return aws_error(start_response, "403 Forbidden", "AccessDenied", problem)
        if str(environ.get("PATH_INFO", "")).startswith("/moto-api"):
            return aws_error(start_response, "404 Not Found", "NotFound", "no such endpoint")
        problem = credential_problem(environ, self.key_id, self.clock)  # before any body
        if problem is None:
            length = environ_header(environ, "content-length") or "0"
            if not length.isdigit():
                return aws_error(start_response, "400 Bad Request", "BadRequest", "Content-Length")
            if int(length) > MAX_BODY:
                return aws_error(start_response, "413 Too Large", "EntityTooLarge", "too large")
            body = environ["wsgi.input"].read(int(length)) if int(length) else b""
            environ["wsgi.input"] = io.BytesIO(body)
            mismatch = payload_problem(environ, body)
            if mismatch is not None:
                return aws_error(
                    start_response, "400 Bad Request", "XAmzContentSHA256Mismatch", mismatch
                )
            problem = signature_problem(environ, body, self.key_id, self.secret, self.clock)
        if problem is not None:
            code = "InvalidAccessKeyId" if "another access key" in problem else "AccessDenied"
            code = "SignatureDoesNotMatch" if "does not match" in problem else code
            code = "RequestTimeTooSkewed" if "skewed" in problem else code
            return aws_error(start_response, "403 Forbidden", code, problem)
        return self._moto_answer(environ, start_response)

    def _moto_answer(
        self, environ: dict[str, Any], start_response: Callable[..., Any]
    ) -> Iterable[bytes]:
        """moto's answer, computed in full inside the call (Flask builds the body before it
        returns), so a write holds :data:`WRITES` from moto's check to moto's write."""
        if environ.get("REQUEST_METHOD") in READS:
            return self._moto(environ, start_response)
        with WRITES:
            return self._moto(environ, start_response)


@contextmanager
def moto_s3_server(bucket: str = "checkpoints-test") -> Iterator[dict[str, str]]:
    """Start a stand-in with a per-run key, create ``bucket``; yield the environment a child
    process needs to reach it."""
    with MotoStandIn(*new_credentials()) as aws:
        aws.client().create_bucket(Bucket=bucket)
        yield aws.env()


def client_of(env: dict[str, str], service: str = "s3") -> Any:
    """A boto3 client of the stand-in ``env`` (:meth:`MotoStandIn.env`) describes."""
    return boto3.client(
        service,
        endpoint_url=env["AWS_ENDPOINT_URL"],
        region_name=env["AWS_DEFAULT_REGION"],
        aws_access_key_id=env["AWS_ACCESS_KEY_ID"],
        aws_secret_access_key=env["AWS_SECRET_ACCESS_KEY"],
    )
