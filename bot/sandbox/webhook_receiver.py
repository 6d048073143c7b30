"""A household's webhook receiver, for the tests, the bench and the sandbox: HTTPS on 127.0.0.1
and a free port, with a certificate for :data:`HOST` from a CA made for this run only (the bot
trusts it through ``ORDER_WEBHOOK_CA_BUNDLE`` and reaches it through
``ORDER_WEBHOOK_PINNED_HOSTS``, as a deploy never does).

It checks what a real receiver should (``bot.orders.webhook.verify``: the signature over
``v1:<timestamp>:<body>`` with the household's secret, at most 5 minutes old: 401 otherwise),
keeps each delivery (its Idempotency-Key and body), counts them per key, and can be told to
answer the next requests badly: a status (500, 429, 404, a 302 redirect), a delay (a timeout).
"""

from __future__ import annotations

import datetime
import json
import ssl
import tempfile
import threading
import time
from collections import Counter, deque
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

from bot.orders.webhook import SIGNATURE, TIMESTAMP, verify

from .loopback import LoopbackServer

HOST = "hooks.household.test"
PATH = "/weekly-shop/orders"


@dataclass
class Delivery:
    key: str
    body: dict[str, Any]
    verified: bool


def _certificates(folder: Path) -> tuple[Path, Path, Path]:
    """A CA, and a server certificate for HOST it signed: (ca.pem, cert.pem, key.pem)."""
    from cryptography import x509
    from cryptography.hazmat.primitives import hashes, serialization
    from cryptography.hazmat.primitives.asymmetric import ec
    from cryptography.x509.oid import NameOID

    now = datetime.datetime.now(datetime.UTC)
    ca_key, key = ec.generate_private_key(ec.SECP256R1()), ec.generate_private_key(ec.SECP256R1())
    ca_name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, "weekly-shop test CA")])
    ca = (
        x509.CertificateBuilder()
        .subject_name(ca_name)
        .issuer_name(ca_name)
        .public_key(ca_key.public_key())
        .serial_number(x509.random_serial_number())
        .not_valid_before(now - datetime.timedelta(minutes=5))
        .not_valid_after(now + datetime.timedelta(days=1))
        .add_extension(x509.BasicConstraints(ca=True, path_length=0), critical=True)
        .sign(ca_key, hashes.SHA256())
    )
    cert = (
        x509.CertificateBuilder()
        .subject_name(x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, HOST)]))
        .issuer_name(ca_name)
        .public_key(key.public_key())
        .serial_number(x509.random_serial_number())
        .not_valid_before(now - datetime.timedelta(minutes=5))
        .not_valid_after(now + datetime.timedelta(days=1))
        .add_extension(x509.SubjectAlternativeName([x509.DNSName(HOST)]), critical=False)
        .sign(ca_key, hashes.SHA256())
    )
    paths = folder / "ca.pem", folder / "cert.pem", folder / "key.pem"
    paths[0].write_bytes(ca.public_bytes(serialization.Encoding.PEM))
    paths[1].write_bytes(cert.public_bytes(serialization.Encoding.PEM))
    paths[2].write_bytes(
        key.private_bytes(
            serialization.Encoding.PEM,
            serialization.PrivateFormat.PKCS8,
            serialization.NoEncryption(),
        )
    )
    return paths


class WebhookReceiver(LoopbackServer):
    """The receiver: ``url`` to put in the settings, ``env`` for the bot to reach it (its
    ``start``, ``stop`` and ``with`` are every stand-in's, ``loopback``)."""

    def __init__(self, secret: str = "household-webhook-secret-0123456789") -> None:
        self.secret = secret
        self.deliveries: list[Delivery] = []
        self.refused = 0
        self._script: deque[tuple[int, float]] = deque()
        self._lock = threading.Lock()
        self._folder = tempfile.TemporaryDirectory(prefix="weekly-shop-webhook-")
        self.ca_file, cert, key = _certificates(Path(self._folder.name))
        context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
        context.load_cert_chain(cert, key)
        self._server = ThreadingHTTPServer(("127.0.0.1", 0), _handler(self))
        self._server.daemon_threads = True
        self._server.socket = context.wrap_socket(self._server.socket, server_side=True)
        self.port = self._server.server_address[1]
        self.url = f"https://{HOST}{PATH}"
        self._thread = threading.Thread(
            target=self._server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True
        )

    @property
    def env(self) -> dict[str, str]:
        """What the bot needs to reach this receiver (never set in a deploy)."""
        return {
            "ORDER_WEBHOOK_PINNED_HOSTS": json.dumps({HOST: ["127.0.0.1", self.port]}),
            "ORDER_WEBHOOK_CA_BUNDLE": str(self.ca_file),
        }

    def answer_next(self, status: int, times: int = 1, delay: float = 0.0) -> None:
        """Answer the next ``times`` deliveries with ``status`` (after ``delay`` seconds)."""
        with self._lock:
            self._script.extend([(status, delay)] * times)

    def counts(self) -> Counter[str]:
        """Deliveries per Idempotency-Key (signed ones only)."""
        with self._lock:
            return Counter(d.key for d in self.deliveries if d.verified)

    def stop(self) -> None:
        super().stop()
        self._folder.cleanup()

    def _receive(self, request: BaseHTTPRequestHandler, raw: bytes) -> tuple[int, float]:
        headers = request.headers
        signed = verify(
            self.secret,
            headers.get(TIMESTAMP, ""),
            raw,
            headers.get(SIGNATURE, ""),
            time.time(),
        )
        with self._lock:
            if not signed:
                self.refused += 1
                return 401, 0.0
            status, delay = self._script.popleft() if self._script else (200, 0.0)
            body = json.loads(raw)
            self.deliveries.append(Delivery(headers.get("Idempotency-Key", ""), body, signed))
            return status, delay


def _handler(receiver: WebhookReceiver) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        def log_message(self, *args: object) -> None:
            pass

        def do_POST(self) -> None:
            if self.path != PATH or self.headers.get("Host", "").split(":")[0] != HOST:
                self.send_response(404)
                self.end_headers()
                return
            raw = self.rfile.read(int(self.headers.get("Content-Length") or 0))
            status, delay = receiver._receive(self, raw)
            time.sleep(delay)
            self.send_response(status)
            if 300 <= status < 400:
                self.send_header("Location", "http://169.254.169.254/latest/meta-data/")
            self.send_header("Content-Length", "2")
            self.end_headers()
            self.wfile.write(b"{}")

    return Handler
