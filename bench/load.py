"""Load: many people clicking one basket at once, and many sessions at once, against one S3.

    make load        (or: .venv/bin/python -m bench.load [--clicks 50] [--sessions 200])

One moto S3 server (requests made atomic, as real S3's are: see ``bench.common``), the fake Slack,
Lambda and Anthropic APIs, and the real bot handler in this process. Lazy invocations captured by
the fake Lambda are delivered as new invocations, each by the thread whose click caused it.

1. ``--clicks`` people click Approve on one basket at the same moment (threads behind a barrier):
   exactly one resume and one "Ordered N items." in the thread; everyone else is told why in an
   ephemeral (busy, or already answered); no lock object left; the checkpoint chain unbroken.
2. ``--sessions`` sessions each go start -> change -> approve (each session's steps in order,
   ``--workers`` sessions at a time): every session ends ordered, exactly once; no lock object
   left; every session's chain unbroken (one root, every parent present, no fork, sequences
   contiguous). Sessions per second and S3 requests are reported.

It ends with a PASS/FAIL table and exits 1 on any failure. Every step has a timeout, and so has
the whole run.
"""

from __future__ import annotations

import argparse
import concurrent.futures as cf
import json
import os
import statistics
import sys
import threading
import time
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from bench.common import TENANT, Loopback, chain_problems, describe_ops, loopback, ordered_texts
from bot.sandbox.slack_requests import block_action, slash_command, view_submission
from bot.sandbox.world import SECRET, header

BUSY = "Someone else is answering this basket right now."
ALREADY = "This basket was already answered"
STEP_TIMEOUT = 60.0  # seconds for one Slack request or one lazy invocation


@dataclass(frozen=True)
class Check:
    name: str
    ok: bool
    detail: str = ""


@dataclass
class Scenario:
    name: str
    checks: list[Check] = field(default_factory=list)
    figures: list[tuple[str, str]] = field(default_factory=list)
    finished: bool = True

    def check(self, name: str, ok: bool, detail: str = "") -> None:
        self.checks.append(Check(name, bool(ok), detail))

    @property
    def ok(self) -> bool:
        return self.finished and all(c.ok for c in self.checks)


# ------------------------------------------------------------------ what one person does


class StepFailed(Exception):
    pass


def send(lb: Loopback, event: dict[str, Any]) -> dict[str, Any]:
    response = lb.world.send(event)
    if response.get("statusCode") != 200:
        raise StepFailed(f"HTTP {response.get('statusCode')}: {response.get('body')!r}")
    return response


def deliver(lb: Loopback, key: str) -> None:
    """Run the lazy invocation that ``key``'s request caused, as a new invocation."""
    invocation = lb.router.take(key, timeout=STEP_TIMEOUT)
    send(lb, invocation.payload)


def baskets(lb: Loopback, channel: str) -> list[dict[str, Any]]:
    return [m for m in lb.slack.messages(channel) if header(m)]


def click_event(
    lb: Loopback, message: dict[str, Any], action: str, user: str, trigger: str, channel: str
) -> dict[str, Any]:
    """The signed block_actions event of ``user`` pressing ``action`` on ``message``."""
    return block_action(
        SECRET,
        action_id=action,
        value=lb.world.buttons(message)[action],
        user_id=user,
        channel_id=channel,
        message_ts=message["ts"],
        trigger_id=trigger,
        response_url_base=lb.slack.hooks_url,
    )


def click(
    lb: Loopback, message: dict[str, Any], action: str, user: str, trigger: str, channel: str
) -> None:
    send(lb, click_event(lb, message, action, user, trigger, channel))


def start(lb: Loopback, channel: str, trigger: str) -> dict[str, Any]:
    """``/shop`` in ``channel`` (made now if new) and its lazy invocation: basket 1, posted."""
    lb.open_channel(channel)
    ack = send(
        lb,
        slash_command(
            SECRET,
            text="dinners this week",
            user_id="U0ALICE",
            channel_id=channel,
            trigger_id=trigger,
            response_url_base=lb.slack.hooks_url,
        ),
    )
    if "Writing your basket" not in str(ack.get("body")):
        raise StepFailed(f"/shop acked {ack.get('body')!r}")
    deliver(lb, f"trigger:{trigger}")
    posted = baskets(lb, channel)
    if len(posted) != 1:
        raise StepFailed(f"{len(posted)} baskets posted after /shop")
    return posted[0]


def change(lb: Loopback, basket: dict[str, Any], channel: str, n: int, text: str) -> None:
    """Change…, the modal, submitted, and its lazy invocation."""
    trigger = lb.slack.issue_trigger("U0BOB")  # Slack issues it with the click: views.open takes it
    click(lb, basket, "change_basket", "U0BOB", trigger, channel)
    opened = [c for c in lb.slack.calls_to("views.open") if c.args.get("trigger_id") == trigger]
    if len(opened) != 1 or opened[0].error:
        raise StepFailed(f"views.open for {trigger}: {[c.error for c in opened]}")
    view = opened[0].args["view"]
    view = json.loads(view) if isinstance(view, str) else view
    view_id = f"VLOAD{n:06d}"
    send(
        lb,
        view_submission(
            SECRET,
            callback_id=view["callback_id"],
            private_metadata=view["private_metadata"],
            values={"change": {"change_text": text}},
            user_id="U0BOB",
            view_id=view_id,
        ),
    )
    deliver(lb, f"view:{view_id}")


def session_of(lb: Loopback, message: dict[str, Any]) -> str:
    return str(json.loads(lb.world.buttons(message)["approve_basket"])["s"])


# ------------------------------------------------------------------ 1. many clicks, one basket


def concurrent_clicks(lb: Loopback, n: int, timeout: float = 120.0) -> Scenario:
    """``n`` people click Approve on one basket at the same moment."""
    result = Scenario(f"{n} concurrent clicks on one basket")
    channel = "C0CLICKS"
    basket = start(lb, channel, "clicks-shop")
    lb.open_channel(channel, *(f"U0CLICK{i:03d}" for i in range(n)))
    session = session_of(lb, basket)
    store = lb.store()
    before = {i.checkpoint_id for i in store.list(TENANT, session)}
    barrier = threading.Barrier(n)
    lb.counter.take()

    def one(i: int) -> float:
        barrier.wait(timeout=STEP_TIMEOUT)
        t0 = time.perf_counter()
        click(lb, basket, "approve_basket", f"U0CLICK{i:03d}", f"click-{i}", channel)
        ack = time.perf_counter() - t0
        deliver(lb, f"trigger:click-{i}")
        return ack

    t0 = time.perf_counter()
    outcomes = run_all(result, [lambda i=i: one(i) for i in range(n)], n, timeout)
    elapsed = time.perf_counter() - t0
    acks = [v for v in outcomes if isinstance(v, float)]
    errors = [v for v in outcomes if isinstance(v, BaseException)]
    result.check("every click acked and its lazy run", not errors, _first_errors(errors))

    ordered = ordered_texts(lb.slack, channel)
    result.check("exactly one outcome message", len(ordered) == 1, f"{ordered}")
    updates = [c for c in lb.slack.calls_to("chat.update") if c.args.get("channel") == channel]
    updates = [c for c in updates if "Approved by" in str(c.args.get("blocks"))]  # not drafts'
    result.check("basket marked answered once", len(updates) == 1, f"{len(updates)} chat.update")
    told = [e["text"] for e in lb.slack.ephemerals() if e["channel"] == channel]
    kinds = Counter(
        "busy" if t == BUSY else "already" if t.startswith(ALREADY) else t for t in told
    )
    result.check(
        "every other clicker told (busy / already answered)",
        len(told) == n - 1 and set(kinds) <= {"busy", "already"},
        ", ".join(f"{k} {v}" for k, v in sorted(kinds.items())),
    )
    after = store.list(TENANT, session)
    resumes = {i.run_id for i in after if i.checkpoint_id not in before}
    result.check("exactly one resume wrote checkpoints", len(resumes) == 1, f"{len(resumes)} runs")
    problems = chain_problems(store, TENANT, session)
    result.check("checkpoint chain unbroken", not problems, "; ".join(problems))
    locks = lb.keys("/lock")
    result.check("no lock object left", not locks, f"{len(locks)} left")
    requests = lb.counter.take()
    result.figures += [
        ("wall time", f"{elapsed:.2f} s"),
        ("ack p50 / p99", _p50_p99(acks)),
        ("S3 requests", f"{sum(requests.values())} ({describe_ops(requests)})"),
    ]
    return result


# ------------------------------------------------------------------ 2. many sessions at once


def one_session(lb: Loopback, n: int) -> tuple[str, float]:
    """start -> change -> approve in a channel of its own; the session ID and its wall time."""
    channel = f"C0LOAD{n:05d}"
    t0 = time.perf_counter()
    first = start(lb, channel, f"shop-{n}")
    change(lb, first, channel, n, "no pizza this week")
    posted = baskets(lb, channel)
    if [header(m) for m in posted] != ["Basket 1 of 3", "Basket 2 of 3"]:
        raise StepFailed(f"baskets after the change: {[header(m) for m in posted]}")
    click(lb, posted[1], "approve_basket", "U0BOB", f"approve-{n}", channel)
    deliver(lb, f"trigger:approve-{n}")
    return session_of(lb, first), time.perf_counter() - t0


def concurrent_sessions(lb: Loopback, n: int, workers: int, timeout: float = 600.0) -> Scenario:
    result = Scenario(f"{n} sessions start -> change -> approve, {workers} at a time")
    lb.counter.take()
    t0 = time.perf_counter()
    outcomes = run_all(result, [lambda i=i: one_session(lb, i) for i in range(n)], workers, timeout)
    elapsed = time.perf_counter() - t0
    requests = lb.counter.take()
    done = [v for v in outcomes if isinstance(v, tuple)]
    errors = [v for v in outcomes if isinstance(v, BaseException)]
    result.check(
        "every session ran every step", len(done) == n and not errors, _first_errors(errors)
    )

    wrong = []
    for i in range(n):
        ordered = ordered_texts(lb.slack, f"C0LOAD{i:05d}")
        if ordered != ["Ordered 7 items."]:
            wrong.append(f"C0LOAD{i:05d}: {ordered}")
    result.check("every session ordered, exactly once", not wrong, _first(wrong))
    told = [e["text"] for e in lb.slack.ephemerals() if e["channel"].startswith("C0LOAD")]
    result.check("nobody told of a refusal", not told, _first(told))
    store = lb.store()
    broken = []
    for session, _ in done:
        problems = chain_problems(store, TENANT, session)
        if problems:
            broken.append(f"{session}: {'; '.join(problems)}")
    result.check("every checkpoint chain unbroken", not broken and done, _first(broken))
    locks = lb.keys("/lock")
    result.check("no lock object left", not locks, f"{len(locks)} left")
    total = sum(requests.values())
    times = [t for _, t in done]
    result.figures += [
        ("wall time", f"{elapsed:.1f} s"),
        ("sessions per second (all steps done)", f"{len(done) / elapsed:.2f}"),
        ("session wall time p50 / p99", _p50_p99(times)),
        ("S3 requests, total", f"{total} ({describe_ops(requests)})"),
        ("S3 requests per session", f"{total / len(done):.1f}" if done else "-"),
    ]
    return result


# ------------------------------------------------------------------ running it


def run_all(
    result: Scenario, jobs: list[Callable[[], Any]], workers: int, timeout: float
) -> list[Any]:
    """Run ``jobs`` on ``workers`` threads; each one's value or exception. Jobs still running at
    ``timeout`` mark the scenario unfinished (threads cannot be killed: the caller exits)."""
    pool = cf.ThreadPoolExecutor(max_workers=workers, thread_name_prefix="load")
    futures = [pool.submit(job) for job in jobs]
    _, pending = cf.wait(futures, timeout=timeout)
    pool.shutdown(wait=False, cancel_futures=True)
    if pending:
        result.finished = False
        result.check("finished in time", False, f"{len(pending)} of {len(jobs)} after {timeout} s")
    return [
        (f.exception() or f.result()) if f.done() and not f.cancelled() else TimeoutError()
        for f in futures
    ]


def _p50_p99(values: list[float]) -> str:
    if not values:
        return "-"
    ordered = sorted(values)
    p99 = ordered[min(len(ordered) - 1, int(len(ordered) * 0.99))]
    return f"{statistics.median(ordered) * 1000:.0f} ms / {p99 * 1000:.0f} ms"


def _first(items: list[str], n: int = 3) -> str:
    more = f" (+{len(items) - n} more)" if len(items) > n else ""
    return "; ".join(items[:n]) + more


def _first_errors(errors: list[BaseException]) -> str:
    return _first([f"{type(e).__name__}: {e}" for e in errors])


def print_summary(scenarios: list[Scenario], extra: list[tuple[str, str]]) -> bool:
    rows = [(s.name, c) for s in scenarios for c in s.checks]
    width = max([len(c.name) for _, c in rows] + [40])
    print()
    print(f"{'check':<{width}}  result  detail")
    print(f"{'-' * width}  ------  {'-' * 40}")
    for scenario in scenarios:
        print(f"[{scenario.name}]")
        for check in scenario.checks:
            print(f"{check.name:<{width}}  {'PASS' if check.ok else 'FAIL':<6}  {check.detail}")
        for name, value in scenario.figures:
            print(f"{'  ' + name:<{width}}  {'':<6}  {value}")
    for name, value in extra:
        print(f"{name:<{width}}  {'':<6}  {value}")
    ok = all(s.ok for s in scenarios)
    print()
    print("LOAD: PASS" if ok else "LOAD: FAIL")
    return ok


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m bench.load", description=__doc__.split("\n")[0]
    )
    parser.add_argument("--clicks", type=int, default=50)
    parser.add_argument("--sessions", type=int, default=200)
    parser.add_argument("--workers", type=int, default=24)
    parser.add_argument("--timeout", type=float, default=300.0, help="whole run, seconds")
    args = parser.parse_args(argv)

    # The whole run is bounded: a hung thread cannot be joined, so the watchdog ends the process.
    def watchdog() -> None:
        print(f"\nLOAD: FAIL (the run took longer than {args.timeout:.0f} s)", flush=True)
        os._exit(2)

    timer = threading.Timer(args.timeout, watchdog)
    timer.daemon = True
    timer.start()
    started = time.perf_counter()
    print(
        f"load: {args.clicks} concurrent clicks, then {args.sessions} sessions on {args.workers} "
        f"workers; one moto S3 server (atomic requests), fake Slack/Lambda/Anthropic, the bot "
        f"handler in this process ({os.cpu_count()} CPUs)",
        flush=True,
    )
    scenarios: list[Scenario] = []
    with loopback("load-checkpoints") as lb:
        runs = []
        if args.clicks > 0:
            runs.append(("clicks", lambda: concurrent_clicks(lb, args.clicks)))
        if args.sessions > 0:
            runs.append(("sessions", lambda: concurrent_sessions(lb, args.sessions, args.workers)))
        for name, run in runs:
            t0 = time.perf_counter()
            try:
                scenario = run()
            except Exception as exc:  # noqa: BLE001 - a setup failure is a FAIL row, not a crash
                scenario = Scenario(name)
                scenario.check("scenario ran", False, f"{type(exc).__name__}: {exc}")
            scenarios.append(scenario)
            print(f"... {scenario.name}: {time.perf_counter() - t0:.1f} s", flush=True)
            if not scenario.finished:
                break
        extra = [
            ("bot log lines at WARNING / ERROR", _levels(lb)),
            ("bot log file", lb.log_path),
            ("whole run", f"{time.perf_counter() - started:.1f} s"),
        ]
        ok = print_summary(scenarios, extra)
    timer.cancel()
    if not all(s.finished for s in scenarios):
        sys.stdout.flush()
        os._exit(1)  # a worker thread is stuck: do not wait for it
    return 0 if ok else 1


def _levels(lb: Loopback) -> str:
    return f"{lb.log_levels.get('WARNING', 0)} / {lb.log_levels.get('ERROR', 0)}"


if __name__ == "__main__":
    sys.exit(main())
