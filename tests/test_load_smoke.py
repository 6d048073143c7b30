"""A short version of the load run (``make load``, bench/load.py), in the normal test suite.

Same scenarios, smaller: 20 people click Approve on one basket at the same moment, and 10
sessions go start -> change -> approve at once. S3 is moto in this process with each request made
atomic (the ``atomic_moto`` fixture), as real S3's conditional writes are. The bench drives the
load; what must hold is asserted here, from what the fake Slack shows and what S3 holds, so a
check weakened in bench/load.py cannot make this test pass.
"""

from __future__ import annotations

from typing import Any

from bench.common import Loopback
from bench.load import Scenario, concurrent_clicks, concurrent_sessions
from bot.steps.click_said import BUSY
from tests.bot_kit import World, header, objects
from tests.fault_kit import TENANT, assert_chain_intact, lock_keys

ALREADY = "This basket was already answered by <@U0CLICK"


def failures(result: Scenario) -> str:
    return "\n".join(f"{c.name}: {c.detail}" for c in result.checks if not c.ok)


def replies(world: World, channel: str) -> list[str]:
    return [
        m["text"]
        for top in world.slack.messages(channel)
        for m in world.slack.thread(channel, top["ts"])
    ]


def sessions_in(s3: Any, bucket: str) -> set[str]:
    return {k.split("/s/", 1)[1].split("/", 1)[0] for k in objects(s3, bucket) if "/cp/" in k}


def test_concurrent_clicks_on_one_basket_resume_once(world: World, s3: Any, bucket: str) -> None:
    n = 20
    result = concurrent_clicks(Loopback.around(world, bucket), n, timeout=60)
    assert result.finished, failures(result)
    channel = "C0CLICKS"
    assert replies(world, channel) == ["Ordered 10 items."]
    (basket,) = world.slack.messages(channel)
    assert world.buttons(basket) == {} and "Approved by <@U0CLICK" in str(basket["blocks"])
    updates = [c for c in world.slack.calls_to("chat.update") if c.args.get("channel") == channel]
    marked = [c for c in updates if not c.error and "Approved by" in str(c.args.get("blocks"))]
    assert len(marked) == 1  # (the others: the draft's updates while basket 1 was written)
    told = [e["text"] for e in world.slack.ephemerals() if e["channel"] == channel]
    assert len(told) == n - 1
    assert all(t == BUSY or t.startswith(ALREADY) for t in told), told
    (session,) = sessions_in(s3, bucket)
    assert_chain_intact(s3, bucket, session)
    assert lock_keys(s3, bucket) == []
    assert result.ok, failures(result)


def test_concurrent_sessions_all_end_ordered_with_unbroken_chains(
    world: World, s3: Any, bucket: str
) -> None:
    n = 10
    result = concurrent_sessions(Loopback.around(world, bucket), n, workers=5, timeout=60)
    assert result.finished, failures(result)
    for i in range(n):
        channel = f"C0LOAD{i:05d}"
        assert [header(m) for m in world.slack.messages(channel)] == [
            "Basket 1 of 3",
            "Basket 2 of 3",
        ]
        assert replies(world, channel) == ["Ordered 7 items."], channel
    assert [e["text"] for e in world.slack.ephemerals()] == []
    sessions = sessions_in(s3, bucket)
    assert len(sessions) == n
    for session in sessions:
        assert_chain_intact(s3, bucket, session, TENANT)
    assert lock_keys(s3, bucket) == []
    assert result.ok, failures(result)


def test_the_timer_bench_counts_what_a_reminder_an_expiry_and_an_approve_cost(
    world: World, bucket: str
) -> None:
    """bench/timers.py on the test world (moto's S3 and Scheduler in this process)."""
    import boto3

    from bench import timers

    world.boot(**timers.TIMER_ENV)
    rows = timers.measure(
        Loopback.around(world, bucket), boto3.client("scheduler", region_name="us-east-1")
    )
    reminder, expiry, approve = rows
    assert reminder.baseline.endswith("Scheduler: CreateSchedule 1")
    assert expiry.baseline.endswith("Scheduler: DeleteSchedule 2")
    assert approve.ok and int(approve.ours) <= 11  # 7 S3, 2 DeleteSchedule, the order's 2 PUTs
