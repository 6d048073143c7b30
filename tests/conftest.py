"""Fixtures shared by every test: AWS environment, moto S3, atomic conditional writes, a signer."""

from __future__ import annotations

import functools
import os
import threading
from collections.abc import Iterator
from typing import Any

import pytest

from bot.sandbox.anthropic_api import FakeAnthropic, shorter_revisions
from bot.sandbox.clock import PlayedClock
from bot.sandbox.lambda_api import FakeLambda
from bot.sandbox.moto_server import moto_s3_server
from tests.bot_kit import TestWorld, bot_env, fake_slack
from workflow.persistence.signing import CheckpointSigner

BUCKET = "checkpoints-test"


@pytest.fixture(autouse=True)
def fresh_boto3_session(monkeypatch: pytest.MonkeyPatch) -> None:
    """Each test's ``boto3.client(...)`` calls (Bolt's lazy runner makes one) start from a new
    default session, as a new process would: the old one keeps the credentials it first read
    from the environment, and each moto stand-in has its own per-run key."""
    import boto3

    monkeypatch.setattr(boto3, "DEFAULT_SESSION", None)


# Where an approved basket goes and when, and where it is priced: each test starts from the
# deploy's defaults (a canvas, a 2-minute undo window where timers are armed, no Kroger app),
# whatever the developer's shell or an earlier test's in-process sandbox
# (``bot.sandbox.server.configure_bot``) left in the environment.
ORDER_VARIABLES = (
    "ORDER_DELAY",
    "ORDER_DESTINATION",
    "ORDER_WEBHOOK_URL",
    "ORDER_WEBHOOK_SECRET",
    "ORDER_WEBHOOK_PINNED_HOSTS",
    "ORDER_WEBHOOK_CA_BUNDLE",
    "INSTACART_API_KEY",
    "INSTACART_SERVER",
    "INSTACART_API_URL",
    "WORKSPACE_SECRETS_PATH",
    "WORKSPACE_SECRETS_KEY",
    "AWS_ENDPOINT_URL_SSM",
    "KROGER_CLIENT_ID",
    "KROGER_CLIENT_SECRET",
    "KROGER_API_URL",
    "KROGER_REDIRECT_URL",
)


@pytest.fixture(autouse=True)
def order_defaults(monkeypatch: pytest.MonkeyPatch) -> None:
    for name in ORDER_VARIABLES:
        monkeypatch.delenv(name, raising=False)


@pytest.fixture
def aws_env(monkeypatch: pytest.MonkeyPatch) -> None:
    """Fake credentials, and no endpoint override: with one set, mock_aws would not intercept."""
    for name in (
        "AWS_ENDPOINT_URL",
        "AWS_ENDPOINT_URL_S3",
        "AWS_ENDPOINT_URL_SCHEDULER",
        "AWS_ENDPOINT_URL_SSM",
    ):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.delenv("AWS_PROFILE", raising=False)
    monkeypatch.setenv("AWS_ACCESS_KEY_ID", "testing")
    monkeypatch.setenv("AWS_SECRET_ACCESS_KEY", "testing")
    monkeypatch.setenv("AWS_DEFAULT_REGION", "us-east-1")


@pytest.fixture
def atomic_moto(monkeypatch: pytest.MonkeyPatch) -> None:
    """Handle each moto request atomically, as real S3 does; concurrent tests need it.

    Real S3's conditional writes are atomic, and a read never sees half of a concurrent write.
    moto 5.2.5 is neither:

    - ``S3Response.put_object`` / ``S3Response.delete_object`` (moto/s3/responses.py) check
      ``If-None-Match`` / ``If-Match`` with ``backend.get_object`` and only then call
      ``backend.put_object`` / ``backend.delete_object``, with no lock between: two concurrent
      conditional PUTs can both succeed (seen: 2 lock holders out of 20 racing threads);
    - a GET that races a PUT to the same key can read the old key after the PUT disposed of its
      buffer, and raises a raw ``ValueError: I/O operation on closed file`` into the client;
    - every mocked request reloads ``moto.s3.urls`` (``S3Backend._url_module``), and a request in
      another thread can then fail with ``ImportError: module moto.s3.urls not in sys.modules``.

    Without this fixture a race test would test moto's gaps, not our code. One lock around
    ``BotocoreStubber.process_request``, through which ``mock_aws`` routes every request, makes
    each S3 request atomic. Our code still interleaves freely *between* requests, which is where
    its own races are.
    """
    from moto.core.botocore_stubber import BotocoreStubber

    lock = threading.Lock()
    process_request = BotocoreStubber.process_request

    @functools.wraps(process_request)
    def atomic(self: Any, *args: Any, **kwargs: Any) -> Any:
        with lock:
            return process_request(self, *args, **kwargs)

    monkeypatch.setattr(BotocoreStubber, "process_request", atomic)


@pytest.fixture
def bucket() -> str:
    return BUCKET


@pytest.fixture
def s3(aws_env: None, atomic_moto: None, bucket: str) -> Iterator[Any]:
    """A boto3 S3 client (the app's own configuration) talking to moto, with the bucket made."""
    from moto import mock_aws

    from workflow.persistence.s3_client import make_s3_client

    with mock_aws():
        client = make_s3_client()
        client.create_bucket(Bucket=bucket)
        yield client


@pytest.fixture
def signer() -> CheckpointSigner:
    return CheckpointSigner(b"test-key-" * 4)


def fakes(
    aws_key: str = "testing", clock: PlayedClock | None = None
) -> tuple[Any, FakeLambda, FakeAnthropic]:
    """Slack (the cast in #shop and #weekly; its clock the world's), Lambda taking the bot's AWS
    key, and Claude (a revision is 8 lines)."""
    slack = fake_slack("C0WEEKLY", wall=clock or PlayedClock()).start()
    lam = FakeLambda(access_key_id=aws_key).start()
    return slack, lam, FakeAnthropic(responder=shorter_revisions).start()


@pytest.fixture
def world(monkeypatch: pytest.MonkeyPatch, s3: Any, bucket: str) -> Iterator[TestWorld]:
    # mock_aws puts its own fake credentials in the environment: the bot signs with those.
    clock = PlayedClock()  # one for the bot and the fake Slack: time passes for both
    slack, lam, claude = fakes(os.environ["AWS_ACCESS_KEY_ID"], clock)
    env = bot_env(slack, lam, claude, bucket)
    for name, value in env.items():
        monkeypatch.setenv(name, value)
    world = TestWorld(slack, lam, claude, env, monkeypatch.setenv, s3=s3, clock=clock)
    world.boot()
    yield world
    for fake in (slack, lam, claude):
        fake.stop()


@pytest.fixture
def served(monkeypatch: pytest.MonkeyPatch) -> Iterator[TestWorld]:
    """The world with S3 as a moto *server*, so other processes share it."""
    with moto_s3_server("bot-bucket") as aws:
        clock = PlayedClock()
        slack, lam, claude = fakes(aws["AWS_ACCESS_KEY_ID"], clock)
        env = {**aws, **bot_env(slack, lam, claude, "bot-bucket")}
        for name in ("AWS_ENDPOINT_URL_S3", "AWS_ENDPOINT_URL_SCHEDULER", "AWS_PROFILE"):
            monkeypatch.delenv(name, raising=False)
        for name, value in env.items():
            monkeypatch.setenv(name, value)
        world = TestWorld(slack, lam, claude, env, monkeypatch.setenv, clock=clock)
        world.boot()
        yield world
        for fake in (slack, lam, claude):
            fake.stop()


@pytest.fixture
def faults(world: TestWorld, s3: Any, monkeypatch: pytest.MonkeyPatch) -> Iterator[Any]:
    """S3 errors from the wire on the client the bot uses (``tests.fault_kit.S3Faults``);
    botocore retries them, its backoff made instant."""
    import botocore.retries.standard

    from tests.fault_kit import S3Faults, moto_skips_refused

    monkeypatch.setattr(
        botocore.retries.standard.ExponentialBackoff, "delay_amount", lambda self, ctx: 0.0
    )
    moto_skips_refused(monkeypatch)
    injected = S3Faults().install(s3)
    yield injected
    injected.uninstall(s3)
