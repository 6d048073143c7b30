"""Configuration, read once from the environment into a frozen object at cold start.

A missing or invalid value fails at start-up with the variable's name in the message, never
halfway through a click. This module holds the fields, their defaults and the checks between
them (``Settings.__post_init__``); each variable's name and how its text becomes a value (a
duration, a number in a range, a secret) are in ``bot.settings_env``. Secrets are
:class:`Secret`, so they never show in a repr or a log line: it is made there, by a variable's
converter, and named here too (``__all__``) as the type of the fields that hold one.

This is a plain dataclass, not a pydantic model, on purpose: it is read on every cold start,
in the ack path, and importing pydantic there would cost a large part of Slack's 3 seconds at a
small Lambda's CPU share (README, "Deploy"); no part of the bot or the workflow uses pydantic (the
checkpoint values are plain classes too, ``workflow.persistence.values``).
"""

from __future__ import annotations

import dataclasses
import os
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from bot.settings_env import CONVERT, ENV_NAMES, REQUIRED, Secret
from workflow.shop import SHOP_PREFIX

__all__ = ["DEFAULT_SLACK_API_URL", "Secret", "Settings", "SettingsError"]

DEFAULT_SLACK_API_URL = "https://slack.com/api/"


class SettingsError(ValueError):
    """A configuration variable is missing or invalid; the message names it."""


@dataclass(frozen=True)
class Settings:
    slack_signing_secret: Secret
    checkpoint_bucket: str
    slack_bot_token: Secret = field(default_factory=lambda: Secret(""))
    checkpoint_prefix: str = SHOP_PREFIX
    checkpoint_signing_key: Secret | None = None
    anthropic_api_key: Secret | None = None
    anthropic_model: str = "claude-haiku-5-5"
    # Per attempt; the SDK makes up to three. Lambda gives an invocation 60 s (serverless.yml), so
    # the attempts and their backoff must end well inside it, or Lambda kills the invocation
    # before the person hears anything. The SDK's own default is 600 s.
    anthropic_timeout_seconds: float = 15.0
    max_rounds: int = 3
    lock_ttl_seconds: float = 60.0
    # How long a turn waits for a session lock someone else holds before it says so (0: not at
    # all). An approve holds it well under a second; a change, for the model's answer. Inside a
    # lazy run (Slack was answered already), well inside the function's 60 s.
    lock_wait_seconds: float = 8.0
    # How long ago a live lock of the same work (one Slack interaction, one timer) must have been
    # taken to be a dead attempt's, taken over by Lambda's retry; a younger one is the same event
    # delivered twice at once (workflow.persistence.lock): this delivery then raises, and Lambda
    # retries it a minute later ("one-minute wait between the first two attempts").
    lock_retry_after_seconds: float = 30.0
    approver_ids: frozenset[str] = frozenset()
    no_self_approval: bool = False
    # A quorum: how many different people must approve a basket before it is ordered.
    approvals_needed: int = 1
    slack_api_url: str = DEFAULT_SLACK_API_URL
    shop_channel: str = ""
    shop_request: str = ""
    # A waiting basket's reminders and expiry (``bot.records.timers``), in seconds; 0 turns one off.
    remind_after: int = 6 * 3600
    max_reminders: int = 2
    expire_after: int = 72 * 3600
    # The undo window of an approved basket's order (bot.steps.clicks); 0, or no timers: at once.
    order_delay: int = 120
    # Where approved baskets go (bot/orders): a Slack canvas, or the household's signed webhook
    # (its URL and signing secret; the pinned hosts and CA bundle are the sandbox's and tests').
    order_destination: str = "canvas"
    order_webhook_url: str = ""
    order_webhook_secret: Secret | None = None
    order_webhook_pinned_hosts: dict[str, tuple[str, int]] = field(default_factory=dict)
    order_webhook_ca_bundle: str = ""
    # Instacart shopping-list pages: the deploy's key (a workspace may save its own), which of
    # Instacart's servers it is for, and (tests, sandbox) a stand-in's URL instead of that server.
    instacart_api_key: Secret | None = None
    # With many workspaces, the deploy's keys above serve the operator's own workspace
    # (SHOP_TEAM) only, unless this says every workspace may order with them (off by default).
    share_deploy_keys: bool = False
    instacart_server: str = "development"
    instacart_api_url: str = ""
    # Where a workspace's own keys are kept (SSM SecureString parameters under this path, under
    # this KMS key: bot.records.workspace_secrets); without a path, only the deploy's keys above.
    workspace_secrets_path: str = ""
    workspace_secrets_key: str = ""
    # Where its EventBridge Scheduler schedules go; without all three, no timers are armed.
    timer_group: str = ""
    timer_target_arn: str = ""
    timer_role_arn: str = ""
    # Many workspaces (``bot.slack.installs``): the app's OAuth credentials; without both, one
    # workspace with SLACK_BOT_TOKEN. SHOP_TEAM: the workspace the weekly schedule is for.
    slack_client_id: str = ""
    slack_client_secret: Secret | None = None
    shop_team: str = ""
    # The deploy's Kroger app (``bot.orders.kroger``): prices at each household's store and its
    # people's carts; without both, baskets have no prices. The URL: a stand-in's (tests, sandbox).
    kroger_client_id: str = ""
    kroger_client_secret: Secret | None = None
    kroger_api_url: str = ""
    # Where Kroger sends a person back after they connect their account: exactly the redirect URL
    # registered with the Kroger app (serverless.yml sets it to the HTTP API's own
    # ``/kroger/oauth_redirect``); without it, the Home tab offers no Connect.
    kroger_redirect_url: str = ""

    def __post_init__(self) -> None:
        if bool(self.slack_client_id) != (self.slack_client_secret is not None):
            raise SettingsError("SLACK_CLIENT_ID and SLACK_CLIENT_SECRET go together")
        if not self.multi_workspace and not self.slack_bot_token.get_secret_value():
            raise SettingsError("SLACK_BOT_TOKEN is not set")
        if self.multi_workspace and self.shop_channel and not self.shop_team:
            raise SettingsError("SHOP_TEAM is not set: with many workspaces, SHOP_CHANNEL needs it")
        # A destination's key is the deploy's, or (WORKSPACE_SECRETS_PATH) each workspace's own.
        keys = bool(self.workspace_secrets_path)
        webhook = self.order_webhook_url and (keys or self.order_webhook_secret is not None)
        if self.order_destination == "webhook" and not webhook:
            raise SettingsError(
                "ORDER_WEBHOOK_URL and ORDER_WEBHOOK_SECRET are not set: ORDER_DESTINATION=webhook "
                "needs both (or the URL and WORKSPACE_SECRETS_PATH)"
            )
        if self.order_destination == "instacart" and not (keys or self.instacart_api_key):
            raise SettingsError(
                "INSTACART_API_KEY is not set: ORDER_DESTINATION=instacart needs it (or "
                "WORKSPACE_SECRETS_PATH, for each workspace's own)"
            )
        if bool(self.kroger_client_id) != (self.kroger_client_secret is not None):
            raise SettingsError("KROGER_CLIENT_ID and KROGER_CLIENT_SECRET go together")
        if self.approver_ids and self.approvals_needed > len(self.approver_ids):
            raise SettingsError(
                f"APPROVALS_NEEDED is invalid: must be at most the {len(self.approver_ids)} "
                "people in APPROVER_IDS"
            )

    def deploy_keys_serve(self, team: str) -> bool:
        """Whether the deploy's own keys (``INSTACART_API_KEY``, ``ORDER_WEBHOOK_SECRET``) may be
        used for ``team``'s orders: with one workspace, its own; with many, only the operator's
        (``SHOP_TEAM``) unless ``SHARE_DEPLOY_KEYS`` lets every workspace use them. Otherwise a
        workspace that added the app would order on the operator's account without a word."""
        if not self.multi_workspace or self.share_deploy_keys:
            return True
        return bool(self.shop_team) and team == self.shop_team

    @property
    def multi_workspace(self) -> bool:
        """Installed per workspace through Slack's OAuth flow (``bot.slack.installs``)."""
        return bool(self.slack_client_id and self.slack_client_secret is not None)

    @property
    def has_prices(self) -> bool:
        """Whether baskets are priced at Kroger (the deploy has a Kroger app)."""
        return bool(self.kroger_client_id and self.kroger_client_secret is not None)

    @property
    def has_timers(self) -> bool:
        return bool(self.timer_group and self.timer_target_arn and self.timer_role_arn)

    @classmethod
    def from_env(cls, environ: Mapping[str, str] | None = None) -> Settings:
        """Settings from ``environ`` (default: the process environment).

        Raises SettingsError naming the first variable that is missing or invalid. Empty
        variables count as unset, so optional values can be blanked in serverless.yml.
        """
        env = os.environ if environ is None else environ
        values: dict[str, Any] = {}
        for name, variable in ENV_NAMES.items():
            raw = env.get(variable)
            if not raw:
                if name in REQUIRED:
                    raise SettingsError(f"{variable} is not set")
                continue
            try:
                values[name] = CONVERT[name](raw)
            except ValueError as exc:
                raise SettingsError(f"{variable} is invalid: {exc}") from None
        return cls(**values)

    def replace(self, **changes: Any) -> Settings:
        """A copy with ``changes`` (for tests that change a setting after a cold start)."""
        return dataclasses.replace(self, **changes)
