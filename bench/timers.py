"""Benchmark: what a waiting basket's timers cost, in S3 and EventBridge Scheduler requests.

A reminder, the expiry and an approve that deletes its basket's timer, each counted through the
bot's own clients (botocore's ``before-call`` events: one per API call, retries not counted),
against moto's S3 and Scheduler. Nothing lists sessions on a timer, so these do not grow with the
bucket. The approve must stay within 9 requests of any kind (7 S3, one of them the workspace's
settings, + 2 DeleteSchedule: a basket's timers take turns between two names, so an answer
deletes both).

    .venv/bin/python -m bench.timers      (make bench runs it)
"""

from __future__ import annotations

import json
from collections import Counter
from typing import Any

import boto3

from bench.common import Loopback, RequestCounter, describe_ops, loopback
from bench.load import click, start
from bench.table import Row, render

GROUP = "bench-basket-timers"
TIMER_ENV = {
    "TIMER_GROUP": GROUP,
    "TIMER_TARGET_ARN": "arn:aws:lambda:us-east-1:123456789012:function:weekly-shop-bench",
    "TIMER_ROLE_ARN": "arn:aws:iam::123456789012:role/weekly-shop-bench-timers",
    "ORDER_DELAY": "0",  # an approve orders at once here, as before the undo window
}


def _armed(scheduler: Any) -> dict[str, Any]:
    """The one armed schedule's payload (moto never fires it: the bench delivers it, and
    deletes the schedule as ActionAfterCompletion DELETE would; not counted)."""
    (listed,) = scheduler.list_schedules(GroupName=GROUP)["Schedules"]
    got = scheduler.get_schedule(Name=listed["Name"], GroupName=GROUP)
    scheduler.delete_schedule(Name=listed["Name"], GroupName=GROUP)
    payload: dict[str, Any] = json.loads(got["Target"]["Input"])
    return payload


def _row(what: str, s3: Counter[str], timers: Counter[str], target: int | None = None) -> Row:
    total = sum(s3.values()) + sum(timers.values())
    ops = describe_ops(s3) + (f"; Scheduler: {describe_ops(timers)}" if timers else "")
    return Row(
        what,
        f"{total}",
        ops,
        target="-" if target is None else f"<= {target}",
        ok=None if target is None else total <= target,
    )


def measure(lb: Loopback, checks: Any = None) -> list[Row]:
    """The rows; ``checks`` is a Scheduler client of the world's (default: at its endpoint)."""
    from bot.handler import cold_start

    rt, _ = cold_start()
    if rt.schedules.timers is None:
        raise RuntimeError("the bench world has no timers (TIMER_* unset)")
    checks = checks or boto3.client("scheduler", endpoint_url=lb.env["AWS_ENDPOINT_URL"])
    checks.create_schedule_group(Name=GROUP)
    counted = RequestCounter(rt.schedules.timers.client, service="scheduler")

    def delivered(event: dict[str, Any]) -> tuple[Counter[str], Counter[str]]:
        if "weekly_shop_timer" in event:  # at its time: the bot's clock moved there
            lb.world.clock.reach(json.loads(event["weekly_shop_timer"])["at"])
        lb.counter.take(), counted.take()
        response = lb.world.send(event)
        if response.get("fired") is False or response.get("statusCode", 200) != 200:
            raise RuntimeError(f"the delivery failed: {response}")
        return lb.counter.take(), counted.take()

    start(lb, "C0TIMERS", "timers-shop")
    reminder = delivered(_armed(checks))
    delivered(_armed(checks))  # the second reminder
    expiry = delivered(_armed(checks))

    basket = start(lb, "C0TIMERS2", "timers-shop-2")
    click(lb, basket, "approve_basket", "U0BOB", "timers-approve", "C0TIMERS2")
    approve = delivered(lb.router.take("trigger:timers-approve").payload)
    if checks.list_schedules(GroupName=GROUP)["Schedules"]:
        raise RuntimeError("a timer outlived its basket")
    return [
        _row("requests per reminder (S3 + Scheduler)", *reminder),
        _row("requests per expiry (S3 + Scheduler)", *expiry),
        # 7 S3 + 2 DeleteSchedule, and the order record's two PUTs (issue 22)
        _row("requests per approve, its timer deleted", *approve, target=11),
    ]


def main() -> None:
    with loopback("bench-timers", **TIMER_ENV) as lb:
        print(render(measure(lb)))


if __name__ == "__main__":
    main()
