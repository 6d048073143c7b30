"""The small pieces every message of the bot is built of: pure functions of data (the basket
message: ``bot.slack.basket_message``; the change modal: ``bot.slack.modal``).

Model- and user-written text is escaped for mrkdwn (``&``, ``<``, ``>`` only), which also defuses
``<!channel>``, ``<@U…>`` and ``<!subteam^…>``. Button values carry the session and request IDs,
never the basket. Limits (Slack's Block Kit reference on docs.slack.dev; the fake Web API in
``bot.sandbox.block_kit`` checks them all): ≤ 50 blocks a message, section text ≤ 3000, header ≤
150, button text ≤ 75 and value ≤ 2000, modal title ≤ 24, ``private_metadata`` ≤ 3000.

The action IDs of every button, the plain and mrkdwn text objects, a section, a context, a
button and what it carries (:class:`Ref`), a date, people, a count; and the two one-section
messages a thread shows (Start again, and a message whose button was used).
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from workflow.shop.text import strip_controls

APPROVE = "approve_basket"
REJECT = "reject_basket"
CHANGE = "change_basket"
EDIT = "edit_basket"  # Edit items: a modal of the basket's items, answered with no model call
START_AGAIN = "start_again"
RETRY_ORDER = "retry_order"  # an order that did not go through: place it again
UNDO = "undo_order"  # a held basket's Undo: its approvals start again, nothing is ordered
OPEN_ORDER = "open_order"  # a link button to where the order went: Slack sends its click too
MAX_CHANGE_LENGTH = 500

Block = dict[str, Any]


def escape(text: str) -> str:
    """Text safe inside mrkdwn: nothing in it can format a link or ping anyone, and no
    control or bidirectional-control character changes how it reads (``workflow.shop.text``)."""
    text = strip_controls(text)
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
        """The reference in a button value, or None if it is not one of ours."""
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


def slack_date(at: int) -> str:
    """``at`` (epoch seconds) as Slack shows a date in each reader's own time zone."""
    return f"<!date^{at}^{{date_short_pretty}} at {{time}}|{at}>"


def plain(text: str, limit: int) -> dict[str, Any]:
    """A ``plain_text`` object: nothing in it formats or pings; no control character stays."""
    return {"type": "plain_text", "text": strip_controls(text)[:limit], "emoji": True}


def count(n: int, thing: str = "item") -> str:
    """``n`` things in English (``workflow.shop.basket.count``)."""
    from workflow.shop.basket import count as counted

    return counted(n, thing)


def section(text: str, kind: str = "mrkdwn") -> Block:
    body: dict[str, Any] = {"type": kind, "text": text}
    if kind == "plain_text":
        body["emoji"] = False  # ":pizza:" stays what the model wrote
    return {"type": "section", "text": body}


def context(*lines: str) -> Block:
    return {"type": "context", "elements": [{"type": "mrkdwn", "text": ln} for ln in lines]}


def people(users: Sequence[str]) -> str:
    """``<@A>``, ``<@A> and <@B>``, ``<@A>, <@B> and <@C>``: user IDs as mentions (IDs Slack
    gave us, never model or user text)."""
    mentions = [f"<@{u}>" for u in users]
    if len(mentions) <= 1:
        return "".join(mentions)
    return f"{', '.join(mentions[:-1])} and {mentions[-1]}"


def button(text: str, action_id: str, value: str, style: str | None = None) -> Block:
    button: Block = {"type": "button", "text": plain(text, 75), "action_id": action_id}
    button["value"] = value
    if style:
        button["style"] = style
    return button


def start_again_blocks(text: str, value: str) -> list[Block]:
    """``text`` (ours) and a Start again button whose value names the retired session."""
    return [
        section(text),
        {
            "type": "actions",
            "block_id": "start_again_actions",
            "elements": [button("Start again", START_AGAIN, value, style="primary")],
        },
    ]


def settled_blocks(text: str) -> list[Block]:
    """A message whose button was used: only ``text`` (ours) is left."""
    return [section(text)]
