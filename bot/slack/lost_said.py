"""What is said about each kind of lost run, and where (``bot.steps.lost`` decides whether to say
it).

Each is read from the original request as Slack sent it (its signature checked by
``bot.steps.lost``): a ``/shop`` command is answered through its response_url, a click in the
basket's thread, with the basket's number read from the message Slack sends back with the click;
a held basket's Undo pressed on the Home tab, in that basket's thread too (its receipt says where).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from .blocks import APPROVE, EDIT, REJECT, START_AGAIN
from .edit_form import EDIT_MODAL, read_edit_metadata
from .home_view import HOME_UNDO
from .modal import read_modal_metadata
from .payloads import read_shop, request_text

RESHOP = "I couldn't finish writing your basket — try /shop again."
AGAIN_LOST = "The new basket wasn't started — press Start again to try once more."
SCHEDULE_LOST = "The weekly basket couldn't be written this time. Try /shop."
VERBS = {APPROVE: ("approval", "Approve"), REJECT: ("rejection", "Reject")}


@dataclass(frozen=True)
class Said:
    """What to say about one lost run: where, and the marker's tenant."""

    tenant: str
    channel: str
    text: str
    thread_ts: str | None = None
    user: str = ""  # with reply_url: an ephemeral to this person
    reply_url: str = ""
    session: str = ""  # a /shop's: its draft message, if it has one, says so too (bot.slack.draft)
    change_of: str = ""  # a change's: the request it answered, whose draft says so too


def as_dict(value: object) -> dict[str, Any]:
    return value if isinstance(value, dict) else {}


def lost_command(form: dict[str, str]) -> Said | None:
    tenant, channel, user = form.get("team_id"), form.get("channel_id"), form.get("user_id")
    if not (tenant and channel and user) or form.get("command") != "/shop":
        return None
    url = form.get("response_url", "")
    reply_url = url if url.startswith(("https://", "http://")) and request_text(form) else ""
    shop = read_shop(form)
    session = "" if shop is None else shop.where.session_id
    return Said(tenant, channel, RESHOP, user=user, reply_url=reply_url, session=session)


def lost_click(payload: dict[str, Any]) -> Said | None:
    team = as_dict(payload.get("team")).get("id")
    user = as_dict(payload.get("user")).get("id")
    container = as_dict(payload.get("container"))
    actions = payload.get("actions")
    action = as_dict(actions[0]).get("action_id") if isinstance(actions, list) and actions else None
    channel, ts = container.get("channel_id"), container.get("message_ts")
    if not all(isinstance(v, str) and v for v in (team, user, channel, ts)):
        return None
    if action == START_AGAIN:  # pressed in a basket's thread: say it in that thread
        text = f"<@{user}> {AGAIN_LOST}"
        return Said(str(team), str(channel), text, thread_ts=str(container.get("thread_ts") or ts))
    basket = basket_number(as_dict(payload.get("message")))
    of = f" of basket {basket}" if basket else ""
    if action == EDIT:  # the form opened, but was never filled in
        text = f"<@{user}> The Edit items form{of} couldn't be filled in — press Edit items again."
        return Said(str(team), str(channel), text, thread_ts=str(ts))
    noun, button = VERBS.get(str(action), ("answer", "the button"))
    text = f"<@{user}> Your {noun}{of} didn't go through — press {button} again."
    return Said(str(team), str(channel), text, thread_ts=str(ts))


HOME_UNDO_LOST = (
    "Your Undo from the Home tab didn't go through — if the basket hasn't been ordered yet, "
    "press Undo on it."
)


def home_undo_of(payload: dict[str, Any]) -> tuple[str, str, str] | None:
    """(workspace, person, the button's value) of an Undo pressed on the Home tab, else None:
    it carries no channel, so where to say it is lost comes from the basket's receipt."""
    team = as_dict(payload.get("team")).get("id")
    user = as_dict(payload.get("user")).get("id")
    actions = payload.get("actions")
    action = as_dict(actions[0]) if isinstance(actions, list) and actions else {}
    value = action.get("value")
    if action.get("action_id") != HOME_UNDO:
        return None
    if not all(isinstance(v, str) and v for v in (team, user, value)):
        return None
    return str(team), str(user), str(value)


def basket_number(message: dict[str, Any]) -> str:
    """ "2" from the basket message's "Basket 2 of 3" header, as Slack sends the message back."""
    for block in message.get("blocks") or []:
        text = as_dict(as_dict(block).get("text")).get("text")
        if as_dict(block).get("type") == "header" and isinstance(text, str):
            words = text.split()
            if len(words) >= 2 and words[0] == "Basket" and words[1].isdigit():
                return words[1]
    return ""


def lost_change(payload: dict[str, Any], metadata_key: bytes) -> Said | None:
    """A change (or an edit) submitted from its modal: said in the basket's thread, where the
    modal's MACed metadata says it is."""
    team = as_dict(payload.get("team")).get("id")
    user = as_dict(payload.get("user")).get("id")
    view = as_dict(payload.get("view"))
    if view.get("callback_id") == EDIT_MODAL:
        opened = read_edit_metadata(metadata_key, str(team), view.get("private_metadata"))
        if not (isinstance(team, str) and isinstance(user, str) and opened):
            return None
        text = f"<@{user}> Your edit didn't go through — press Edit items again."
        return Said(team, opened.target.channel, text, thread_ts=opened.target.message_ts)
    target = read_modal_metadata(metadata_key, str(team), view.get("private_metadata"))
    if not (isinstance(team, str) and isinstance(user, str) and target):
        return None
    text = f"<@{user}> Your change didn't go through — press Change… again."
    ref = target.ref
    return Said(
        team,
        target.channel,
        text,
        thread_ts=target.message_ts,
        session=ref.session_id,
        change_of=ref.request_id,
    )
