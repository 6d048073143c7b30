"""What the tests of baskets shown as they are written (``bot.slack.draft``) read back: the
draft's updates as the fake Slack took them, their blocks as text, whether they had buttons."""

from __future__ import annotations

import json
from typing import Any

import pytest

from bot.sandbox.world import World


def every_update(monkeypatch: pytest.MonkeyPatch) -> None:
    """Each finished item (or change) shown at once: a draft waits EVERY seconds between
    updates, and the fakes answer within milliseconds here."""
    import bot.slack.draft

    monkeypatch.setattr(bot.slack.draft, "EVERY", 0.0)


def updates(world: World) -> list[dict[str, Any]]:
    return [c.args for c in world.slack.calls_to("chat.update") if not c.error]


def said(update: dict[str, Any]) -> str:
    """An update's blocks as text (a JSON string as slack_sdk sent them, or a list)."""
    return json.dumps(update.get("blocks"), ensure_ascii=False)


def has_buttons(blocks: Any) -> bool:
    if isinstance(blocks, str):
        blocks = json.loads(blocks)
    return any(b["type"] == "actions" for b in blocks or [])
