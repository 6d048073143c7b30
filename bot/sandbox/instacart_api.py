"""A local Instacart Developer Platform, for ``INSTACART_API_URL``: the tests, the bench and the
sandbox make shopping-list pages here.

``POST /idp/v1/products/products_link`` refuses what the API documents refusing: no
``Authorization: Bearer`` with this run's key (401), a body that is not JSON (400), no ``title``,
no ``line_items`` or an empty list, a line item without a ``name``, a ``quantity`` that is not a
positive number, a ``link_type`` other than ``shopping_list`` or ``recipe``, an ``expires_in``
that is not 1 to 365 days (400). A good one is kept and answered ``{"products_link_url": …}``,
a link to this server's own page for it (``GET /store/shopping_lists/<id>``), which lists what it
was sent as Instacart's page would before the household picks a store. It can be told to answer
the next requests badly (a status, a delay longer than the client's timeout).
"""

from __future__ import annotations

import html
import json
import threading
import time
from collections import deque
from dataclasses import dataclass, field
from typing import Any

from .loopback import LoopbackServer, QuietHandler, refused

API_KEY = "test-instacart-key-not-real"
PATH = "/idp/v1/products/products_link"
PAGE = "/store/shopping_lists/"


def list_problem(body: Any) -> str | None:
    """Why ``body`` is not a products_link request Instacart accepts (None when it is one)."""
    if not isinstance(body, dict):
        return "the request body must be a JSON object"
    title = body.get("title")
    if not isinstance(title, str) or not title.strip():
        return "title is required"
    if body.get("link_type", "shopping_list") not in ("shopping_list", "recipe"):
        return "link_type must be one of shopping_list, recipe"
    expires = body.get("expires_in")
    if expires is not None and (
        not isinstance(expires, int) or isinstance(expires, bool) or not 1 <= expires <= 365
    ):
        return "expires_in must be a number of days up to 365"
    items = body.get("line_items")
    if not isinstance(items, list) or not items:
        return "line_items is required"
    for i, item in enumerate(items):
        if not isinstance(item, dict) or not isinstance(item.get("name"), str):
            return f"line_items[{i}].name is required"
        if not item["name"].strip():
            return f"line_items[{i}].name is required"
        quantity = item.get("quantity")
        if quantity is not None and (
            not isinstance(quantity, int | float) or isinstance(quantity, bool) or quantity <= 0
        ):
            return f"line_items[{i}].quantity must be a positive number"
        for text in ("unit", "display_text"):
            if text in item and not isinstance(item[text], str):
                return f"line_items[{i}].{text} must be a string"
    return None


@dataclass
class FakeInstacart(LoopbackServer):
    """The stand-in: ``url`` for ``INSTACART_API_URL``, ``api_key`` the workspace's key; each
    page made is in ``lists`` (its ID → the request's body), every request in ``requests``."""

    api_key: str = API_KEY
    lists: dict[str, dict[str, Any]] = field(default_factory=dict)
    requests: list[dict[str, Any]] = field(default_factory=list)
    url: str = ""

    def __post_init__(self) -> None:
        self._lock = threading.Lock()
        self._script: deque[tuple[int, float]] = deque()
        fake = self

        class Handler(QuietHandler):
            def do_POST(self) -> None:
                if refused(fake, self):
                    return
                raw = self.rfile.read(int(self.headers.get("content-length") or 0))
                status, payload, delay = fake._answer(self.path, raw, dict(self.headers))
                time.sleep(delay)
                self._send(status, "application/json", json.dumps(payload).encode())

            def do_GET(self) -> None:
                if refused(fake, self):
                    return
                found = fake.lists.get(self.path.removeprefix(PAGE))
                if not self.path.startswith(PAGE) or found is None:
                    self._send(404, "text/plain", b"no such shopping list")
                    return
                self._send(200, "text/html; charset=utf-8", page_of(found).encode())

            def _send(self, status: int, kind: str, data: bytes) -> None:
                csp = "default-src 'none'"
                self.answer(status, data, {"content-type": kind, "content-security-policy": csp})

        self._serve(Handler)
        self.url = self.root

    def answer_next(self, status: int, times: int = 1, delay: float = 0.0) -> None:
        """Answer the next ``times`` good requests with ``status`` (after ``delay`` seconds)."""
        with self._lock:
            self._script.extend([(status, delay)] * times)

    def _answer(self, path: str, raw: bytes, headers: dict[str, str]) -> tuple[int, Any, float]:
        lower = {k.lower(): v for k, v in headers.items()}
        try:
            body = json.loads(raw)
        except ValueError:
            body = None
        with self._lock:
            self.requests.append(body if isinstance(body, dict) else {})
        if path != PATH:
            return 404, {"error": {"message": "Not found"}}, 0.0
        if lower.get("authorization") != f"Bearer {self.api_key}":
            return 401, {"error": {"message": "Unauthorized: invalid API key"}}, 0.0
        problem = list_problem(body) if "json" in lower.get("content-type", "") else "JSON only"
        if problem is not None:
            return 400, {"error": {"message": problem}}, 0.0
        with self._lock:
            status, delay = self._script.popleft() if self._script else (200, 0.0)
            if status != 200:
                return status, {"error": {"message": "fake"}}, delay
            made = f"{len(self.lists) + 1:04d}"
            self.lists[made] = body
        return 200, {"products_link_url": f"{self.root}{PAGE}{made}"}, delay


def page_of(body: dict[str, Any]) -> str:
    """The shopping-list page: the title and each line item's display text (escaped)."""
    items = "".join(
        f"<li>{html.escape(str(item.get('display_text') or item['name']))}</li>"
        for item in body["line_items"]
    )
    return (
        '<!doctype html><html lang="en"><meta charset="utf-8">'
        f"<title>{html.escape(body['title'])}</title>"
        "<p>Instacart (local stand-in): pick a store to shop this list.</p>"
        f"<h1>{html.escape(body['title'])}</h1><ul>{items}</ul></html>"
    )
