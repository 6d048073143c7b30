"""The signed webhook destination (``bot.orders.webhook``) against a real HTTPS receiver on
127.0.0.1 (``bot.sandbox.webhook_receiver``), and the server-side request forgery checks
(``bot.orders.safe_url``) a URL from the settings goes through, at save time and at send time."""

from __future__ import annotations

import json
import time
from collections.abc import Iterator

import pytest

from bot.orders.order import (
    DestinationDown,
    DestinationRefused,
    Order,
    OutcomeUnknown,
    week_title,
)
from bot.orders.safe_url import address_problem, resolve_public, url_problem
from bot.orders.webhook import WebhookDestination, body_of, signature, verify
from bot.sandbox.webhook_receiver import HOST, WebhookReceiver
from workflow.shop.basket import Item


@pytest.fixture
def receiver() -> Iterator[WebhookReceiver]:
    with WebhookReceiver() as running:
        yield running


def order(order_id: str = "0195f0e2a7c34b5d9e8f7a6b") -> Order:
    now = int(time.time())
    return Order(
        order_id=order_id,
        team="T0TEAM",
        channel="C0SHOP",
        title=week_title(now),
        lines=(
            Item(
                name="chicken breast",
                quantity=500,
                unit="g",
                note="for Friday",
                aisle="meat and fish",
            ),
            Item(name="oat milk", quantity=2, unit="l", aisle="dairy and eggs"),
        ),
        requested_by="U0ALICE",
        approved_by=("U0BOB",),
        approved_at=now,
    )


def to(receiver: WebhookReceiver, **kw: object) -> WebhookDestination:
    pinned = {HOST: ("127.0.0.1", receiver.port)}
    return WebhookDestination(
        receiver.url,
        receiver.secret,
        pinned=pinned,
        ca_file=str(receiver.ca_file),
        sleep=lambda _: None,
        **kw,  # type: ignore[arg-type]
    )


def test_an_order_is_delivered_once_signed_with_its_idempotency_key(
    receiver: WebhookReceiver,
) -> None:
    placed = to(receiver).place(order())
    assert (placed.kind, placed.ref) == ("webhook", "200")
    (delivery,) = receiver.deliveries
    assert delivery.verified and delivery.key == "0195f0e2a7c34b5d9e8f7a6b"
    body = delivery.body
    assert list(body) == [
        "version",
        "order_id",
        "workspace",
        "channel",
        "title",
        "requested_by",
        "approved_by",
        "approved_at",
        "approved_at_unix",
        "basket_sha256",
        "items",
    ]
    assert body["items"][0] == {
        "name": "chicken breast",
        "quantity": 500,
        "unit": "g",
        "note": "for Friday",
        "aisle": "meat and fish",
    }
    assert body["basket_sha256"] == order().basket_sha256 and body["approved_by"] == ["U0BOB"]


def test_the_receivers_check_refuses_a_tampered_body_another_secret_and_a_stale_timestamp() -> None:
    """Slack's own rule for its signatures (docs.slack.dev, "Verifying requests from Slack"):
    HMAC-SHA256 over version, timestamp and body, compared in constant time, and a timestamp
    more than five minutes away refused (a replay)."""
    body, now = body_of(order()), int(time.time())
    signed = signature("s3cret", now, body)
    assert signed.startswith("v1=") and verify("s3cret", str(now), body, signed, now)
    assert not verify("s3cret", str(now), body.replace(b"500", b"900"), signed, now)
    assert not verify("another", str(now), body, signed, now)
    assert not verify("s3cret", str(now), body, signed, now + 301)
    assert not verify("s3cret", "yesterday", body, signed, now)


def test_a_bad_signature_is_refused_by_the_receiver(receiver: WebhookReceiver) -> None:
    with pytest.raises(DestinationRefused, match=r"refused the order \(401\)"):
        WebhookDestination(
            receiver.url,
            "not-the-households-secret",
            pinned={HOST: ("127.0.0.1", receiver.port)},
            ca_file=str(receiver.ca_file),
        ).place(order())
    assert receiver.refused == 1 and receiver.deliveries == []


def test_a_5xx_is_tried_again_with_the_same_key(receiver: WebhookReceiver) -> None:
    receiver.answer_next(500)
    receiver.answer_next(429)
    assert to(receiver).place(order()).ref == "200"
    assert receiver.counts() == {"0195f0e2a7c34b5d9e8f7a6b": 3}  # three deliveries, one key


def test_a_receiver_down_through_every_attempt_is_down(receiver: WebhookReceiver) -> None:
    receiver.answer_next(503, times=3)
    with pytest.raises(DestinationDown):
        to(receiver).place(order())
    assert len(receiver.deliveries) == 3


def test_a_4xx_is_refused_and_not_tried_again(receiver: WebhookReceiver) -> None:
    receiver.answer_next(404)
    with pytest.raises(DestinationRefused, match=r"\(404\)"):
        to(receiver).place(order())
    assert len(receiver.deliveries) == 1


def test_a_redirect_is_refused_and_never_followed(receiver: WebhookReceiver) -> None:
    """The receiver answers 302 to the metadata address: nothing follows it."""
    receiver.answer_next(302)
    with pytest.raises(DestinationRefused, match="redirect"):
        to(receiver).place(order())
    assert len(receiver.deliveries) == 1


def test_no_answer_in_time_is_an_unknown_outcome_tried_with_the_same_key(
    receiver: WebhookReceiver,
) -> None:
    receiver.answer_next(200, times=3, delay=1.0)
    with pytest.raises(OutcomeUnknown):
        to(receiver, timeout=0.3).place(order())
    assert receiver.counts() == {"0195f0e2a7c34b5d9e8f7a6b": 3}


def test_a_closed_port_is_down_and_nothing_was_sent(receiver: WebhookReceiver) -> None:
    import socket

    with socket.socket() as probe:  # a port nobody listens on once closed
        probe.bind(("127.0.0.1", 0))
        closed = probe.getsockname()[1]
    destination = WebhookDestination(
        receiver.url,
        receiver.secret,
        pinned={HOST: ("127.0.0.1", closed)},
        ca_file=str(receiver.ca_file),
        sleep=lambda _: None,
    )
    with pytest.raises(DestinationDown):
        destination.place(order())
    assert receiver.deliveries == []


def test_a_certificate_for_another_name_is_not_trusted(receiver: WebhookReceiver) -> None:
    """TLS still verifies the host name, also when its address is pinned."""
    destination = WebhookDestination(
        "https://elsewhere.household.test/weekly-shop/orders",
        receiver.secret,
        pinned={"elsewhere.household.test": ("127.0.0.1", receiver.port)},
        ca_file=str(receiver.ca_file),
        sleep=lambda _: None,
    )
    with pytest.raises(DestinationDown):
        destination.place(order())
    assert receiver.deliveries == []


INTERNAL = [
    "https://127.0.0.1/hook",
    "https://localhost/hook",
    "https://10.0.0.8/hook",
    "https://172.16.4.2/hook",
    "https://192.168.1.10/hook",
    "https://169.254.169.254/latest/meta-data/",  # AWS instance metadata (IMDS)
    "https://[::1]/hook",
    "https://[fd00:ec2::254]/latest/meta-data/",  # IMDS over IPv6
    "https://[::ffff:127.0.0.1]/hook",  # IPv4-mapped loopback
    "https://100.64.0.1/hook",  # carrier-grade NAT
    "https://0.0.0.0/hook",
    "https://224.0.0.1/hook",  # multicast
    # IPv6 forms that carry an internal IPv4 address. Python 3.11's ipaddress calls the first
    # four global (is_global), so the check is an explicit table (safe_url.NOT_PUBLIC).
    "https://[64:ff9b::a9fe:a9fe]/latest/meta-data/",  # NAT64 of 169.254.169.254
    "https://[64:ff9b::a00:5]/hook",  # NAT64 of 10.0.0.5
    "https://[::a9fe:a9fe]/hook",  # IPv4-compatible (deprecated)
    "https://[::ffff:0:a9fe:a9fe]/hook",  # SIIT
    "https://[::ffff:a9fe:a9fe]/hook",  # IPv4-mapped
    "https://[64:ff9b:1::a9fe:a9fe]/hook",  # local-use NAT64
    "https://[2002:a9fe:a9fe::1]/hook",  # 6to4 of 169.254.169.254
    "https://[2001:0:a9fe:a9fe::1]/hook",  # Teredo (server 169.254.169.254)
    "https://[2001:db8::1]/hook",  # documentation
    "https://192.0.2.10/hook",  # documentation (TEST-NET-1)
    "https://198.18.0.1/hook",  # benchmarking
    "https://240.0.0.1/hook",  # reserved
]


@pytest.mark.parametrize("url", INTERNAL)
def test_internal_addresses_are_refused_at_save_and_at_send(
    receiver: WebhookReceiver, url: str
) -> None:
    problem = url_problem(url)
    assert problem is not None and problem.startswith("must not point at"), problem
    destination = WebhookDestination(url, receiver.secret, sleep=lambda _: None)
    with pytest.raises(DestinationRefused, match="must not point at"):
        destination.place(order())
    assert receiver.deliveries == []


@pytest.mark.parametrize(
    ("url", "said"),
    [
        ("http://hooks.example.com/x", "must be an https:// URL"),
        ("https://user:pw@hooks.example.com/x", "must be a URL without a user name"),
        ("https:///x", "must be a URL with a host"),
        ("ftp://hooks.example.com/x", "must be an https:// URL"),
        ("https://hooks.example.com:99999/x", "must be not a URL"),
    ],
)
def test_urls_that_are_not_https_to_a_host_are_refused(url: str, said: str) -> None:
    assert (url_problem(url) or "").startswith(said[: len("must be a")])


def test_a_name_that_resolves_to_a_private_address_is_refused_whatever_else_it_has() -> None:
    """One private address among public ones is enough: the connection could go there (and a
    DNS answer can change between the check and the connection: the sender connects to the
    address it checked, never resolving again)."""

    def resolver(host: str, port: int) -> list[str]:
        return ["93.184.215.14", "10.1.2.3"]

    assert url_problem("https://hooks.example.com/x", resolver) == (
        "must not point at an internal address (loopback, private, link-local or reserved)"
    )
    found = resolve_public("https://hooks.example.com/x?k=1", lambda h, p: ["93.184.215.14"])
    assert not isinstance(found, str) and (found.address, found.path) == (
        "93.184.215.14",
        "/x?k=1",
    )


@pytest.mark.parametrize("aaaa", ["64:ff9b::a9fe:a9fe", "::ffff:0:a00:5", "::a9fe:a9fe"])
def test_a_name_whose_aaaa_record_carries_an_internal_ipv4_is_refused_at_save_and_at_send(
    receiver: WebhookReceiver, aaaa: str
) -> None:
    """Where the function has IPv6 egress through NAT64 (a dual-stack VPC with a NAT gateway),
    64:ff9b::a9fe:a9fe reaches 169.254.169.254: a host name may not resolve to it either."""
    opened: list[str] = []

    def resolver(host: str, port: int) -> list[str]:
        opened.append(host)
        return ["93.184.215.14", aaaa]

    url = "https://hooks.example.com/x"
    assert url_problem(url, resolver) == (
        "must not point at an internal address (loopback, private, link-local or reserved)"
    )
    destination = WebhookDestination(url, receiver.secret, resolver=resolver, sleep=lambda _: None)
    with pytest.raises(DestinationRefused, match="must not point at"):
        destination.place(order())
    assert opened == ["hooks.example.com", "hooks.example.com"] and receiver.deliveries == []


@pytest.mark.parametrize("port", [25, 6379, 8443, 80])
def test_only_port_443_is_a_webhook(receiver: WebhookReceiver, port: int) -> None:
    url = f"https://hooks.example.com:{port}/x"
    problem = url_problem(url, lambda h, p: ["93.184.215.14"])
    assert problem == "must be an https:// URL on port 443 (no other port)"
    destination = WebhookDestination(
        url, receiver.secret, resolver=lambda h, p: ["93.184.215.14"], sleep=lambda _: None
    )
    with pytest.raises(DestinationRefused, match="port 443"):
        destination.place(order())
    assert url_problem("https://hooks.example.com:443/x", lambda h, p: ["93.184.215.14"]) is None


def test_public_addresses_pass() -> None:
    assert address_problem("93.184.215.14") is None
    assert address_problem("2606:4700:4700::1111") is None
    assert address_problem("64:ff9b::808:808") is None  # NAT64 of a public address
    assert address_problem("2002:808:808::1") is None  # 6to4 of a public address
    assert address_problem("not-an-address") is not None


def test_the_body_is_json_a_receiver_can_read() -> None:
    assert json.loads(body_of(order()))["version"] == 1


def test_the_documented_receiver_check_accepts_a_delivery_and_refuses_a_forged_one() -> None:
    """The ten lines docs/orders.md gives a receiver, run as written."""
    import re
    from pathlib import Path

    page = (Path(__file__).resolve().parent.parent / "docs" / "orders.md").read_text()
    (snippet,) = re.findall(r"```python\n(import hashlib.*?)```", page, flags=re.DOTALL)
    found: dict[str, object] = {}
    exec(compile(snippet, "docs/orders.md", "exec"), found)  # noqa: S102 - our own docs' code
    check = found["is_weekly_shop"]
    body, now = body_of(order()), int(time.time())
    headers = {
        "X-Weekly-Shop-Request-Timestamp": str(now),
        "X-Weekly-Shop-Signature": signature("s3cret", now, body),
    }
    assert check("s3cret", headers, body) is True  # type: ignore[operator]
    assert check("s3cret", headers, body + b" ") is False  # type: ignore[operator]
    assert check("other", headers, body) is False  # type: ignore[operator]
