"""Slack's own shapes for what the records read back from S3 before it goes into mrkdwn or a
link: a user, a channel, a message's ``ts``, an order's link. A receipt, an outcome record, an
order record and a settings change each check what they name with these, so a value planted in
the bucket cannot become a mention of someone else or a link elsewhere. Raise ValueError."""

from __future__ import annotations

import re

SLACK_USER = re.compile(r"^[UW][A-Z0-9]{2,20}$")
SLACK_CHANNEL = re.compile(r"^[CDG][A-Z0-9]{2,20}$")
SLACK_TS = re.compile(r"^\d{1,12}\.\d{6}$")


def check_link(url: str, where: str) -> None:
    """An order's link, as shown in Slack: ``https://``, or a local stand-in's own page
    (``http://127.0.0.1:<port>/…``, the sandbox's Instacart)."""
    if url and not url.startswith(("https://", "http://127.0.0.1:")):
        raise ValueError(f"{where} must be an https URL")


def check_slack_ids(where: str, *, user: str = "", channel: str = "", ts: str = "") -> None:
    """Slack's own shapes for IDs read back from S3 before they go into mrkdwn or a link."""
    if user and not SLACK_USER.fullmatch(user):
        raise ValueError(f"{where}: not a Slack user ID")
    if channel and not SLACK_CHANNEL.fullmatch(channel):
        raise ValueError(f"{where}: not a Slack channel ID")
    if ts and not SLACK_TS.fullmatch(ts):
        raise ValueError(f"{where}: not a Slack message ts")
