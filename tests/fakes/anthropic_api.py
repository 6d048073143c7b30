"""A local fake of the Anthropic Messages API, for ``ANTHROPIC_BASE_URL``.

It answers ``POST /v1/messages`` from a script of replies (text and stop reason, or an HTTP error
status such as 529, optionally after a delay so a client times out), and records every request so
tests can count model calls and read prompts.
With the script empty it writes a default basket, shorter once a change is asked for.
"""

from __future__ import annotations

import json
import threading
import time
from collections import deque
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

DEFAULT_BASKET = "\n".join(
    [
        "- 500 g chicken breast",
        "- 2 bell peppers",
        "* 1 head broccoli",
        "• 3 carrots",
        "",
        "1 bulb garlic",
        "250 g red lentils",
        "400 g tinned chopped tomatoes",
        "2 pizza bases",
        "250 g mozzarella",
        "150 g mushrooms",
    ]
)


@dataclass
class Reply:
    text: str = DEFAULT_BASKET
    stop_reason: str = "end_turn"
    status: int = 200
    output_tokens: int = 321
    delay: float = 0.0  # seconds before answering (longer than the client's timeout: a timeout)


@dataclass
class FakeAnthropic:
    replies: deque[Reply] = field(default_factory=deque)
    requests: list[dict[str, Any]] = field(default_factory=list)
    headers: list[dict[str, str]] = field(default_factory=list)
    url: str = ""

    def __post_init__(self) -> None:
        self._lock = threading.Lock()
        fake = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args: Any) -> None:
                pass

            def do_POST(self) -> None:
                length = int(self.headers.get("content-length", 0))
                body = json.loads(self.rfile.read(length) or b"{}")
                status, payload, delay = fake._answer(self.path, body, dict(self.headers))
                time.sleep(delay)
                data = json.dumps(payload).encode()
                try:
                    self.send_response(status)
                    self.send_header("content-type", "application/json")
                    self.send_header("content-length", str(len(data)))
                    if status >= 400:
                        self.send_header("retry-after-ms", "5")
                    self.end_headers()
                    self.wfile.write(data)
                except (BrokenPipeError, ConnectionResetError):
                    pass  # the client gave up waiting (a timeout test)

        self._server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self._server.daemon_threads = True  # stop() never waits for a delayed answer
        self.url = f"http://127.0.0.1:{self._server.server_address[1]}"
        self._thread = threading.Thread(
            target=self._server.serve_forever, args=(0.05,), daemon=True
        )

    def start(self) -> FakeAnthropic:
        self._thread.start()
        return self

    def stop(self) -> None:
        self._server.shutdown()
        self._server.server_close()

    def script(self, *replies: Reply) -> None:
        with self._lock:
            self.replies.extend(replies)

    @property
    def message_calls(self) -> int:
        return len(self.requests)

    def _answer(
        self, path: str, body: dict[str, Any], headers: dict[str, str]
    ) -> tuple[int, Any, float]:
        with self._lock:
            self.requests.append(body)
            self.headers.append({k.lower(): v for k, v in headers.items()})
            reply = self.replies.popleft() if self.replies else None
        if path.rstrip("/") != "/v1/messages":
            error = {"type": "not_found_error", "message": path}
            return 404, {"type": "error", "error": error}, 0.0
        if reply is None:
            prompt = json.dumps(body.get("messages", []))
            text = DEFAULT_BASKET
            if "asks for this change" in prompt:
                text = "\n".join(line for line in DEFAULT_BASKET.splitlines()[:8])
            reply = Reply(text=text)
        if reply.status != 200:
            kind = {529: "overloaded_error", 429: "rate_limit_error"}.get(reply.status, "api_error")
            error = {"type": kind, "message": "fake"}
            return reply.status, {"type": "error", "error": error}, reply.delay
        return (
            200,
            {
                "id": f"msg_fake_{len(self.requests)}",
                "type": "message",
                "role": "assistant",
                "model": body.get("model", "claude-haiku-5-5"),
                "content": [{"type": "text", "text": reply.text}],
                "stop_reason": reply.stop_reason,
                "stop_sequence": None,
                "usage": {"input_tokens": 42, "output_tokens": reply.output_tokens},
            },
            reply.delay,
        )
