"""Benchmark, engine level: what one approve resume costs in time and bytes, against baselines.

Everything runs against one moto server on 127.0.0.1 in this process (requests made atomic, see
``bench.common``), and every figure is set against a baseline measured in the same run:

- resume time and throughput against raw boto3 making the same minimal requests (lock, list,
  get, put, delete), so the ratio is the engine's own overhead over the S3 round trips;
- the stored pending checkpoint after basket 1, 2 and 3 (a 17-item basket each time) against
  the basket's JSON, signature and lineage included.

    .venv/bin/python -m bench.resume      (make bench runs this and the Slack-level figures)
"""

from __future__ import annotations

import asyncio
import json
import os
import statistics
import time
from dataclasses import dataclass
from typing import Any

from bench.common import BASKET_17, TENANT, atomic_moto_server
from bench.table import Row, ratio, render
from bot.sandbox.anthropic_tools import basket_items
from workflow.engine.respond import respond_in_session
from workflow.engine.runner import Run
from workflow.persistence.checkpoint import PendingRequest
from workflow.persistence.s3_client import make_s3_client
from workflow.persistence.s3_lock import S3SessionLock
from workflow.persistence.s3_store import S3CheckpointStore
from workflow.persistence.session import SessionCheckpoints
from workflow.persistence.signing import CheckpointSigner
from workflow.shop.basket import Basket, ShopRequest
from workflow.shop.decision import BasketDecision
from workflow.shop.graph import build_shop_workflow
from workflow.shop.records import SHOP_PREFIX, SHOP_RECORDS
from workflow.shop.shopper import Brief, ShopperReply

REPEATS = 40
SIGNER = CheckpointSigner(b"bench-signing-key-0123456789")
REQUEST = ShopRequest(text="dinners this week", requested_by="U0ALICE")


class Basket17Shopper:
    """Writes the reference article's 17-item basket, whatever it is asked."""

    label = "bench"

    async def write(self, brief: Brief) -> ShopperReply:
        return ShopperReply(items=basket_items("\n".join(BASKET_17)), output_tokens=150)


def workflow() -> Any:
    return build_shop_workflow(Basket17Shopper())


def basket_json_bytes(round: int = 1) -> int:
    value = Basket(items=basket_items("\n".join(BASKET_17)), round=round).to_json()
    return len(json.dumps(value, separators=(",", ":"), ensure_ascii=False).encode())


def approve(request: PendingRequest) -> BasketDecision:
    return BasketDecision(approved=True, round=request.data.round)


def less_meat(request: PendingRequest) -> BasketDecision:
    return BasketDecision(approved=False, change="less meat", round=request.data.round)


@dataclass
class Bench:
    s3: Any
    bucket: str

    def __post_init__(self) -> None:
        self.store = S3CheckpointStore(
            self.bucket, SHOP_PREFIX, s3_client=self.s3, codec=SHOP_RECORDS
        )
        self.lock = S3SessionLock(self.bucket, SHOP_PREFIX, s3_client=self.s3)

    def checkpoints(self, session: str) -> SessionCheckpoints:
        return SessionCheckpoints(self.store, SIGNER, TENANT, session)

    def prefix(self, session: str) -> str:
        return f"weekly-shop/{TENANT}/s/{session}/"

    def latest_object(self, session: str) -> dict[str, Any]:
        listed = self.s3.list_objects_v2(
            Bucket=self.bucket, Prefix=self.prefix(session) + "cp/", MaxKeys=1
        )
        return dict(listed["Contents"][0])

    async def paused(self, session: str) -> Run:
        """A new session, run to basket 1."""
        run = Run.start(workflow(), REQUEST, self.checkpoints(session))
        _ = [e async for e in run.watch()]
        return run

    async def answer(self, session: str, run: Run, decide: Any) -> Run:
        (request_id,) = run.pending_requests
        answered = await respond_in_session(
            workflow(),
            self.checkpoints(session),
            self.lock,
            request_id,
            decide,
            answered_by="U0BOB",
        )
        return answered.run

    async def rounds_bytes(self) -> list[int]:
        """Stored bytes of the pending checkpoint after basket 1, 2 and 3 of one session."""
        session = "bytes-rounds"
        run = await self.paused(session)
        sizes = [int(self.latest_object(session)["Size"])]
        for _ in (1, 2):
            run = await self.answer(session, run, less_meat)
            sizes.append(int(self.latest_object(session)["Size"]))
        return sizes

    async def seed(self, session: str, state: str) -> None:
        await self.checkpoints(session).save(state)

    def raw_resume(self, session: str, body: bytes) -> None:
        """The same minimal requests with boto3 alone: the floor any resume stands on."""
        s3, bucket, base = self.s3, self.bucket, self.prefix(session)
        lock = s3.put_object(Bucket=bucket, Key=base + "lock", Body=b"{}", IfNoneMatch="*")
        listed = s3.list_objects_v2(Bucket=bucket, Prefix=base + "cp/", MaxKeys=1)
        s3.get_object(Bucket=bucket, Key=listed["Contents"][0]["Key"])["Body"].read()
        s3.put_object(Bucket=bucket, Key=base + "cp/999997", Body=body, IfNoneMatch="*")
        s3.delete_object(Bucket=bucket, Key=base + "lock", IfMatch=lock["ETag"])

    async def resume_times(self) -> tuple[list[float], list[float]]:
        """Approves through the engine, and raw boto3 making the same requests, interleaved."""
        template = "timing-template"
        run = await self.paused(template)
        latest = self.store.latest(TENANT, template)
        assert latest is not None
        (request_id,) = run.pending_requests
        key = self.latest_object(template)["Key"]
        body = self.s3.get_object(Bucket=self.bucket, Key=key)["Body"].read()
        ours: list[float] = []
        raw: list[float] = []
        for i in range(REPEATS):
            await self.seed(f"t-{i}", latest.state)
            t0 = time.perf_counter()
            await respond_in_session(
                workflow(), self.checkpoints(f"t-{i}"), self.lock, request_id, approve
            )
            ours.append(time.perf_counter() - t0)
            await self.seed(f"r-{i}", latest.state)
            t0 = time.perf_counter()
            self.raw_resume(f"r-{i}", body)
            raw.append(time.perf_counter() - t0)
        return ours, raw


async def measure(s3: Any, bucket: str) -> list[Row]:
    bench = Bench(s3, bucket)
    sizes = await bench.rounds_bytes()
    ours, raw = await bench.resume_times()
    ours_ms, raw_ms = statistics.median(ours) * 1000, statistics.median(raw) * 1000
    ours_rate, raw_rate = len(ours) / sum(ours), len(raw) / sum(raw)
    rows = [
        Row(
            f"approve resume in-process (engine), median of {REPEATS}",
            f"{ours_ms:.1f} ms",
            f"raw boto3, same requests: {raw_ms:.1f} ms",
            ratio(ours_ms, raw_ms),
        ),
        Row(
            f"resume throughput, sequential, {REPEATS} resumes",
            f"{ours_rate:.1f} /s",
            f"raw boto3: {raw_rate:.1f} /s",
            ratio(ours_rate, raw_rate),
        ),
    ]
    rows += [
        Row(
            f"pending checkpoint bytes after basket {n}",
            f"{size} B",
            f"basket JSON {basket_json_bytes(n)} B",
            ratio(size, basket_json_bytes(n)),
        )
        for n, size in enumerate(sizes, 1)
    ]
    basket = basket_json_bytes()
    rows.append(
        Row(
            "pending checkpoint / basket JSON (17 items)",
            f"{sizes[0] / basket:.2f}x",
            f"{sizes[0]} B / {basket} B",
            ratio(sizes[0], basket),
            "<= 1.5x",
            "2.1x",
            "1.7x",
            ok=sizes[0] / basket <= 1.5,
        )
    )
    return rows


def main() -> None:
    bucket = "bench-checkpoints"
    saved = dict(os.environ)
    try:
        with atomic_moto_server(bucket) as env:
            os.environ.update(env)
            rows = asyncio.run(measure(make_s3_client(), bucket))
    finally:
        os.environ.clear()
        os.environ.update(saved)
    print(render(rows))


if __name__ == "__main__":
    main()
