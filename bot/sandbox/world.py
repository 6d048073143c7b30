"""A whole Slack + Lambda + S3 + Claude world on loopback, for driving ``bot.handler``.

The tests' ``world`` fixture and ``bench/`` build the bot's environment and its people the same
way from here: :func:`bot_env` points the bot at the fakes, :data:`PEOPLE` are in
:data:`CHANNEL` (and the bot is), and :class:`World` does what a person does (``/shop``, a
click, a submitted change) as signed requests, and runs the bot's lazy self-invocations as new
invocations.
"""

from __future__ import annotations

import json
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from .anthropic_api import FakeAnthropic
from .aws_events import lambda_context
from .clock import PlayedClock
from .lambda_api import FakeLambda
from .lambda_async import AsyncRun, invoke_async
from .slack_api import FakeSlack
from .slack_events import app_home_opened, home_action
from .slack_requests import block_action, slash_command, view_submission

SECRET = "test-signing-secret-0123456789"
TOKEN = "xoxb-test"
CHANNEL = "C0SHOP"
PEOPLE = ("U0ALICE", "U0BOB", "U0CAROL", "U0DAVE", "U0BOSS")


def bot_env(
    slack: FakeSlack, lam: FakeLambda, claude: FakeAnthropic, bucket: str
) -> dict[str, str]:
    """The bot's environment pointed at the local fakes (Slack, Lambda, Anthropic)."""
    return {
        "SLACK_BOT_TOKEN": TOKEN,
        "SLACK_SIGNING_SECRET": SECRET,
        "CHECKPOINT_BUCKET": bucket,
        "SLACK_API_URL": slack.url,
        "AWS_ENDPOINT_URL_LAMBDA": lam.url,
        "ANTHROPIC_BASE_URL": claude.url,
        "ANTHROPIC_API_KEY": claude.api_key,
    }


def fake_slack(*channels: str, wall: Callable[[], float] = time.time) -> FakeSlack:
    """The fake Web API with :data:`PEOPLE` (and the bot) in :data:`CHANNEL` and ``channels``;
    ``wall``: its clock (a :class:`PlayedClock` shared with the bot, where time is played)."""
    return FakeSlack(TOKEN, channels={c: PEOPLE for c in (CHANNEL, *channels)}, wall=wall)


@dataclass
class World:
    slack: FakeSlack
    lam: FakeLambda
    claude: FakeAnthropic
    env: dict[str, str]
    set_env: Callable[[str, str], None]  # sets a variable for the rest of the world's life
    s3: Any = None
    fresh: list[dict[str, Any]] = field(default_factory=list)
    clock: PlayedClock = field(default_factory=PlayedClock)  # the bot's: moved as time passes

    def boot(self, s3_client: Any = None, **extra_env: str) -> None:
        """A cold start with the current environment (plus ``extra_env``). A new process would
        also start boto3's default session anew, with the credentials now in the environment
        (Bolt's lazy runner makes its Lambda client from it)."""
        import boto3

        from bot.handler import cold_start
        from bot.runtime import Runtime
        from bot.settings import Settings

        for name, value in extra_env.items():
            self.set_env(name, value)
        self.env.update(extra_env)
        boto3.DEFAULT_SESSION = None
        cold_start(
            Runtime.from_settings(
                Settings.from_env(), s3_client=s3_client or self.s3, clock=self.clock
            )
        )

    def send(self, event: dict[str, Any]) -> dict[str, Any]:
        """One invocation of the real handler (Bolt mutates its event: send a copy); what the
        handler raises is raised here, as the Lambda runtime sees it."""
        from bot.handler import handler

        response: dict[str, Any] = handler(json.loads(json.dumps(event)), lambda_context())
        return response

    def run_lazies(self) -> list[dict[str, Any]]:
        """Deliver every captured lazy invocation as Lambda delivers an async one (retried
        while it raises, then to the lost-runs queue: :func:`invoke_async`); the response of
        each (the lost-runs queue's answer for one that never returned)."""
        return [run.response or run.lost or {} for run in self.run_async()]

    def run_async(self) -> list[AsyncRun]:
        """Every captured lazy invocation, delivered as Lambda delivers an async one; how each
        went (its attempts, and whether it reached the lost-runs queue)."""
        return [invoke_async(self.send, invocation.payload) for invocation in self.lam.take()]

    # -- what a person does --------------------------------------------------------------

    def shop(self, text: str = "dinners this week", user: str = "U0ALICE", **kw: Any) -> Any:
        return self.send(
            slash_command(
                SECRET, text=text, user_id=user, response_url_base=self.slack.hooks_url, **kw
            )
        )

    def open_home(self, user: str = "U0ALICE", **kw: Any) -> dict[str, Any] | None:
        """``user`` opens the app's Home tab; the view published for them, once the lazy run
        is done (None if nothing was published)."""
        ack = self.send(app_home_opened(SECRET, user, **kw))
        assert ack["statusCode"] == 200, ack
        self.run_lazies()
        return self.slack.home(user)

    def home_click(self, action: str, value: str, user: str = "U0ALICE") -> dict[str, Any] | None:
        """A button on ``user``'s Home tab; the view published for them afterwards."""
        view = self.slack.home(user) or {}
        ack = self.send(
            home_action(
                SECRET, action_id=action, value=value, user_id=user, view_id=view.get("id", "VH0")
            )
        )
        assert ack["statusCode"] == 200, ack
        self.run_lazies()
        return self.slack.home(user)

    def baskets(self, channel: str = CHANNEL) -> list[dict[str, Any]]:
        """The channel's basket messages: a header, and not a draft still being written."""
        return [m for m in self.slack.messages(channel) if header(m) and not is_draft(m)]

    def drafts(self, channel: str = CHANNEL) -> list[dict[str, Any]]:
        """The channel's messages that show a basket being written (``bot.slack.draft``)."""
        return [m for m in self.slack.messages(channel) if is_draft(m)]

    def buttons(self, message: dict[str, Any]) -> dict[str, str]:
        """action_id -> value of the buttons on a posted message."""
        for block in message.get("blocks", []):
            if block["type"] == "actions":
                return {e["action_id"]: e.get("value", "") for e in block["elements"]}
        return {}

    def click(self, message: dict[str, Any], action: str, user: str = "U0BOB", **kw: Any) -> Any:
        """A click on ``message``'s button, with a trigger ID the fake Slack issued for it, and
        the message itself in the payload, as Slack sends it."""
        value = kw.pop("value", None) or self.buttons(message)[action]
        kw.setdefault("trigger_id", self.slack.issue_trigger(user))
        shown = {k: v for k, v in message.items() if k in ("type", "ts", "text", "blocks")}
        kw.setdefault("message", {"type": "message", **shown})
        if message.get("thread_ts") not in (None, message["ts"]):  # a reply in a thread
            kw.setdefault("thread_ts", message["thread_ts"])
            kw["message"].setdefault("thread_ts", message["thread_ts"])
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


def is_draft(message: dict[str, Any]) -> bool:
    """A basket being written: basket 1 of a /shop, or the one a change asked for."""
    from bot.slack.draft import writing

    shown = header(message)
    return shown.startswith("Basket ") and shown == writing(int(shown.split()[1] or 0))


def header(message: dict[str, Any]) -> str:
    for block in message.get("blocks") or []:
        if block["type"] == "header":
            return str(block["text"]["text"])
    return ""


def context_text(message: dict[str, Any]) -> str:
    return " ".join(
        e["text"]
        for b in message.get("blocks", [])
        if b["type"] == "context"
        for e in b["elements"]
    )


def section_text(message: dict[str, Any]) -> str:
    return "\n".join(b["text"]["text"] for b in message.get("blocks", []) if b["type"] == "section")
