"""The loopback world for tests (``bot.sandbox.world``), plus what only tests do: run a lazy
invocation in a fresh interpreter, or kill one at a chosen point."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from typing import Any

from bot.sandbox.world import (
    CHANNEL,
    PEOPLE,
    SECRET,
    TOKEN,
    World,
    bot_env,
    context_text,
    fake_slack,
    header,
    section_text,
)

__all__ = [
    "CHANNEL",
    "PEOPLE",
    "SECRET",
    "TOKEN",
    "TestWorld",
    "World",
    "bot_env",
    "change",
    "context_text",
    "fake_slack",
    "header",
    "objects",
    "section_text",
    "ack_in_fresh_process",
    "start_basket",
]


class TestWorld(World):
    __test__ = False  # not a test class, whatever its name

    def run_lazies(self, fresh_process: bool = False, deploy: str = "") -> list[dict[str, Any]]:
        """Deliver every captured lazy invocation as a new invocation (in a new interpreter
        with ``fresh_process``, running the next deploy ``deploy`` if given); their responses."""
        if not fresh_process:
            return super().run_lazies()
        return [self.in_fresh_process(i.payload, deploy=deploy) for i in self.lam.take()]

    def env_all(self) -> dict[str, str]:
        return {**os.environ, **self.env}

    def in_fresh_process(
        self,
        event: dict[str, Any],
        crash_at: str = "",
        deploy: str = "",
        hold_lock: float = 0,
        fails: bool = False,
    ) -> dict[str, Any]:
        """One invocation in a new interpreter; with ``crash_at``, one that dies there; with
        ``deploy``, one running that deploy of ``tests.shop_next_deploy``; with ``hold_lock``,
        one that keeps a session lock that many seconds once it took it."""
        extra = ["--crash-at", crash_at] if crash_at else []
        extra += ["--deploy", deploy] if deploy else []
        extra += ["--hold-lock", str(hold_lock)] if hold_lock else []
        extra += ["--ahead", repr(self.clock.ahead)] if self.clock.ahead else []
        done = subprocess.run(
            [sys.executable, "-m", "tests.lambda_invoke", *extra],
            input=json.dumps(event),
            capture_output=True,
            text=True,
            timeout=120,
            env=self.env_all(),
        )
        if crash_at:
            assert done.returncode == 70, (done.returncode, done.stderr)
            return {"crashed": crash_at}
        if fails:  # the handler raised, as Lambda needs to retry the invocation
            assert done.returncode == 1 and "LazyRunFailed" in done.stderr, done.stderr
            return {"failed": True, "logs": done.stderr}
        assert done.returncode == 0, done.stderr
        result: dict[str, Any] = json.loads(done.stdout.strip().splitlines()[-1])
        result["logs"] = done.stderr
        self.fresh.append(result)
        return result


def objects(s3: Any, bucket: str) -> dict[str, str]:
    listed = s3.list_objects_v2(Bucket=bucket).get("Contents", [])
    return {o["Key"]: o["ETag"] for o in listed}


def start_basket(world: World) -> dict[str, Any]:
    ack = world.shop()
    assert ack["statusCode"] == 200 and "Writing your basket" in ack["body"]
    world.run_lazies()
    (basket,) = world.baskets()
    return basket


def change(world: World, basket: dict[str, Any], text: str, user: str = "U0BOB") -> None:
    ack = world.click(basket, "change_basket", user=user)
    assert ack["statusCode"] == 200
    assert world.lam.invocations == []  # the modal opens in the ack path, nothing lazy yet
    ack = world.submit_change(text, user=user)
    assert ack["statusCode"] == 200 and not ack.get("body")
    world.run_lazies()


def ack_in_fresh_process(world: World, event: str, watched: list[str]) -> tuple[int, list[str]]:
    """The ack of ``event`` (a Python expression over ``bot.sandbox``'s request builders:
    ``block_action(...)``, ``slash_command(...)``, ...) in a fresh interpreter, as a cold Lambda
    answers it: its status code, and which of the ``watched`` modules it imported."""
    code = (
        "import json, sys\n"
        "from bot.sandbox.slack_requests import block_action, slash_command, view_submission\n"
        "from bot.sandbox.slack_events import app_home_opened, home_action\n"
        "from bot.sandbox.aws_events import lambda_context\n"
        "from bot.handler import handler\n"
        f"r = handler({event}, lambda_context())\n"
        f"print(json.dumps([r['statusCode'], [m for m in {watched!r} if m in sys.modules]]))\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", code],
        capture_output=True,
        text=True,
        timeout=60,
        env={**os.environ, **world.env},
    )
    assert done.returncode == 0, done.stderr
    status, loaded = json.loads(done.stdout.splitlines()[-1])
    return int(status), list(loaded)
