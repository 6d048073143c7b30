"""Block Kit for the basket messages and the change modal: pure functions of data.

Model- and user-written text is escaped for mrkdwn (``&``, ``<``, ``>`` only), which also defuses
``<!channel>``, ``<@U…>`` and ``<!subteam^…>``. Button values carry the session and request IDs,
never the basket. Limits (TRAPS.md, Slack's Block Kit reference): ≤ 50 blocks a message, section
text ≤ 3000, header ≤ 150, button text ≤ 75 and value ≤ 2000, modal title ≤ 24,
``private_metadata`` ≤ 3000.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

APPROVE = "approve_basket"
REJECT = "reject_basket"
CHANGE = "change_basket"
CHANGE_MODAL = "change_basket_modal"
CHANGE_BLOCK = "change"
CHANGE_INPUT = "change_text"
MAX_CHANGE_LENGTH = 500

SECTION_LIMIT = 3000
MAX_ITEM_SECTIONS = 40  # leaves room for header, context and actions under 50 blocks
MAX_ITEM_CHARS = 300

Block = dict[str, Any]


def escape(text: str) -> str:
    """Text safe inside mrkdwn: nothing in it can format a link or ping anyone."""
    return text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")


@dataclass(frozen=True)
class Ref:
    """What a button or a modal carries: which session, which pending request."""

    session_id: str
    request_id: str

    def to_value(self) -> str:
        return json.dumps({"s": self.session_id, "r": self.request_id}, separators=(",", ":"))

    @classmethod
    def from_value(cls, value: str | None) -> Ref | None:
        """The reference in a button value or metadata, or None if it is not one of ours."""
        try:
            data = json.loads(value or "")
        except ValueError:
            return None
        if not isinstance(data, dict):
            return None
        session, request = data.get("s"), data.get("r")
        if not isinstance(session, str) or not isinstance(request, str):
            return None
        return cls(session, request)

    @staticmethod
    def metadata(value: str | None) -> tuple[str, str] | None:
        """``(channel, message_ts)`` from a change modal's metadata, or None."""
        try:
            data = json.loads(value or "")
        except ValueError:
            return None
        channel = data.get("c") if isinstance(data, dict) else None
        ts = data.get("m") if isinstance(data, dict) else None
        if not isinstance(channel, str) or not isinstance(ts, str):
            return None
        return channel, ts


def _plain(text: str, limit: int) -> dict[str, Any]:
    return {"type": "plain_text", "text": text[:limit], "emoji": True}


def item_sections(items: list[str]) -> list[Block]:
    """The items as bullet lines in as few sections as fit, within the block budget."""
    sections: list[str] = []
    current = ""
    shown = 0
    for item in items:
        line = f"• {escape(item[:MAX_ITEM_CHARS])}\n"
        if len(current) + len(line) > SECTION_LIMIT:
            if len(sections) + 1 >= MAX_ITEM_SECTIONS:
                break
            sections.append(current)
            current = ""
        current += line
        shown += 1
    if current:
        sections.append(current)
    if shown < len(items):
        sections[-1] = sections[-1][: SECTION_LIMIT - 40] + f"…and {len(items) - shown} more items"
    if not sections:
        sections = ["_(the shopper wrote no items)_"]
    return [{"type": "section", "text": {"type": "mrkdwn", "text": s.rstrip()}} for s in sections]


def context(*lines: str) -> Block:
    return {"type": "context", "elements": [{"type": "mrkdwn", "text": ln} for ln in lines]}


def basket_blocks(
    *, round: int, max_rounds: int, items: list[str], requested_by: str, progress: str, ref: Ref
) -> list[Block]:
    """A basket waiting for an answer: header, items, who asked, Approve / Reject / Change…"""
    asked = f"Asked by <@{requested_by}>" if requested_by else "Weekly shop"
    value = ref.to_value()
    return [
        {"type": "header", "text": _plain(f"Basket {round} of {max_rounds}", 150)},
        *item_sections(items),
        context(f"{asked} · {escape(progress)}"),
        {
            "type": "actions",
            "block_id": "basket_actions",
            "elements": [
                _button("Approve", APPROVE, value, style="primary"),
                {
                    **_button("Reject", REJECT, value, style="danger"),
                    "confirm": {
                        "title": _plain("Reject this basket?", 100),
                        "text": _plain("No order will be placed this week.", 300),
                        "confirm": _plain("Reject", 30),
                        "deny": _plain("Keep it", 30),
                        "style": "danger",
                    },
                },
                _button("Change…", CHANGE, value),
            ],
        },
    ]


def _button(text: str, action_id: str, value: str, style: str | None = None) -> Block:
    button: Block = {"type": "button", "text": _plain(text, 75), "action_id": action_id}
    button["value"] = value
    if style:
        button["style"] = style
    return button


def answered_blocks(
    *,
    round: int,
    max_rounds: int,
    items: list[str],
    verdict: str,
    user: str,
    at: int,
    note: str = "",
) -> list[Block]:
    """The same basket once answered: the buttons replaced by who answered, when, and why."""
    when = f"<!date^{at}^{{date_short_pretty}} at {{time}}|{at}>"
    said = f": {escape(note[:MAX_CHANGE_LENGTH])}" if note else ""
    return [
        {"type": "header", "text": _plain(f"Basket {round} of {max_rounds}", 150)},
        *item_sections(items),
        context(f"{verdict} by <@{user}>{said} · {when}"),
    ]


def change_modal(ref: Ref, channel_id: str, message_ts: str) -> dict[str, Any]:
    """The "What should change?" modal; metadata carries IDs and where the basket is."""
    metadata = json.dumps(
        {"s": ref.session_id, "r": ref.request_id, "c": channel_id, "m": message_ts},
        separators=(",", ":"),
    )
    return {
        "type": "modal",
        "callback_id": CHANGE_MODAL,
        "private_metadata": metadata,
        "title": _plain("Change this basket", 24),
        "submit": _plain("Ask for it", 24),
        "close": _plain("Cancel", 24),
        "blocks": [
            {
                "type": "input",
                "block_id": CHANGE_BLOCK,
                "label": _plain("What should change?", 2000),
                "element": {
                    "type": "plain_text_input",
                    "action_id": CHANGE_INPUT,
                    "multiline": True,
                    "max_length": MAX_CHANGE_LENGTH,
                    "placeholder": _plain("We are away on Saturday, no pizza", 150),
                },
            }
        ],
    }
