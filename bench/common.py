"""What the load run and the benchmarks share: an atomic moto server, the loopback world around
the real Lambda handler, lazy invocations routed back to the thread that caused them, and an S3
request counter.

Everything listens on 127.0.0.1: one moto S3 server, the fake Slack Web API, the fake Lambda
Invoke API and the fake Anthropic Messages API (bot/sandbox/). The bot handler runs in this
process (``bot.handler.cold_start`` with ``Settings.from_env()``), as ``bot.sandbox.world.World``
drives it in the test suite; fresh processes (``python -m bot.sandbox.invoke``) reach the same
servers through the environment in :attr:`Loopback.env`.
"""

from __future__ import annotations

import contextlib
import functools
import json
import logging
import os
import tempfile
import threading
import time
from collections import Counter, defaultdict
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import parse_qs

import boto3

from bot.sandbox.anthropic_api import FakeAnthropic, shorter_revisions
from bot.sandbox.clock import PlayedClock
from bot.sandbox.lambda_api import FakeLambda, Invocation
from bot.sandbox.moto_server import moto_s3_server
from bot.sandbox.slack_api import FakeSlack
from bot.sandbox.slack_requests import decoded_body
from bot.sandbox.world import PEOPLE, World, bot_env, fake_slack

TENANT = "T0TEAM"  # the team every fake Slack event comes from

# The reference article's 17-item basket.
BASKET_17 = [
    "500 g chicken breast",
    "2 bell peppers",
    "1 head broccoli",
    "3 carrots",
    "1 bulb garlic",
    "1 small piece fresh ginger",
    "100 ml soy sauce",
    "2 celery sticks",
    "250 g red lentils",
    "400 g tinned chopped tomatoes",
    "1 litre vegetable stock",
    "2 vegetable stock cubes",
    "2 pizza bases or 500 g pizza dough",
    "200 g tomato passata",
    "250 g mozzarella",
    "150 g mushrooms",
    "100 g pepperoni",
]


# ------------------------------------------------------------------ an atomic moto server


@contextlib.contextmanager
def atomic_s3_requests() -> Iterator[None]:
    """Make every S3 request moto serves (in this process) atomic, as real S3's are.

    Real S3 evaluates ``If-None-Match: *`` and ``If-Match: <etag>`` atomically with the write: of
    two racing conditional PUTs on one key exactly one succeeds (the other gets 412, or 409
    ``ConditionalRequestConflict``). moto 5.2.5 is check-then-write with no lock
    (``S3Response.put_object`` / ``delete_object`` in moto/s3/responses.py look the key up with
    ``backend.get_object`` and only then call ``backend.put_object`` / ``delete_object``), and
    ``ThreadedMotoServer`` serves each HTTP request in its own thread, so two truly concurrent
    lock takers can both "win" there. That would test moto's gap, not our lock. moto is not
    thread-safe for reads either: a ListObjectsV2 iterates the bucket's key dict while another
    thread inserts into it, and a GET can read a key whose buffer a concurrent PUT or DELETE has
    just closed.

    So every S3 request is served under one lock, at the hook both the server and ``mock_aws``
    go through: ``S3Response.key_dispatch`` / ``bucket_dispatch`` / ``ambiguous_dispatch`` (the
    URL table in moto/s3/urls.py) call ``cls().key_response(...)`` or ``.bucket_response(...)``,
    looked up on the class at call time, so wrapping those two methods covers object and bucket
    requests alike (an ``RLock``: ``ambiguous_response`` calls one of them). It is the same idea
    as the ``atomic_moto`` fixture in tests/conftest.py, which wraps moto's in-process stubber.
    Our code still interleaves freely *between* requests, which is where its own races are.
    Under the GIL moto gains nothing from serving S3 requests in parallel, so this costs the
    load run no throughput worth measuring.
    """
    from moto.s3.responses import S3Response

    lock = threading.RLock()
    originals = {name: getattr(S3Response, name) for name in ("key_response", "bucket_response")}

    def atomic(method: Any) -> Any:
        @functools.wraps(method)
        def serve(self: Any, *args: Any, **kwargs: Any) -> Any:
            with lock:
                return method(self, *args, **kwargs)

        return serve

    for name, method in originals.items():
        setattr(S3Response, name, atomic(method))
    try:
        yield
    finally:
        for name, method in originals.items():
            setattr(S3Response, name, method)


@contextlib.contextmanager
def atomic_moto_server(bucket: str) -> Iterator[dict[str, str]]:
    """One moto S3 server on 127.0.0.1 with atomic requests; the environment that reaches it."""
    with atomic_s3_requests(), moto_s3_server(bucket) as env:
        yield env


# ------------------------------------------------------------------ counting S3 requests


class RequestCounter:
    """API calls made through one client, by operation (botocore's ``before-call.<service>``;
    S3 unless ``service`` says otherwise).

    ``before-call`` fires once per API call, not per HTTP retry, so a retried request counts once.
    """

    def __init__(self, client: Any, service: str = "s3") -> None:
        self.calls: Counter[str] = Counter()
        self._lock = threading.Lock()
        client.meta.events.register(f"before-call.{service}", self._count)

    def _count(self, model: Any, **_: Any) -> None:
        with self._lock:
            self.calls[model.name] += 1

    def take(self) -> Counter[str]:
        with self._lock:
            calls, self.calls = self.calls, Counter()
        return calls

    @property
    def total(self) -> int:
        with self._lock:
            return sum(self.calls.values())


def describe_ops(calls: Counter[str]) -> str:
    return ", ".join(f"{op} {n}" for op, n in sorted(calls.items()))


# ------------------------------------------------------------------ lazy invocations, routed


def lazy_key(payload: dict[str, Any]) -> str:
    """Which request a lazy invocation re-runs: the trigger ID it carries (a view's ID for a
    submitted modal, whose trigger ID the event builder makes up; an event's ID)."""
    raw = decoded_body(payload)
    if raw.startswith("{"):  # an Events API delivery: JSON, named by its event_id
        return "event:" + str(json.loads(raw).get("event_id"))
    form = parse_qs(raw)
    if "payload" in form:
        body = json.loads(form["payload"][0])
        if body.get("type") == "view_submission":
            return "view:" + str(body["view"]["id"])
        return "trigger:" + str(body.get("trigger_id"))
    return "trigger:" + form.get("trigger_id", ["?"])[0]


class LazyRouter:
    """Hands each captured lazy invocation to the thread whose request caused it.

    Bolt's Lambda adapter invokes the function (FakeLambda records it) before the ack returns, so
    by the time a thread has its ack, its lazy invocation is recorded; other threads' may be too.
    """

    def __init__(self, lam: FakeLambda) -> None:
        self.lam = lam
        self._lock = threading.Lock()
        self._filed: dict[str, list[Invocation]] = defaultdict(list)

    def take(self, key: str, timeout: float = 30.0) -> Invocation:
        deadline = time.monotonic() + timeout
        while True:
            with self._lock:
                for invocation in self.lam.take():
                    self._filed[lazy_key(invocation.payload)].append(invocation)
                if self._filed.get(key):
                    return self._filed[key].pop(0)
            if time.monotonic() > deadline:
                raise TimeoutError(f"no lazy invocation for {key} within {timeout:.0f} s")
            time.sleep(0.005)

    def leftover(self) -> int:
        with self._lock:
            for invocation in self.lam.take():
                self._filed[lazy_key(invocation.payload)].append(invocation)
            return sum(len(v) for v in self._filed.values())


# ------------------------------------------------------------------ the loopback world


@dataclass
class Loopback:
    """The world: fakes, one atomic moto server, the bot booted in this process."""

    world: World
    bucket: str
    env: dict[str, str]
    s3: Any  # the client the bot uses (counted)
    counter: RequestCounter
    check_s3: Any  # a second client, for checks, not counted
    router: LazyRouter
    log_path: str
    log_levels: Counter[str] = field(default_factory=Counter)

    @classmethod
    def around(cls, world: World, bucket: str) -> Loopback:
        """A Loopback over a world someone else built (the test suite's ``world`` fixture)."""
        return cls(
            world,
            bucket,
            world.env,
            world.s3,
            RequestCounter(world.s3),
            world.s3,
            LazyRouter(world.lam),
            log_path="",
        )

    @property
    def slack(self) -> FakeSlack:
        return self.world.slack

    def env_all(self) -> dict[str, str]:
        return {**os.environ, **self.env}

    def store(self) -> Any:
        from workflow.persistence.s3_store import S3CheckpointStore
        from workflow.shop.records import SHOP_PREFIX, SHOP_RECORDS

        return S3CheckpointStore(
            self.bucket, SHOP_PREFIX, s3_client=self.check_s3, codec=SHOP_RECORDS
        )

    def open_channel(self, channel: str, *people: str) -> None:
        """Make ``channel`` (if new) with the world's people, the bot and ``people`` in it."""
        if self.slack.channel_info(channel) is None:
            self.slack.add_channel(channel, members=PEOPLE)
        self.slack.join(channel, *people)

    def keys(self, suffix: str = "") -> list[str]:
        found: list[str] = []
        for page in self.check_s3.get_paginator("list_objects_v2").paginate(Bucket=self.bucket):
            found += [o["Key"] for o in page.get("Contents", []) if o["Key"].endswith(suffix)]
        return found


class _LevelCounter(logging.Handler):
    def __init__(self, levels: Counter[str]) -> None:
        super().__init__(logging.WARNING)
        self.levels = levels
        self._guard = threading.Lock()

    def emit(self, record: logging.LogRecord) -> None:
        with self._guard:
            self.levels[record.levelname] += 1


@contextlib.contextmanager
def _listen_backlog(n: int) -> Iterator[None]:
    """Fakes built here listen with a backlog of ``n`` (``socketserver`` defaults to 5, so 50
    threads connecting at once would see SYNs dropped and retried a second later: a fake's
    limit, not Slack's or Lambda's). The attribute is read once, when the server listens."""
    from http.server import ThreadingHTTPServer

    saved = ThreadingHTTPServer.request_queue_size
    ThreadingHTTPServer.request_queue_size = n
    try:
        yield
    finally:
        ThreadingHTTPServer.request_queue_size = saved


def _shared_s3_client() -> Any:
    """The bot's S3 client (``workflow.persistence.s3_client.S3_CONFIG``) with a connection pool as
    large as the threads that share it here. On Lambda each invocation has a process of its own; in
    this one process dozens of "invocations" share one client, and botocore's default pool of 10
    would make them open and discard connections (urllib3 warns "Connection pool is full")."""
    import boto3
    from botocore.config import Config

    from workflow.persistence.s3_client import S3_CONFIG

    return boto3.client("s3", config=S3_CONFIG.merge(Config(max_pool_connections=64)))


@contextlib.contextmanager
def loopback(bucket: str = "load-checkpoints", **extra_env: str) -> Iterator[Loopback]:
    """Start everything, boot the bot in this process; stop everything afterwards.

    The bot's JSON log lines go to a file (its path is in :attr:`Loopback.log_path`), and
    warnings and errors are counted in :attr:`Loopback.log_levels`.
    """
    from bot.handler import cold_start
    from bot.runtime import Runtime
    from bot.settings import Settings
    from workflow.persistence.s3_client import make_s3_client

    saved = dict(os.environ)
    with contextlib.ExitStack() as stack:
        aws = stack.enter_context(atomic_moto_server(bucket))
        with _listen_backlog(128):
            clock = PlayedClock()  # the bot's and the fake Slack's (bench.timers moves it)
            slack = fake_slack(wall=clock).start()
            lam = FakeLambda(access_key_id=aws["AWS_ACCESS_KEY_ID"]).start()
            claude = FakeAnthropic(responder=shorter_revisions)
        claude.start()
        for fake in (slack, lam, claude):
            stack.callback(fake.stop)
        env = {**aws, **bot_env(slack, lam, claude, bucket), **extra_env}
        try:
            for name in ("AWS_ENDPOINT_URL_S3", "AWS_PROFILE"):
                os.environ.pop(name, None)
            os.environ.update(env)
            boto3.DEFAULT_SESSION = None  # as a new process: this world's per-run AWS key
            s3, check_s3 = _shared_s3_client(), make_s3_client()
            counter = RequestCounter(s3)
            world = World(slack, lam, claude, env, os.environ.__setitem__, s3=s3, clock=clock)
            cold_start(Runtime.from_settings(Settings.from_env(), s3_client=s3, clock=clock))
            log_file = tempfile.NamedTemporaryFile(  # noqa: SIM115 - closed by the stack
                "w", prefix="weekly-shop-bench-", suffix=".log", delete=False
            )
            stack.callback(log_file.close)
            levels: Counter[str] = Counter()
            root = logging.getLogger()
            for handler in root.handlers:  # the bot's JSON handler, to the file
                if isinstance(handler, logging.StreamHandler):
                    handler.setStream(log_file)
            root.addHandler(_LevelCounter(levels))
            yield Loopback(
                world, bucket, env, s3, counter, check_s3, LazyRouter(lam), log_file.name, levels
            )
        finally:
            os.environ.clear()
            os.environ.update(saved)


def ordered_texts(slack: FakeSlack, channel: str) -> list[str]:
    """Every thread reply in ``channel`` that reports an order ("Ordered N items.")."""
    return [
        m["text"]
        for top in slack.messages(channel)
        for m in slack.thread(channel, top["ts"])
        if str(m.get("text", "")).startswith("Ordered")
    ]


def chain_problems(store: Any, tenant: str, session: str) -> list[str]:
    """What is wrong with a session's checkpoint chain (empty when it is unbroken): every parent
    exists in the session, exactly one root, no fork, sequences contiguous from 0."""
    infos = store.list(tenant, session)
    if not infos:
        return ["no checkpoints"]
    ids = {i.checkpoint_id for i in infos}
    problems = []
    roots = [i for i in infos if i.parent_checkpoint_id is None]
    if len(roots) != 1:
        problems.append(f"{len(roots)} roots")
    orphans = [i for i in infos if i.parent_checkpoint_id and i.parent_checkpoint_id not in ids]
    if orphans:
        problems.append(f"{len(orphans)} parents missing")
    children = Counter(i.parent_checkpoint_id for i in infos if i.parent_checkpoint_id)
    forks = [parent for parent, n in children.items() if n > 1]
    if forks:
        problems.append(f"{len(forks)} checkpoints with two children (a fork)")
    sequences = sorted(i.sequence for i in infos)
    if sequences != list(range(len(infos))):
        problems.append(f"sequences not contiguous: {sequences}")
    return problems
