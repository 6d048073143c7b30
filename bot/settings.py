"""Configuration, read once from the environment into a frozen model at cold start.

A missing or invalid value fails at start-up with the variable's name in the message, never
halfway through a click. Secrets are ``SecretStr`` so they never show in a repr or a log line.
"""

from __future__ import annotations

import os
from collections.abc import Mapping

from pydantic import BaseModel, ConfigDict, Field, SecretStr, ValidationError, field_validator

from workflow.shop.records import SHOP_PREFIX

DEFAULT_SLACK_API_URL = "https://slack.com/api/"

# Field name -> environment variable.
ENV_NAMES = {
    "slack_bot_token": "SLACK_BOT_TOKEN",
    "slack_signing_secret": "SLACK_SIGNING_SECRET",
    "checkpoint_bucket": "CHECKPOINT_BUCKET",
    "checkpoint_prefix": "CHECKPOINT_PREFIX",
    "checkpoint_signing_key": "CHECKPOINT_SIGNING_KEY",
    "anthropic_api_key": "ANTHROPIC_API_KEY",
    "anthropic_model": "ANTHROPIC_MODEL",
    "anthropic_timeout_seconds": "ANTHROPIC_TIMEOUT_SECONDS",
    "max_rounds": "MAX_ROUNDS",
    "lock_ttl_seconds": "LOCK_TTL_SECONDS",
    "approver_ids": "APPROVER_IDS",
    "no_self_approval": "NO_SELF_APPROVAL",
    "slack_api_url": "SLACK_API_URL",
    "shop_channel": "SHOP_CHANNEL",
    "shop_request": "SHOP_REQUEST",
}


class SettingsError(ValueError):
    """A configuration variable is missing or invalid; the message names it."""


class Settings(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")

    slack_bot_token: SecretStr = Field(min_length=1)
    slack_signing_secret: SecretStr = Field(min_length=1)
    checkpoint_bucket: str = Field(min_length=3, max_length=63)
    checkpoint_prefix: str = SHOP_PREFIX
    checkpoint_signing_key: SecretStr | None = Field(default=None, min_length=16)
    anthropic_api_key: SecretStr | None = None
    anthropic_model: str = "claude-haiku-5-5"
    # Per attempt; the SDK makes up to three. Lambda gives an invocation 60 s (serverless.yml), so
    # the attempts and their backoff must end well inside it, or Lambda kills the invocation
    # before the person hears anything. The SDK's own default is 600 s.
    anthropic_timeout_seconds: float = Field(default=15, gt=0, le=120)
    max_rounds: int = Field(default=3, ge=1, le=10)
    lock_ttl_seconds: float = Field(default=60, gt=0, le=900)
    approver_ids: frozenset[str] = frozenset()
    no_self_approval: bool = False
    slack_api_url: str = DEFAULT_SLACK_API_URL
    shop_channel: str = ""
    shop_request: str = ""

    @field_validator("approver_ids", mode="before")
    @classmethod
    def _split_ids(cls, value: object) -> object:
        if isinstance(value, str):
            return frozenset(part.strip() for part in value.split(",") if part.strip())
        return value

    @field_validator("slack_api_url")
    @classmethod
    def _trailing_slash(cls, value: str) -> str:
        if not value.startswith(("https://", "http://")):
            raise ValueError("must be an http(s) URL")
        return value if value.endswith("/") else value + "/"

    @classmethod
    def from_env(cls, environ: Mapping[str, str] | None = None) -> Settings:
        """Settings from ``environ`` (default: the process environment).

        Raises SettingsError naming the first variable that is missing or invalid. Empty
        variables count as unset, so optional values can be blanked in serverless.yml.
        """
        env = os.environ if environ is None else environ
        values = {field: env[name] for field, name in ENV_NAMES.items() if env.get(name)}
        try:
            return cls.model_validate(values)
        except ValidationError as exc:
            first = exc.errors()[0]
            field = str(first["loc"][0]) if first["loc"] else "?"
            name = ENV_NAMES.get(field, field)
            problem = "is not set" if first["type"] == "missing" else f"is invalid: {first['msg']}"
            raise SettingsError(f"{name} {problem}") from None
