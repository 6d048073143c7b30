"""``weekly-shop dev`` as its own process against the fake Slack with Socket Mode on
(``bot.sandbox.socket_mode_slack``), and what a person does there, sent as envelopes."""

from __future__ import annotations

import json
import os
import queue
import secrets
import subprocess
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from bot.sandbox.slack_requests import block_action, slash_command, view_submission
from bot.sandbox.socket_mode import Envelope
from bot.sandbox.socket_mode_slack import SocketModeSlack
from bot.sandbox.world import header, is_draft
from tests.test_sandbox import wait_for

ROOT = Path(__file__).resolve().parent.parent
CHANNEL = "C0SHOP"
PEOPLE = ("U0ALICE", "U0BOB", "U0CAROL")
UNSIGNED = "socket-mode-requests-are-not-signed"  # the builders want a secret; envelopes drop it


def socket_mode_slack() -> SocketModeSlack:
    """The fake, with a per-run bot token and app-level token, PEOPLE (and the bot) in CHANNEL."""
    bot = f"xoxb-dev-{secrets.token_hex(12)}"
    app = f"xapp-1-A0WEEKLY-{secrets.token_hex(12)}"
    return SocketModeSlack(bot, app, channels={CHANNEL: PEOPLE})


def clean_env(**extra: str) -> dict[str, str]:
    """This environment without the developer's Slack, AWS and model settings, plus ``extra``."""
    drop = ("ANTHROPIC_", "AWS_", "SLACK_", "CHECKPOINT_", "ORDER_", "TIMER_")
    return {**{k: v for k, v in os.environ.items() if not k.startswith(drop)}, **extra}


@dataclass
class DevProcess:
    process: subprocess.Popen[str]
    lines: queue.Queue[str]
    banner: list[str]


def _read(stream: Any, lines: queue.Queue[str]) -> None:
    for line in stream:
        lines.put(line)


@contextmanager
def running_dev(folder: Path, env: dict[str, str], *args: str) -> Iterator[DevProcess]:
    """``weekly-shop dev`` started in ``folder`` (where its ``.env`` is), until its banner says
    it is ready; stopped with SIGTERM at the end if the test has not stopped it."""
    process = subprocess.Popen(
        [str(ROOT / ".venv" / "bin" / "weekly-shop"), "dev", *args],
        cwd=folder,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    lines: queue.Queue[str] = queue.Queue()
    stdout = process.stdout
    assert stdout is not None
    threading.Thread(target=_read, args=(stdout, lines), daemon=True).start()
    banner: list[str] = []
    try:
        while not banner or "Ctrl-C" not in banner[-1]:
            try:
                banner.append(lines.get(timeout=60))
            except queue.Empty:
                process.kill()
                _, stderr = process.communicate()
                raise AssertionError(f"no banner; stderr: {stderr}") from None
        yield DevProcess(process, lines, banner)
    finally:
        if process.poll() is None:
            process.terminate()
            process.wait(timeout=30)


@dataclass
class Person:
    """Someone in the fake workspace, whose every action reaches the app as an envelope."""

    slack: SocketModeSlack
    user: str

    def shop(self, text: str) -> Envelope:
        return self._send(
            slash_command(
                UNSIGNED,
                text=text,
                user_id=self.user,
                channel_id=CHANNEL,
                trigger_id=self.slack.issue_trigger(self.user),
                response_url_base=self.slack.hooks_url,
            )
        )

    def click(self, message: dict[str, Any], action: str) -> Envelope:
        shown = {k: v for k, v in message.items() if k in ("type", "ts", "text", "blocks")}
        return self._send(
            block_action(
                UNSIGNED,
                action_id=action,
                value=buttons(message)[action],
                user_id=self.user,
                channel_id=CHANNEL,
                message_ts=message["ts"],
                trigger_id=self.slack.issue_trigger(self.user),
                message={"type": "message", **shown},
                response_url_base=self.slack.hooks_url,
            )
        )

    def submit(self, view: dict[str, Any], values: dict[str, dict[str, Any]]) -> Envelope:
        return self._send(
            view_submission(
                UNSIGNED,
                callback_id=view["callback_id"],
                private_metadata=view["private_metadata"],
                values=values,
                user_id=self.user,
                view_id=view.get("id"),
            )
        )

    def _send(self, event: dict[str, Any]) -> Envelope:
        return self.slack.send(event)


def buttons(message: dict[str, Any]) -> dict[str, str]:
    for block in message.get("blocks", []):
        if block["type"] == "actions":
            return {e["action_id"]: e.get("value", "") for e in block["elements"]}
    return {}


def baskets(slack: SocketModeSlack) -> list[dict[str, Any]]:
    return [m for m in slack.messages(CHANNEL) if header(m) and not is_draft(m)]


def basket(slack: SocketModeSlack, n: int) -> dict[str, Any]:
    """Basket ``n`` once it is posted, with its buttons."""

    def posted() -> dict[str, Any] | None:
        found = [m for m in baskets(slack) if header(m).startswith(f"Basket {n} ")]
        return found[-1] if found and buttons(found[-1]) else None

    found: dict[str, Any] = wait_for(posted, timeout=30)
    return found


def last_view(slack: SocketModeSlack, method: str) -> dict[str, Any]:
    view = slack.calls_to(method)[-1].args["view"]
    return json.loads(view) if isinstance(view, str) else dict(view)


def ordered(slack: SocketModeSlack) -> list[str]:
    return [
        reply["text"]
        for message in slack.messages(CHANNEL)
        for reply in slack.thread(CHANNEL, message["ts"])
        if reply["text"].startswith("Ordered")
    ]


def children(pid: int) -> list[int]:
    """Processes whose parent is ``pid`` (``/proc/<pid>/task/*/children``)."""
    found: list[int] = []
    for task in Path(f"/proc/{pid}/task").glob("*"):
        try:
            found += [int(c) for c in (task / "children").read_text().split()]
        except (FileNotFoundError, ProcessLookupError):
            continue
    return found
