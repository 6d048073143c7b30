"""``make bench``: every benchmark in one run, printed as one table.

    .venv/bin/python -m bench

Slack level (bench.slack: the bot handler in this process and in fresh processes), engine
level (bench.resume), a basket's timers (bench.timers: S3 and Scheduler requests) and the Home
tab (bench.home: S3 requests with 1 and 500 past outcomes), many workspaces (bench.installs:
the installation read, cold and warm), each order's destination (bench.orders: requests and
time per order) and a change's cost (bench.revisions: output tokens and waiting, the difference
against the whole basket again, with a stated model of the API's speed), against
moto (S3, Scheduler) and the fake Slack, Lambda and Anthropic APIs on 127.0.0.1, and prices
(bench.prices: /shop to a priced basket, Kroger calls a basket and an edit, with a stated model
of the Kroger stand-in's latency), an order into a Kroger cart (bench.kroger_cart: requests
and time) and a basket shown as it is written (bench.drafts: /shop to the first item and to the
whole basket, with the same model of the API's speed); each figure
beside a baseline measured in the same run.
"""

from __future__ import annotations

import asyncio
import dataclasses
import os
import time

from bench import (
    coldstart,
    drafts,
    home,
    installs,
    kroger_cart,
    orders,
    prices,
    resume,
    revisions,
    slack,
    timers,
)
from bench.common import loopback
from bench.table import render


def main() -> None:
    started = time.perf_counter()
    print(f"bench: one moto S3 server, fake Slack/Lambda/Anthropic, {os.cpu_count()} CPUs ...")
    with loopback("bench-slack") as lb:
        slack_rows, found = slack.measure(lb)
        cold_rows, cold_notes = coldstart.measure(lb)
        lb.check_s3.create_bucket(Bucket="bench-engine")
        engine_rows = asyncio.run(resume.measure(lb.check_s3, "bench-engine"))
        engine_rows += orders.measure(lb)
        engine_rows += revisions.measure(lb)
        engine_rows += drafts.measure(lb)
        engine_rows.append(revisions.fresh_edit(lb))
        engine_rows += prices.measure(lb)
        engine_rows += kroger_cart.cart_rows(lb)
    with loopback("bench-home") as lb:
        home_rows = home.measure(lb)
    with loopback("bench-installs", **installs.MANY) as lb:
        home_rows += installs.measure(lb)
    with loopback("bench-timers", **timers.TIMER_ENV) as lb:
        timer_rows = timers.measure(lb)
        # As deployed: the approve also makes a Scheduler client and deletes the basket's timers.
        with_timers = slack.fresh_approve_response(lb)
        timer_rows.append(
            dataclasses.replace(with_timers, figure=f"{with_timers.figure}, timers on")
        )
    print()
    print(
        render(cold_rows + slack_rows[:-1] + engine_rows + timer_rows + home_rows + slack_rows[-1:])
    )
    print("\n".join(cold_notes))
    slack.print_profile(found)
    print(f"\n({time.perf_counter() - started:.0f} s)")


if __name__ == "__main__":
    main()
