"""Benchmark: what opening the Home tab costs in S3 requests, with 1 and with 500 past outcomes,
and then with 300 baskets waiting.

The workspace has one basket waiting and N ended sessions, each as an ended session leaves the
bucket (its outcome record under the history prefix, its receipt under ``s/``, written through
the bot's own stores, not counted). Then a signed ``app_home_opened`` goes through the handler
and its lazy run publishes the tab; its S3 requests are counted through the bot's client
(botocore's ``before-call``: one per API call). The bound (``bot.steps.home``): 1 LIST of outcome
names, at most 10 GETs of outcomes, 1 LIST of the sessions' objects per 1,000 objects, and a
HEAD of each of the 20 newest receipts of sessions not ended (``bot.steps.home.READ_WAITING``),
and the GET of the workspace's settings every lazy run makes: 2 + 10 + 1 + 1 = 14 for one
waiting basket, however long the history (from 10 past outcomes on, all ten shown, the count
stays the same); 2 + 10 + 20 + 1 = 33 with 300 waiting (the 500 ended sessions' receipts and
the 300 waiting ones still fit one LIST page), where reading every receipt took 314.

    .venv/bin/python -m bench.home      (make bench runs it)
"""

from __future__ import annotations

import time
from collections import Counter
from datetime import UTC, datetime
from typing import Any

from bench.common import Loopback, describe_ops, loopback
from bench.load import deliver, send, start
from bench.table import Row, ratio, render
from bot.sandbox.slack_events import app_home_opened
from bot.sandbox.world import SECRET

BOUND = 14
WAITING = 300
WAITING_BOUND = 33


def _ended(session: str, checkpoint: str) -> Any:
    from bot.records.history import Ended

    item = {"name": "chicken breast", "quantity": 500, "unit": "g", "note": None, "aisle": None}
    return Ended(
        session=session,
        checkpoint_id=checkpoint,
        kind="ordered",
        at=1_800_000_000,
        answered_by="U0BOB",
        requested_by="U0ALICE",
        request="dinners this week",
        round=1,
        items=[item] * 17,
        channel="C0HOME",
        ts="1800000000.000100",
    )


def _seed(rt: Any, tenant: str, first: int, last: int) -> None:
    """Ended sessions ``first`` to ``last``: an outcome record and a receipt each."""
    for n in range(first, last):
        session, checkpoint = f"bench-ended-{n:04d}", f"{n % 999_999:06d}-0000abcd"
        rt.records.receipts.mark_shown(tenant, session, checkpoint)
        rt.records.history.write(
            tenant, _ended(session, checkpoint), datetime.fromtimestamp(1e9 + n, UTC)
        )


def _seed_waiting(rt: Any, tenant: str, n: int) -> None:
    """``n`` baskets waiting in the channel, each as a posted basket leaves its receipt."""
    from bot.records.receipts import Waiting

    for i in range(n):
        waiting = Waiting(
            request_id=f"bench{i:04d}",
            channel="C0HOME",
            ts=f"1700000000.{i:06d}",
            round=1,
            requested_by="U0ALICE",
            posted_at=int(time.time()) - 600,
        )
        rt.records.receipts.mark_shown(tenant, f"bench-waiting-{i:04d}", "000001-0000abcd", waiting)


def _open(lb: Loopback, event_id: str, expect: str) -> Counter[str]:
    """The S3 requests of one signed ``app_home_opened`` and its lazy run."""
    lb.counter.take()
    ack = send(lb, app_home_opened(SECRET, "U0ALICE", event_id=event_id))
    if ack.get("statusCode") != 200:
        raise RuntimeError(f"app_home_opened acked {ack}")
    deliver(lb, f"event:{event_id}")
    counts = lb.counter.take()
    view = lb.world.slack.home("U0ALICE")
    if view is None or expect not in str(view):
        raise RuntimeError(f"the Home tab did not say {expect!r}")
    return counts


def measure(lb: Loopback) -> list[Row]:
    from bot.handler import cold_start

    rt, _ = cold_start()
    tenant = lb.world.slack.team_id
    start(lb, "C0HOME", "home-shop")  # the one basket waiting
    counts = {}
    seeded = 0
    for past in (1, 10, 500):
        _seed(rt, tenant, seeded, past)
        seeded = past
        counts[past] = _open(lb, f"EvHOME{past}", "Basket 1 of 3")
    one, ten, many = (sum(counts[n].values()) for n in (1, 10, 500))
    _seed_waiting(rt, tenant, WAITING)
    waits = _open(lb, "EvHOMEWAIT", "older ones, not read here")
    return [
        Row(
            "S3 requests to open the Home tab, 1 past outcome",
            f"{one}",
            describe_ops(counts[1]),
            target=f"<= {BOUND}",
            ok=one <= BOUND,
        ),
        Row(
            "S3 requests to open the Home tab, 500 past outcomes",
            f"{many}",
            f"10 past outcomes (all shown): {ten}",
            ratio(many, ten),
            f"<= {BOUND}, equal",
            ok=many <= BOUND and many == ten,
        ),
        Row(
            f"S3 requests to open the Home tab, {WAITING} baskets waiting",
            f"{waits.total()}",
            describe_ops(waits),
            target=f"<= {WAITING_BOUND}",
            ok=waits.total() <= WAITING_BOUND and waits["HeadObject"] <= 20,
        ),
    ]


def main() -> None:
    with loopback("bench-home") as lb:
        print(render(measure(lb)))


if __name__ == "__main__":
    main()
