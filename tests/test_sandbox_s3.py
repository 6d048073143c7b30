"""The sandbox's S3 (and Scheduler) answers only the bot, not a web page that finds its port.

With moto's own server, a page on another localhost port found it by scanning ports in about 5 s,
listed every key, deleted checkpoints with a no-cors ``POST ?delete``, planted a lock with a form
post, and erased the whole store with one no-cors ``POST /moto-api/reset``: moto checks no
signature, Host or Origin. Real S3 refuses an unsigned request (403 ``AccessDenied``), an unknown
key (403 ``InvalidAccessKeyId``) and a wrong signature (403 ``SignatureDoesNotMatch``); the
stand-in (``bot.sandbox.moto_server.MotoStandIn``) does too, refuses what only a browser sends
like every other stand-in, and has no ``/moto-api/``.
"""

from __future__ import annotations

import socket
import ssl
import time
import urllib.error
import urllib.request
from collections.abc import Iterator
from typing import Any

import boto3
import pytest
from botocore.exceptions import ClientError

from bot.sandbox.moto_server import MotoStandIn, new_credentials
from tests.sandbox_process import listening_sockets, running_sandbox
from tests.test_sandbox import call, headers, replies_to, state, wait_for

BUCKET = "weekly-shop-sandbox"
CHECKPOINT = "weekly-shop/T0SANDBOX/s/s1/cp/000000"


@pytest.fixture
def stand_in() -> Iterator[MotoStandIn]:
    with MotoStandIn(*new_credentials()) as aws:
        s3 = aws.client()
        s3.create_bucket(Bucket=BUCKET)
        s3.put_object(Bucket=BUCKET, Key=CHECKPOINT, Body=b"{}")
        yield aws


def status(url: str, method: str = "GET", body: bytes | None = None, **headers: str) -> int:
    """What a web page's request gets (urllib sends no Origin unless told: a page's does)."""
    request = urllib.request.Request(url, data=body, method=method, headers=headers)
    try:
        with urllib.request.urlopen(request, timeout=10) as response:
            return int(response.status)
    except urllib.error.HTTPError as exc:
        return int(exc.code)


BROWSER = [
    {"Origin": "http://127.0.0.1:5173"},  # a page on another localhost port
    {"Sec-Fetch-Site": "cross-site"},
    {},  # a request with neither (curl, a page's no-cors image load)
]
DELETE = (
    b'<Delete xmlns="http://s3.amazonaws.com/doc/2006-03-01/"><Object><Key>'
    + CHECKPOINT.encode()
    + b"</Key></Object></Delete>"
)


def attacks(root: str, extra: dict[str, str]) -> dict[str, int]:
    """The issue's attacks, each with the browser headers ``extra``: what each one got."""
    lock = f"{root}/{BUCKET}/weekly-shop/T0SANDBOX/s/s1/lock"
    return {
        "list every key": status(f"{root}/{BUCKET}?list-type=2", **extra),
        "read a checkpoint": status(f"{root}/{BUCKET}/{CHECKPOINT}", **extra),
        "no-cors POST ?delete": status(
            f"{root}/{BUCKET}?delete", "POST", DELETE, **{"Content-Type": "text/plain", **extra}
        ),
        "form post of a lock": status(
            lock,
            "POST",
            b"planted",
            **{"Content-Type": "application/x-www-form-urlencoded", **extra},
        ),
        "PUT a lock": status(lock, "PUT", b"planted", **extra),
        "POST /moto-api/reset": status(f"{root}/moto-api/reset", "POST", b"", **extra),
        "GET /moto-api/": status(f"{root}/moto-api/", **extra),
    }


@pytest.mark.parametrize("extra", BROWSER, ids=["Origin", "Sec-Fetch-Site", "no header"])
def test_a_web_page_can_neither_read_nor_change_nor_reset_the_store(
    stand_in: MotoStandIn, extra: dict[str, str]
) -> None:
    got = attacks(stand_in.root, extra)
    assert all(code in (403, 404) for code in got.values()), got
    assert got["POST /moto-api/reset"] == (404 if not extra else 403)  # /moto-api/: no such page
    keys = [o["Key"] for o in stand_in.client().list_objects_v2(Bucket=BUCKET)["Contents"]]
    assert keys == [CHECKPOINT]


def test_a_browsers_request_gets_no_cors_headers(stand_in: MotoStandIn) -> None:
    """moto echoes any Origin in Access-Control-Allow-Origin; the stand-in answers 403 without
    one, so a page cannot even read the refusal."""
    request = urllib.request.Request(
        f"{stand_in.root}/{BUCKET}?list-type=2", headers={"Origin": "http://evil.example"}
    )
    with pytest.raises(urllib.error.HTTPError) as refused:
        urllib.request.urlopen(request, timeout=10)
    assert refused.value.code == 403
    assert refused.value.headers.get("Access-Control-Allow-Origin") is None


def test_a_foreign_host_is_refused_dns_rebinding(stand_in: MotoStandIn) -> None:
    assert status(f"{stand_in.root}/{BUCKET}?list-type=2", Host="evil.example") == 403


def client(aws: MotoStandIn, key_id: str, secret: str, service: str = "s3") -> Any:
    return boto3.client(
        service,
        endpoint_url=aws.root,
        region_name="us-east-1",
        aws_access_key_id=key_id,
        aws_secret_access_key=secret,
    )


def test_only_this_runs_key_and_secret_sign_a_request(stand_in: MotoStandIn) -> None:
    """As S3 answers: an unknown key is ``InvalidAccessKeyId``, a known key with a wrong secret
    ``SignatureDoesNotMatch`` (both 403); the bot's own key and secret work."""
    stranger = client(stand_in, "AKIASTRANGER0000", stand_in.secret)
    guesser = client(stand_in, stand_in.key_id, "not-the-secret")
    for who, code in ((stranger, "InvalidAccessKeyId"), (guesser, "SignatureDoesNotMatch")):
        with pytest.raises(ClientError) as refused:
            who.delete_object(Bucket=BUCKET, Key=CHECKPOINT)
        assert refused.value.response["Error"]["Code"] == code
        assert refused.value.response["ResponseMetadata"]["HTTPStatusCode"] == 403
    assert stand_in.client().get_object(Bucket=BUCKET, Key=CHECKPOINT)["Body"].read() == b"{}"


def test_a_signed_request_cannot_be_replayed_elsewhere(stand_in: MotoStandIn) -> None:
    """The signature covers the method, path, query and signed headers: the bot's own signed
    GET of one key, sent for another key or as a DELETE, does not match."""
    s3 = stand_in.client()
    s3.put_object(Bucket=BUCKET, Key="other", Body=b"x")
    seen: dict[str, str] = {}

    def keep(request: Any, **_: Any) -> None:
        seen.update(request.headers.items())

    s3.meta.events.register("before-send.s3.GetObject", keep)
    s3.get_object(Bucket=BUCKET, Key=CHECKPOINT)
    signed = {k: (v.decode() if isinstance(v, bytes) else v) for k, v in seen.items()}
    assert status(f"{stand_in.root}/{BUCKET}/{CHECKPOINT}", **signed) == 200  # as sent: fine
    assert status(f"{stand_in.root}/{BUCKET}/other", **signed) == 403
    assert status(f"{stand_in.root}/{BUCKET}/{CHECKPOINT}", "DELETE", **signed) == 403
    keys = {o["Key"] for o in s3.list_objects_v2(Bucket=BUCKET)["Contents"]}
    assert keys == {CHECKPOINT, "other"}


def test_a_signed_request_is_refused_fifteen_minutes_later() -> None:
    """S3 refuses a request signed more than 15 minutes from its own clock
    (``RequestTimeTooSkewed``, ``MaxAllowedSkewMilliseconds`` 900000): a request seen once cannot
    be sent again later."""
    now = [time.time()]
    with MotoStandIn(*new_credentials(), clock=lambda: now[0]) as aws:
        s3 = aws.client()
        s3.create_bucket(Bucket=BUCKET)
        seen: list[Any] = []
        s3.meta.events.register(
            "before-send.s3.ListObjectsV2", lambda request, **_: seen.append(request)
        )
        s3.list_objects_v2(Bucket=BUCKET)
        (sent,) = seen
        signed = {k: (v.decode() if isinstance(v, bytes) else v) for k, v in sent.headers.items()}
        url = sent.url
        now[0] += 14 * 60
        assert status(url, **signed) == 200
        now[0] += 2 * 60
        assert status(url, **signed) == 403
        with pytest.raises(ClientError) as refused:
            s3.list_objects_v2(Bucket=BUCKET)  # the bot's own clock is 16 minutes behind
        assert refused.value.response["Error"]["Code"] == "RequestTimeTooSkewed"


def test_the_scheduler_answers_only_the_bot_too(stand_in: MotoStandIn) -> None:
    """The same stand-in plays EventBridge Scheduler (the basket timers): a JSON service, whose
    signature covers the body's hash."""
    stand_in.client("scheduler").create_schedule_group(Name="weekly-shop-sandbox-baskets")
    with pytest.raises(ClientError) as refused:
        client(stand_in, stand_in.key_id, "wrong", "scheduler").delete_schedule_group(
            Name="weekly-shop-sandbox-baskets"
        )
    assert refused.value.response["ResponseMetadata"]["HTTPStatusCode"] == 403
    groups = stand_in.client("scheduler").list_schedule_groups()["ScheduleGroups"]
    assert "weekly-shop-sandbox-baskets" in [g["Name"] for g in groups]


def test_the_running_sandbox_survives_a_port_scan_and_every_attack() -> None:
    """``weekly-shop sandbox`` as started: every port it listens on but the page's gets every
    attack (as a page scanning localhost would send them); the bot then still writes, shows and
    takes a basket, so nothing was erased, planted or read."""
    with running_sandbox() as sandbox:
        call(sandbox, "/ui/command", {"user": "U0ALICE", "text": "/shop fish on Friday"})
        wait_for(lambda: "Basket 1 of 3" in headers(state(sandbox, "U0BOB")["messages"]))
        ports = [p for _, p in listening_sockets(sandbox.process.pid) if p != sandbox.port]
        assert len(ports) >= 5  # Slack, Lambda, S3 with Scheduler and SSM, Instacart, webhook
        tls = [p for p in ports if speaks_tls(p)]
        assert len(tls) == 1  # the household's webhook receiver: a browser cannot even connect
        assert not trusted_by_default(tls[0])
        for port in set(ports) - set(tls):
            for extra in BROWSER:
                got = attacks(f"http://127.0.0.1:{port}", extra)
                assert all(code >= 400 for code in got.values()), (port, str(got))  # 501: no PUT
        panel = state(sandbox, "U0ALICE")["sessions"]
        (session,) = panel
        assert session["lock"] is None and len(session["checkpoints"]) >= 2
        basket = next(m for m in state(sandbox, "U0ALICE")["messages"] if m.get("blocks"))
        call(
            sandbox,
            "/ui/action",
            {"user": "U0BOB", "ts": basket["ts"], "action_id": "approve_basket"},
        )
        replies = lambda: replies_to(sandbox, basket["ts"])  # noqa: E731
        assert wait_for(lambda: [r for r in replies() if r.startswith("Ordered")])


def speaks_tls(port: int) -> bool:
    """Whether 127.0.0.1:``port`` completes a TLS handshake (any certificate)."""
    context = ssl.SSLContext(ssl.PROTOCOL_TLS_CLIENT)
    context.check_hostname, context.verify_mode = False, ssl.CERT_NONE
    try:
        with socket.create_connection(("127.0.0.1", port), timeout=5) as conn:
            context.wrap_socket(conn).close()
    except (ssl.SSLError, OSError):
        return False
    return True


def trusted_by_default(port: int) -> bool:
    """Whether the system's CAs (a browser's) trust the certificate on 127.0.0.1:``port``: the
    webhook receiver's is from a CA made for one run, which nothing but the bot trusts."""
    try:
        with socket.create_connection(("127.0.0.1", port), timeout=5) as conn:
            ssl.create_default_context().wrap_socket(conn, server_hostname="127.0.0.1").close()
    except ssl.SSLCertVerificationError:
        return False
    return True


def raw(root: str, request: bytes) -> bytes:
    """One HTTP exchange written by hand (urllib would fix up what an attacker sends)."""
    host, port = root.removeprefix("http://").split(":")
    with socket.create_connection((host, int(port)), timeout=10) as conn:
        conn.sendall(request)
        answer = b""
        while chunk := conn.recv(65536):
            answer += chunk
    while answer.startswith(b"HTTP/1.1 100 Continue\r\n\r\n"):  # botocore sends Expect
        answer = answer.removeprefix(b"HTTP/1.1 100 Continue\r\n\r\n")
    return answer


def test_a_signed_put_replayed_with_another_body_is_refused(stand_in: MotoStandIn) -> None:
    """The signature covers ``X-Amz-Content-SHA256``, not the body: S3 hashes the body that
    arrived and answers 400 ``XAmzContentSHA256Mismatch``. So does the stand-in, for a body sent
    whole or chunked, and the checkpoint keeps what the bot wrote."""
    s3 = stand_in.client()
    seen: list[Any] = []
    s3.meta.events.register("before-send.s3.PutObject", lambda request, **_: seen.append(request))
    s3.put_object(Bucket=BUCKET, Key=CHECKPOINT, Body=b'{"good": 2}')
    (sent,) = seen
    host = stand_in.root.removeprefix("http://")
    headers = [
        f"{k}: {v.decode() if isinstance(v, bytes) else v}"
        for k, v in sent.headers.items()
        if k.lower() not in ("content-length", "content-md5")
    ]
    head = [f"PUT /{BUCKET}/{CHECKPOINT} HTTP/1.1", f"Host: {host}", *headers, "Connection: close"]
    evil = b'{"evil": "planted"}'
    whole = "\r\n".join([*head, f"Content-Length: {len(evil)}"]).encode() + b"\r\n\r\n" + evil
    chunked = (
        "\r\n".join([*head, "Transfer-Encoding: chunked"]).encode()
        + b"\r\n\r\n"
        + f"{len(evil):x}\r\n".encode()
        + evil
        + b"\r\n0\r\n\r\n"
    )
    assert raw(stand_in.root, whole).startswith(b"HTTP/1.1 400")
    assert b"XAmzContentSHA256Mismatch" in raw(stand_in.root, whole)
    assert raw(stand_in.root, chunked).split(b"\r\n")[0] != b"HTTP/1.1 200 OK"
    assert s3.get_object(Bucket=BUCKET, Key=CHECKPOINT)["Body"].read() == b'{"good": 2}'


def test_no_body_is_read_before_the_request_shows_the_runs_key(stand_in: MotoStandIn) -> None:
    """Without the key the stand-in reads no body at all (a huge or malformed Content-Length
    is a 403, not a buffer or a crash); with it, a body over 16 MiB is refused unread."""
    host = stand_in.root.removeprefix("http://")
    for length in ("99999999999999", "abc"):
        answer = raw(
            stand_in.root,
            f"POST /{BUCKET}?delete HTTP/1.1\r\nHost: {host}\r\nContent-Length: {length}\r\n"
            "Connection: close\r\n\r\n".encode(),
        )
        assert answer.startswith(b"HTTP/1.1 403"), answer[:80]
    s3 = stand_in.client()
    seen: list[Any] = []
    s3.meta.events.register(
        "before-send.s3.ListObjectsV2", lambda request, **_: seen.append(request)
    )
    s3.list_objects_v2(Bucket=BUCKET)
    (sent,) = seen
    signed = [f"{k}: {v.decode() if isinstance(v, bytes) else v}" for k, v in sent.headers.items()]
    path = sent.url.removeprefix(stand_in.root)
    answer = raw(
        stand_in.root,
        "\r\n".join(
            [f"GET {path} HTTP/1.1", f"Host: {host}", *signed, "Content-Length: 99999999999999"]
            + ["Connection: close"]
        ).encode()
        + b"\r\n\r\n",
    )
    assert answer.startswith(b"HTTP/1.1 413"), answer[:80]
