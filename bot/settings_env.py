"""The deploy's environment variables, and how each one's text becomes a checked value.

``ENV_NAMES`` names the variable of each :class:`bot.settings.Settings` field, ``CONVERT`` turns
its text into the field's value or raises ValueError saying what is wrong (``Settings.from_env``
puts the variable's name in front), and ``REQUIRED`` lists the fields without a default. What
holds between fields (a webhook needs its secret) is checked by ``Settings`` itself.

A secret is a :class:`Secret` from here on, so it never shows in a repr or a log line. Only the
standard library is imported, and ``urllib.parse`` only when a webhook URL is set: this is read
on every cold start, in the ack path (``bot.settings``).
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any


@dataclass(frozen=True)
class Secret:
    """A secret value: never in a repr, a str() or a log line."""

    _value: str = field(repr=False)

    def get_secret_value(self) -> str:
        return self._value

    def __str__(self) -> str:
        return "**********"

    def __repr__(self) -> str:
        return "Secret('**********')"


def _text(min_length: int = 0, max_length: int = 10_000) -> Callable[[str], str]:
    def convert(value: str) -> str:
        if not min_length <= len(value) <= max_length:
            raise ValueError(f"must be {min_length} to {max_length} characters")
        return value

    return convert


def _secret(min_length: int = 1) -> Callable[[str], Secret]:
    def convert(value: str) -> Secret:
        if len(value) < min_length:
            raise ValueError(f"must be at least {min_length} characters")
        return Secret(value)

    return convert


def _number(kind: Callable[[str], Any], low: float, high: float, low_open: bool = False) -> Any:
    def convert(value: str) -> Any:
        number = kind(value)
        if (number <= low if low_open else number < low) or number > high:
            raise ValueError(f"must be {'over' if low_open else 'at least'} {low}, at most {high}")
        return number

    return convert


_UNITS = {"s": 1, "m": 60, "h": 3600, "d": 86400}


def _choice(*allowed: str) -> Callable[[str], str]:
    def convert(value: str) -> str:
        if value not in allowed:
            raise ValueError(f"must be one of {', '.join(allowed)}")
        return value

    return convert


def _webhook_url(value: str) -> str:
    """An https URL with a host and no user info; where it resolves, and everything else, is
    checked at each send (``bot.orders.safe_url``), since DNS can change after a cold start."""
    from urllib.parse import urlsplit

    parts = urlsplit(value)
    if parts.scheme != "https" or not parts.hostname or "@" in parts.netloc:
        raise ValueError("must be an https:// URL to a host, with no user name or password")
    return value


def _parameter_path(value: str) -> str:
    """An SSM parameter path (``/weekly-shop/prod/workspaces``): a workspace's keys go under it."""
    if not re.fullmatch(r"(/[A-Za-z0-9_.-]+){1,8}", value):
        raise ValueError("must be a path like /weekly-shop/prod/workspaces")
    return value


def _pinned_hosts(value: str) -> dict[str, tuple[str, int]]:
    """``{"host": ["127.0.0.1", port]}``: where a webhook's host name goes (curl's --resolve)."""
    found = json.loads(value)
    if not isinstance(found, dict) or not all(
        isinstance(k, str) and isinstance(v, list) and len(v) == 2 for k, v in found.items()
    ):
        raise ValueError('must be JSON like {"host": ["127.0.0.1", 8443]}')
    return {k: (str(v[0]), int(v[1])) for k, v in found.items()}


def _duration(low: int, high: int) -> Callable[[str], int]:
    """Seconds from "90s", "45m", "6h", "3d" or a bare number of seconds."""

    def convert(value: str) -> int:
        text = value.strip().lower()
        unit = _UNITS.get(text[-1:], 0)
        try:
            seconds = int(text[:-1] if unit else text) * (unit or 1)
        except ValueError:
            raise ValueError('must be a duration such as "6h", "45m" or "3d"') from None
        if seconds != 0 and not low <= seconds <= high:
            raise ValueError(f"must be 0 (off) or from {low} s to {high // 86400} days")
        return seconds

    return convert


def _flag(value: str) -> bool:
    if value.strip().lower() in ("1", "true", "yes", "on"):
        return True
    if value.strip().lower() in ("0", "false", "no", "off"):
        return False
    raise ValueError("must be true or false")


SLACK_USER_ID = re.compile(r"^[UW][A-Z0-9]{2,20}$")
MAX_APPROVER_IDS = 50


def _ids(value: str) -> frozenset[str]:
    """Slack user IDs, comma-separated (``U…`` or ``W…``, as ``users.info`` names people)."""
    ids = frozenset(part.strip() for part in value.split(",") if part.strip())
    wrong = sorted(i for i in ids if not SLACK_USER_ID.fullmatch(i))
    if wrong:
        raise ValueError(f"{wrong[0][:30]!r} is not a Slack user ID (U… or W…)")
    if len(ids) > MAX_APPROVER_IDS:
        raise ValueError(f"at most {MAX_APPROVER_IDS} people")
    return ids


def _url(value: str) -> str:
    if not value.startswith(("https://", "http://")):
        raise ValueError("must be an http(s) URL")
    from urllib.parse import urlsplit  # only when a URL is set (the tests', the sandbox's)

    parts = urlsplit(value)
    try:
        parts.port  # noqa: B018 - a port that is not one raises here, not at the first call
    except ValueError:
        raise ValueError("must have a port of 1 to 65535, if any") from None
    if not parts.hostname:
        raise ValueError("must name a host")
    return value if value.endswith("/") else value + "/"


def _redirect_url(value: str) -> str:
    """An OAuth redirect URL, kept exactly as written (Kroger compares it character for
    character with the one registered): https, or http on 127.0.0.1 (the sandbox's)."""
    if not value.startswith(("https://", "http://127.0.0.1:")) or len(value) > 2000:
        raise ValueError("must be an https:// URL (http://127.0.0.1:<port>/… for the sandbox)")
    if any(c.isspace() for c in value) or "#" in value:
        raise ValueError("must be one URL, with no spaces and no fragment")
    return value


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
    "lock_wait_seconds": "LOCK_WAIT_SECONDS",
    "lock_retry_after_seconds": "LOCK_RETRY_AFTER_SECONDS",
    "approver_ids": "APPROVER_IDS",
    "no_self_approval": "NO_SELF_APPROVAL",
    "approvals_needed": "APPROVALS_NEEDED",
    "slack_api_url": "SLACK_API_URL",
    "shop_channel": "SHOP_CHANNEL",
    "shop_request": "SHOP_REQUEST",
    "remind_after": "REMIND_AFTER",
    "max_reminders": "MAX_REMINDERS",
    "expire_after": "EXPIRE_AFTER",
    "order_delay": "ORDER_DELAY",
    "order_destination": "ORDER_DESTINATION",
    "order_webhook_url": "ORDER_WEBHOOK_URL",
    "order_webhook_secret": "ORDER_WEBHOOK_SECRET",
    "order_webhook_pinned_hosts": "ORDER_WEBHOOK_PINNED_HOSTS",
    "order_webhook_ca_bundle": "ORDER_WEBHOOK_CA_BUNDLE",
    "instacart_api_key": "INSTACART_API_KEY",
    "share_deploy_keys": "SHARE_DEPLOY_KEYS",
    "instacart_server": "INSTACART_SERVER",
    "instacart_api_url": "INSTACART_API_URL",
    "workspace_secrets_path": "WORKSPACE_SECRETS_PATH",
    "workspace_secrets_key": "WORKSPACE_SECRETS_KEY",
    "timer_group": "TIMER_GROUP",
    "timer_target_arn": "TIMER_TARGET_ARN",
    "timer_role_arn": "TIMER_ROLE_ARN",
    "slack_client_id": "SLACK_CLIENT_ID",
    "slack_client_secret": "SLACK_CLIENT_SECRET",
    "shop_team": "SHOP_TEAM",
    "kroger_client_id": "KROGER_CLIENT_ID",
    "kroger_client_secret": "KROGER_CLIENT_SECRET",
    "kroger_api_url": "KROGER_API_URL",
    "kroger_redirect_url": "KROGER_REDIRECT_URL",
}
CONVERT: dict[str, Callable[[str], Any]] = {
    "slack_bot_token": _secret(),
    "slack_signing_secret": _secret(),
    "checkpoint_bucket": _text(3, 63),
    "checkpoint_prefix": _text(),
    "checkpoint_signing_key": _secret(16),
    "anthropic_api_key": _secret(),
    "anthropic_model": _text(1),
    "anthropic_timeout_seconds": _number(float, 0, 120, low_open=True),
    "max_rounds": _number(int, 1, 10),
    "lock_ttl_seconds": _number(float, 0, 900, low_open=True),
    "lock_wait_seconds": _number(float, 0, 30),
    "lock_retry_after_seconds": _number(float, 0, 60),
    "approver_ids": _ids,
    "no_self_approval": _flag,
    "share_deploy_keys": _flag,
    "approvals_needed": _number(int, 1, 50),  # BasketDecision.approvals names at most 50
    "slack_api_url": _url,
    "shop_channel": _text(),
    "shop_request": _text(),
    "remind_after": _duration(60, 7 * 86400),
    "max_reminders": _number(int, 0, 10),
    # Under the bucket's 30-day lifecycle rule, which would delete a waiting basket first.
    "expire_after": _duration(60, 21 * 86400),
    # The undo window: an order waits this long for an approver's Undo (Scheduler's one-time
    # schedules fire a minute or more ahead, bot.records.timers.MIN_LEAD_SECONDS).
    "order_delay": _duration(60, 86400),
    "order_destination": _choice("canvas", "instacart", "webhook"),
    "order_webhook_url": _webhook_url,
    # Slack's signing secrets are 32 hex characters; a webhook's should be as hard to guess.
    "order_webhook_secret": _secret(16),
    # For the sandbox and the tests only (their receiver is on 127.0.0.1): never in a deploy.
    "order_webhook_pinned_hosts": _pinned_hosts,
    "order_webhook_ca_bundle": _text(1, 4096),
    "instacart_api_key": _secret(8),
    "instacart_server": _choice("development", "production"),
    # For the sandbox and the tests only (their Instacart stand-in is on 127.0.0.1).
    "instacart_api_url": _url,
    "workspace_secrets_path": _parameter_path,
    "workspace_secrets_key": _text(1, 2048),
    "timer_group": _text(1, 64),
    "timer_target_arn": _text(20, 2048),
    "timer_role_arn": _text(20, 2048),
    "slack_client_id": _text(5, 64),
    "slack_client_secret": Secret,
    "shop_team": _text(2, 32),
    "kroger_client_id": _text(3, 200),
    "kroger_client_secret": _secret(8),
    # For the sandbox and the tests only (their Kroger stand-in is on 127.0.0.1).
    "kroger_api_url": _url,
    "kroger_redirect_url": _redirect_url,
}
REQUIRED = ("slack_signing_secret", "checkpoint_bucket")
