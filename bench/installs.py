"""Benchmark: what finding a workspace's token costs with many workspaces, cold and warm.

The app is installed with Add to Slack (the fake's ``oauth.v2.access``), then ``/shop`` is sent
to a cold start (a new runtime: an empty cache) and again to the same warm one. The S3 requests
of the installation store's own client are counted (botocore's ``before-call``): a cold start
reads the installation once (one GET of ``bot-latest``), a warm container not at all for
``bot.slack.installs.TTL_SECONDS``.

    .venv/bin/python -m bench.installs      (make bench runs it)
"""

from __future__ import annotations

from bench.common import Loopback, RequestCounter, describe_ops, loopback
from bench.load import send
from bench.table import Row, render
from bot.sandbox.slack_oauth import add_to_slack
from bot.sandbox.slack_requests import slash_command
from bot.sandbox.world import SECRET

CLIENT_ID, CLIENT_SECRET = "1111.2222", "bench-client-secret"
MANY = {"SLACK_CLIENT_ID": CLIENT_ID, "SLACK_CLIENT_SECRET": CLIENT_SECRET, "SLACK_BOT_TOKEN": ""}


def _install(lb: Loopback) -> None:
    done = add_to_slack(lb.world.send, lb.slack.oauth, CLIENT_ID)
    if done["statusCode"] != 200:
        raise RuntimeError(f"the install failed: {done}")


def _ack(lb: Loopback, trigger: str) -> None:
    send(lb, slash_command(SECRET, text="dinners", trigger_id=trigger))


def measure(lb: Loopback) -> list[Row]:
    from bot.handler import cold_start
    from bot.runtime import Runtime
    from bot.settings import Settings

    lb.slack.oauth.register_app(CLIENT_ID, CLIENT_SECRET)
    cold_start(Runtime.from_settings(Settings.from_env(), s3_client=lb.s3))
    _install(lb)
    rt, _ = cold_start(Runtime.from_settings(Settings.from_env(), s3_client=lb.s3))  # cold
    if rt.oauth is None:
        raise RuntimeError("the bench world is not in many-workspaces mode")
    counter = RequestCounter(rt.oauth[1].store.s3_client)
    _ack(lb, "installs-cold")
    cold = counter.take()
    _ack(lb, "installs-warm")
    warm = counter.take()
    lb.world.lam.take()  # the lazy runs are not part of this figure
    n_cold, n_warm = sum(cold.values()), sum(warm.values())
    return [
        Row(
            "S3 requests to find the workspace's token, cold start",
            f"{n_cold}",
            describe_ops(cold) or "-",
            target="<= 1",
            ok=n_cold <= 1,
        ),
        Row(
            "S3 requests to find the workspace's token, warm",
            f"{n_warm}",
            describe_ops(warm) or "-",
            target="0",
            ok=n_warm == 0,
        ),
    ]


def main() -> None:
    with loopback("bench-installs", **MANY) as lb:
        print(render(measure(lb)))


if __name__ == "__main__":
    main()
