"""A whole Slack + Lambda + S3 + Claude world on loopback, for driving ``bot.handler``."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from dataclasses import dataclass, field
from typing import Any

from bot.handler import cold_start, handler
from bot.runtime import Runtime
from bot.settings import Settings
from tests.fakes.anthropic_api import FakeAnthropic
from tests.fakes.lambda_api import FakeLambda
from tests.fakes.slack_api import FakeSlack
from tests.fakes.slack_events import block_action, lambda_context, slash_command, view_submission

SECRET = "test-signing-secret-0123456789"
TOKEN = "xoxb-test"
CHANNEL = "C0SHOP"


def bot_env(slack: Any, lam: Any, claude: Any, bucket: str) -> dict[str, str]:
    """The bot's environment pointed at the local fakes (Slack, Lambda, Anthropic)."""
    return {
        "SLACK_BOT_TOKEN": TOKEN,
        "SLACK_SIGNING_SECRET": SECRET,
        "CHECKPOINT_BUCKET": bucket,
        "SLACK_API_URL": slack.url,
        "AWS_ENDPOINT_URL_LAMBDA": lam.url,
        "ANTHROPIC_BASE_URL": claude.url,
        "ANTHROPIC_API_KEY": "test-key-not-real",
    }


@dataclass
class World:
    slack: FakeSlack
    lam: FakeLambda
    claude: FakeAnthropic
    env: dict[str, str]
    mp: Any  # pytest.MonkeyPatch: environment changes end with the test
    s3: Any = None
    fresh: list[dict[str, Any]] = field(default_factory=list)

    def boot(self, s3_client: Any = None, **extra_env: str) -> None:
        """A cold start with the current environment (plus ``extra_env``)."""
        for name, value in extra_env.items():
            self.mp.setenv(name, value)
        self.env.update(extra_env)
        cold_start(Runtime.from_settings(Settings.from_env(), s3_client=s3_client or self.s3))

    def send(self, event: dict[str, Any]) -> dict[str, Any]:
        return handler(json.loads(json.dumps(event)), lambda_context())

    def run_lazies(self, fresh_process: bool = False) -> list[dict[str, Any]]:
        """Deliver every captured lazy invocation as a new invocation; their responses."""
        results = []
        for invocation in self.lam.take():
            if fresh_process:
                results.append(self.in_fresh_process(invocation.payload))
            else:
                results.append(self.send(invocation.payload))
        return results

    def env_all(self) -> dict[str, str]:
        return {**os.environ, **self.env}

    def in_fresh_process(self, event: dict[str, Any], crash_at: str = "") -> dict[str, Any]:
        """One invocation in a new interpreter; with ``crash_at``, one that dies there."""
        extra = ["--crash-at", crash_at] if crash_at else []
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
        assert done.returncode == 0, done.stderr
        result: dict[str, Any] = json.loads(done.stdout.strip().splitlines()[-1])
        result["logs"] = done.stderr
        self.fresh.append(result)
        return result

    # -- what a person does --------------------------------------------------------------

    def shop(self, text: str = "dinners this week", user: str = "U0ALICE", **kw: Any) -> Any:
        return self.send(
            slash_command(
                SECRET, text=text, user_id=user, response_url_base=self.slack.hooks_url, **kw
            )
        )

    def baskets(self) -> list[dict[str, Any]]:
        return [m for m in self.slack.messages(CHANNEL) if _header(m)]

    def buttons(self, message: dict[str, Any]) -> dict[str, str]:
        """action_id -> value of the buttons on a posted message."""
        for block in message.get("blocks", []):
            if block["type"] == "actions":
                return {e["action_id"]: e["value"] for e in block["elements"]}
        return {}

    def click(self, message: dict[str, Any], action: str, user: str = "U0BOB", **kw: Any) -> Any:
        value = kw.pop("value", None) or self.buttons(message)[action]
        return self.send(
            block_action(
                SECRET,
                action_id=action,
                value=value,
                user_id=user,
                message_ts=message["ts"],
                response_url_base=self.slack.hooks_url,
                **kw,
            )
        )

    def submit_change(
        self, text: str, user: str = "U0BOB", view: dict[str, Any] | None = None
    ) -> Any:
        view = view or self.slack.calls_to("views.open")[-1].args["view"]
        if isinstance(view, str):
            view = json.loads(view)
        return self.send(
            view_submission(
                SECRET,
                callback_id=view["callback_id"],
                private_metadata=view["private_metadata"],
                values={"change": {"change_text": text}},
                user_id=user,
            )
        )


def _header(message: dict[str, Any]) -> str:
    for block in message.get("blocks") or []:
        if block["type"] == "header":
            return str(block["text"]["text"])
    return ""


def header(message: dict[str, Any]) -> str:
    return _header(message)


def context_text(message: dict[str, Any]) -> str:
    return " ".join(
        e["text"]
        for b in message.get("blocks", [])
        if b["type"] == "context"
        for e in b["elements"]
    )


def section_text(message: dict[str, Any]) -> str:
    return "\n".join(b["text"]["text"] for b in message.get("blocks", []) if b["type"] == "section")


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
    ack = world.click(basket, "change_basket", user=user, trigger_id=f"trigger-{basket['ts']}")
    assert ack["statusCode"] == 200
    assert world.lam.invocations == []  # the modal opens in the ack path, nothing lazy yet
    ack = world.submit_change(text, user=user)
    assert ack["statusCode"] == 200 and not ack.get("body")
    world.run_lazies()
