"""What every local stand-in shares: an HTTP server on 127.0.0.1 and a free port, in a thread.

Only the loopback address is ever bound, so nothing else on the network can reach a fake; the
port is the kernel's choice (port 0), so tests, ``bench/`` and the sandbox never collide.
"""

from __future__ import annotations

import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Self


class LoopbackServer:
    def _serve(self, handler: type[BaseHTTPRequestHandler]) -> None:
        """Bind ``handler`` on 127.0.0.1:0; sets :attr:`root`, the server's base URL."""
        self._server = ThreadingHTTPServer(("127.0.0.1", 0), handler)
        self._server.daemon_threads = True  # stop() never waits for a delayed answer
        self.root = f"http://127.0.0.1:{self._server.server_address[1]}"
        self._thread = threading.Thread(
            target=self._server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True
        )

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
