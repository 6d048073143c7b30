"""What every local stand-in shares: an HTTP server on 127.0.0.1 and a free port, in a thread.

Only the loopback address is ever bound, so nothing else on the network can reach a fake; the
port is the kernel's choice (port 0), so tests, ``bench/`` and the sandbox never collide. A web
page open in the developer's browser can still reach 127.0.0.1 (a no-cors ``text/plain`` POST
needs no preflight), so :func:`refused` turns away what only a browser sends: a request with an
``Origin`` or ``Sec-Fetch-Site: cross-site``, or a ``Host`` that is not this server (DNS
rebinding). The bot's own clients (slack_sdk, botocore, httpx) send none of those. Each fake also
checks a per-run secret of its own (a bot token, an AWS access key, an API key).
"""

from __future__ import annotations

import json
import threading
from collections.abc import Mapping
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Self


def refused(server: LoopbackServer, request: BaseHTTPRequestHandler) -> bool:
    """Answer 403 (and True) if ``request`` did not come from the process ``server`` serves."""
    problem = server.refusal({k.lower(): v for k, v in request.headers.items()})
    if problem is None:
        return False
    data = json.dumps({"ok": False, "error": "forbidden", "detail": problem}).encode()
    request.send_response(403)
    request.send_header("content-type", "application/json")
    request.send_header("content-length", str(len(data)))
    request.end_headers()
    request.wfile.write(data)
    return True


class QuietHandler(BaseHTTPRequestHandler):
    """A request handler that keeps the test and sandbox output free of access logs."""

    def log_message(self, *args: object) -> None:
        pass

    def answer(self, status: int, data: bytes, headers: dict[str, str]) -> None:
        """Send ``status`` and ``data`` with these headers and its length; a client that gave up
        waiting (a timeout test) is no error of the stand-in's."""
        try:
            self.send_response(status)
            for name, value in {**headers, "content-length": str(len(data))}.items():
                self.send_header(name, value)
            self.end_headers()
            self.wfile.write(data)
        except (BrokenPipeError, ConnectionResetError):
            pass

    def start_chunks(self, status: int, headers: dict[str, str]) -> bool:
        """Send ``status`` and these headers for a body written piece by piece: an HTTP/1.1
        response in chunked framing (RFC 9112, 7.1), so each :meth:`send_chunk` reaches the
        client as it is written and a body cut short (no last chunk) is seen as cut; the
        connection closes after it. False if the client has gone."""
        self.protocol_version = "HTTP/1.1"  # this response only; other answers stay HTTP/1.0
        try:
            self.send_response(status)
            framing = {"transfer-encoding": "chunked", "connection": "close"}
            for name, value in {**headers, **framing}.items():
                self.send_header(name, value)
            self.end_headers()
            self.wfile.flush()
        except (BrokenPipeError, ConnectionResetError):
            return False
        return True

    def send_chunk(self, data: bytes) -> bool:
        """Write ``data`` as one chunk, flushed; ``b""`` is the last chunk, ending the body.
        False if the client has gone."""
        try:
            self.wfile.write(b"%x\r\n%s\r\n" % (len(data), data))
            self.wfile.flush()
        except (BrokenPipeError, ConnectionResetError):
            return False
        return True


class LoopbackServer:
    def _serve(self, handler: type[BaseHTTPRequestHandler]) -> None:
        """Bind ``handler`` on 127.0.0.1:0; sets :attr:`root`, the server's base URL."""
        self._server = ThreadingHTTPServer(("127.0.0.1", 0), handler)
        self._server.daemon_threads = True  # stop() never waits for a delayed answer
        self.root = f"http://127.0.0.1:{self._server.server_address[1]}"
        self._thread = threading.Thread(
            target=self._server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True
        )

    def refusal(self, headers: Mapping[str, str]) -> str | None:
        """Why a request with ``headers`` is not from the process this fake serves, or None."""
        port = self._server.server_address[1]
        host = headers.get("host", "")
        if host not in (f"127.0.0.1:{port}", f"localhost:{port}"):
            return f"wrong Host {host[:60]!r}"
        if headers.get("origin") is not None or headers.get("sec-fetch-site") == "cross-site":
            return "a browser page may not call this endpoint"
        return None

    def start(self) -> Self:
        self._thread.start()
        return self

    def stop(self) -> None:
        self._server.shutdown()
        self._server.server_close()

    def __enter__(self) -> Self:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()
