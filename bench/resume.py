"""Benchmark: what one approve resume costs in S3 requests, bytes and time.

Everything runs against one moto server on 127.0.0.1 in this process, and every figure is set
against a baseline measured in the same run:

- S3 requests per approve resume, for a session holding 1 and 100 checkpoints (must be equal);
- bytes of the pending checkpoint against the basket JSON it carries;
- resume time against raw boto3 making the same minimal requests (lock, list, get, put, put,
  delete), so the ratio is the engine's own overhead over the S3 round trips it needs.

    make bench        (or: .venv/bin/python -m bench.resume)
"""

from __future__ import annotations

import asyncio
import os
import statistics
import time
from collections import Counter
from typing import Any

from tests.fakes.moto_server import moto_s3_server
from workflow.checkpoint import PendingRequest
from workflow.events import RequestInfoEvent
from workflow.memory_store import InMemoryCheckpointStore
from workflow.respond import respond_in_session
from workflow.runner import Run
from workflow.s3_client import make_s3_client
from workflow.s3_lock import S3SessionLock
from workflow.s3_store import S3CheckpointStore
from workflow.session import SessionCheckpoints
from workflow.shop.basket import Basket, BasketDecision
from workflow.shop.graph import build_shop_workflow
from workflow.shop.shopper import OfflineShopper

BUCKET = "bench-checkpoints"
TENANT = "T0BENCH"
REPEATS = 40


class RequestCounter:
    def __init__(self, s3: Any) -> None:
        self.calls: Counter[str] = Counter()
        s3.meta.events.register("before-call.s3", self._count)

    def _count(self, model: Any, **_: Any) -> None:
        self.calls[model.name] += 1

    def take(self) -> Counter[str]:
        calls, self.calls = self.calls, Counter()
        return calls


async def pending_state(signer: Any) -> tuple[str, Basket]:
    """The state of a session paused at basket 1, made once in memory."""
    store = InMemoryCheckpointStore()
    run = Run.start(
        build_shop_workflow(OfflineShopper()),
        "the week",
        SessionCheckpoints(store, signer, "t", "s"),
    )
    baskets = [e.data async for e in run.watch() if isinstance(e, RequestInfoEvent)]
    basket = baskets[0]
    latest = store.latest("t", "s")
    assert latest is not None
    return latest.state, basket


async def seed(store: S3CheckpointStore, signer: Any, session: str, state: str, n: int) -> None:
    checkpoints = SessionCheckpoints(store, signer, TENANT, session)
    for _ in range(n):  # like replayed supersteps: n signed checkpoints, the latest pending
        await checkpoints.save(state)


def raw_resume(s3: Any, session: str, body: bytes) -> None:
    """The same minimal requests with boto3 alone: the floor any resume stands on."""
    base = f"weekly-shop/{TENANT}/s/{session}/"
    etag = s3.put_object(Bucket=BUCKET, Key=base + "lock", Body=b"{}", IfNoneMatch="*")["ETag"]
    key = s3.list_objects_v2(Bucket=BUCKET, Prefix=base + "cp/", MaxKeys=1)["Contents"][0]["Key"]
    s3.get_object(Bucket=BUCKET, Key=key)["Body"].read()
    s3.put_object(Bucket=BUCKET, Key=base + "cp/999997", Body=body, IfNoneMatch="*")
    s3.put_object(Bucket=BUCKET, Key=f"weekly-shop/{TENANT}/r/run/{session}", Body=b"")
    s3.delete_object(Bucket=BUCKET, Key=base + "lock", IfMatch=etag)


async def main() -> None:
    from workflow.signing import CheckpointSigner

    signer = CheckpointSigner(b"bench-signing-key-0123456789")
    with moto_s3_server(BUCKET) as env:
        os.environ.update(env)
        s3 = make_s3_client()
        store, lock = S3CheckpointStore(BUCKET, s3_client=s3), S3SessionLock(BUCKET, s3_client=s3)
        counter = RequestCounter(s3)
        state, basket = await pending_state(signer)

        requests: dict[int, Counter[str]] = {}
        for n in (1, 100):
            await seed(store, signer, f"count-{n}", state, n)
            counter.take()
            await respond_in_session(
                build_shop_workflow(OfflineShopper()),
                SessionCheckpoints(store, signer, TENANT, f"count-{n}"),
                lock,
                _request_id(state),
                approve_it,
            )
            requests[n] = counter.take()

        await seed(store, signer, "bytes", state, 1)
        head = s3.list_objects_v2(Bucket=BUCKET, Prefix=f"weekly-shop/{TENANT}/s/bytes/cp/")
        stored = head["Contents"][0]["Size"]
        basket_json = len(basket.model_dump_json().encode())

        ours: list[float] = []
        raw: list[float] = []
        body = s3.get_object(Bucket=BUCKET, Key=head["Contents"][0]["Key"])["Body"].read()
        for i in range(REPEATS):
            await seed(store, signer, f"t-{i}", state, 1)
            t0 = time.perf_counter()
            await respond_in_session(
                build_shop_workflow(OfflineShopper()),
                SessionCheckpoints(store, signer, TENANT, f"t-{i}"),
                lock,
                _request_id(state),
                approve_it,
            )
            ours.append(time.perf_counter() - t0)
            await seed(store, signer, f"r-{i}", state, 1)
            t0 = time.perf_counter()
            raw_resume(s3, f"r-{i}", body)
            raw.append(time.perf_counter() - t0)

    one, hundred = sum(requests[1].values()), sum(requests[100].values())
    ours_ms, raw_ms = statistics.median(ours) * 1000, statistics.median(raw) * 1000
    rows = [
        ("S3 requests per approve, 1 checkpoint", f"{one}", _ops(requests[1])),
        (
            "S3 requests per approve, 100 checkpoints",
            f"{hundred}",
            "equal" if one == hundred else "DIFFERENT",
        ),
        ("pending checkpoint bytes (stored)", f"{stored}", f"basket JSON {basket_json} B"),
        (
            "checkpoint bytes / basket JSON bytes",
            f"{stored / basket_json:.2f}x",
            f"state JSON {len(state)} B",
        ),
        (f"approve resume, median of {REPEATS}", f"{ours_ms:.1f} ms", f"raw boto3 {raw_ms:.1f} ms"),
        ("resume time / raw boto3 time", f"{ours_ms / raw_ms:.2f}x", "same moto server, same run"),
    ]
    width = max(len(r[0]) for r in rows)
    print(f"{'figure':<{width}}  {'value':>9}  baseline / note")
    print(f"{'-' * width}  {'-' * 9}  {'-' * 40}")
    for name, value, note in rows:
        print(f"{name:<{width}}  {value:>9}  {note}")


def approve_it(request: PendingRequest) -> BasketDecision:
    return BasketDecision(approved=True, round=request.data.round)


def _request_id(state: str) -> str:
    import json

    return str(json.loads(state)["requests"][0]["id"])


def _ops(calls: Counter[str]) -> str:
    return ", ".join(f"{op} {n}" for op, n in sorted(calls.items()))


if __name__ == "__main__":
    asyncio.run(main())
