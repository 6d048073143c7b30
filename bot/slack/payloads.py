"""Reading what Slack sends: shapes checked before Bolt routes a request, fields type-checked.

Bolt indexes into payloads as Slack shapes them (``body["actions"][0]["action_id"]``…) and answers
500 to a signed payload of another shape. :func:`payload_problem` says why a body is not one this
app can route (the app answers 400), and the readers below turn a payload into a :class:`Click`
or a :class:`Where`, with every ID checked against Slack's ID shape and our own.
"""

from __future__ import annotations

import hashlib
import re
from dataclasses import dataclass
from typing import Any, Literal
from urllib.parse import parse_qsl

from slack_bolt import BoltRequest
from slack_bolt.request.internals import build_context
from slack_sdk.signature import SignatureVerifier

from workflow.errors import InvalidIdentifier
from workflow.persistence.store import validate_id

from .blocks import MAX_CHANGE_LENGTH, Ref
from .delivery import Where
from .edit_form import REMOVE_BLOCK, ItemEdit, read_edit_metadata, read_edit_state
from .modal import CHANGE_BLOCK, CHANGE_INPUT, ModalTarget, read_modal_metadata

# "again": Start again on a retired basket; "retry": Retry an order that did not go through (its
# Ref names the outcome record); "undo": Undo of a basket held for its undo window; "edit": a
# submitted Edit items modal.
Kind = Literal["approve", "reject", "change", "again", "retry", "undo", "edit"]
GONE = "This basket is no longer waiting for an answer."


@dataclass(frozen=True)
class Click:
    """A click (or a submitted change) read from a payload: who, where, on what."""

    tenant: str
    user: str
    channel: str
    message_ts: str
    ref: Ref
    kind: Kind
    change: str = ""
    delivery: str = ""  # names this interaction, the same in every retry of its lazy run
    edit: ItemEdit | None = None  # a submitted Edit items modal's edit


SAY_WHAT = f"Say what should change, in at most {MAX_CHANGE_LENGTH} characters."
MAX_REQUEST_LENGTH = 3000

_SLACK_ID = re.compile(r"[A-Za-z0-9]{1,40}")  # team, user and channel IDs: T0…, U0…, C0…
_MESSAGE_TS = re.compile(r"\d{1,20}\.\d{1,10}")


def session_id_for(*parts: str) -> str:
    """A session ID derived from what Slack or AWS sent, so a redelivery finds the same one."""
    return hashlib.sha256("\x1f".join(parts).encode()).hexdigest()[:24]


def _objects(body: dict[str, Any], *keys: str) -> str | None:
    bad = [k for k in keys if body.get(k) is not None and not isinstance(body[k], dict)]
    return f"{bad[0]} is not an object" if bad else None


def payload_problem(body: dict[str, Any]) -> str | None:
    """Why ``body`` is not a payload this app can route (None when it is one).

    A slash command or SSL check is a form: every value a string. A click or a submitted view
    must have the objects Bolt reads where Slack puts them. Anything else is not ours.
    """
    if "command" in body or "ssl_check" in body:
        bad = [k for k, v in body.items() if not isinstance(v, str)]
        return f"form field {bad[0]!r} is not a string" if bad else None
    kind = body.get("type")
    common = _objects(body, "user", "team", "enterprise", "channel", "container", "message")
    if kind == "block_actions":
        actions = body.get("actions")
        if not isinstance(actions, list) or not actions:
            return "block_actions without actions"
        if not all(isinstance(a, dict) and isinstance(a.get("action_id"), str) for a in actions):
            return "an action without an action_id"
        return common or _objects(body, "view", "state")
    if kind in ("view_submission", "view_closed"):
        view = body.get("view")
        if not isinstance(view, dict) or not all(
            isinstance(view.get(k), str) for k in ("type", "callback_id")
        ):
            return "a view without a type or a callback_id"
        return common or _objects(view, "state")
    if kind == "url_verification":
        return None if isinstance(body.get("challenge"), str) else "a challenge that is not text"
    if kind == "event_callback":
        event = body.get("event")
        if not isinstance(event, dict) or not isinstance(event.get("type"), str):
            return "an event without a type"
        return None if isinstance(body.get("team_id"), str) else "an event without a team_id"
    return f"payload type {str(kind)[:40]!r} is not handled here"


def reparse_form(req: BoltRequest) -> None:
    """Undo Bolt's misreading of a form body that merely contains the word "payload".

    Bolt's ``parse_body`` treats any body with the substring ``payload`` as an interactive
    payload and, finding no ``payload`` field, returns ``{}``: ``/shop the payload of pasta``, or
    any /shop from a channel or user whose name has the word, became an unhandled request.
    """
    if req.body or not req.raw_body or req.raw_body.startswith("{"):
        return
    form = dict(parse_qsl(req.raw_body, keep_blank_values=True))
    if form and "payload" not in form:
        req.body = form
        req.context = build_context(req.context, form)


def is_signed(req: BoltRequest, secret: str) -> bool:
    timestamp = req.headers.get("x-slack-request-timestamp", ["0"])[0]
    signature = req.headers.get("x-slack-signature", [""])[0]
    return SignatureVerifier(secret).is_valid(req.raw_body, timestamp, signature)


def _dict(value: object) -> dict[str, Any]:
    return value if isinstance(value, dict) else {}


def _slack_id(value: object) -> str | None:
    return value if isinstance(value, str) and _SLACK_ID.fullmatch(value) else None


def _team(body: dict[str, Any]) -> str | None:
    """The workspace that sent ``body``: the first of the places Slack puts it that is present."""
    for candidate in (
        _dict(body.get("team")).get("id"),
        body.get("team_id"),
        _dict(body.get("user")).get("team_id"),
    ):
        if candidate is not None:
            return _slack_id(candidate)
    return None


def _delivery(body: dict[str, Any]) -> str:
    """What names this interaction in every delivery of it: its trigger ID, hashed (a Lambda
    retry of the lazy run carries the same payload; another click has another trigger)."""
    trigger = body.get("trigger_id")
    return session_id_for("interaction", trigger) if isinstance(trigger, str) and trigger else ""


def _valid_ref(ref: Ref) -> bool:
    try:
        validate_id(ref.session_id, "session ID")
        validate_id(ref.request_id, "request ID")
    except InvalidIdentifier:
        return False
    return True


def click_from_action(body: dict[str, Any], kind: Kind) -> Click | None:
    """The click in a ``block_actions`` payload, or None if nobody can be told anything.

    A click whose button value is not one of ours (garbage, traversal, control characters)
    comes back with an empty :class:`Ref`, so the person hears the basket is gone.
    """
    container = _dict(body.get("container"))
    user = _slack_id(_dict(body.get("user")).get("id"))
    channel = _slack_id(_dict(body.get("channel")).get("id") or container.get("channel_id"))
    ts = container.get("message_ts") or _dict(body.get("message")).get("ts")
    tenant = _team(body)
    if not (tenant and user and channel and isinstance(ts, str) and _MESSAGE_TS.fullmatch(ts)):
        return None
    actions = body.get("actions")
    value = _dict(actions[0]).get("value") if isinstance(actions, list) and actions else None
    ref = Ref.from_value(value) if isinstance(value, str) else None
    if ref is None or not _valid_ref(ref):
        ref = Ref("", "")
    return Click(tenant, user, channel, ts, ref, kind, delivery=_delivery(body))


def read_change(metadata_key: bytes, body: dict[str, Any]) -> Click | str:
    """The change asked for in a ``view_submission`` payload, or what to say in the modal."""
    view = _dict(body.get("view"))
    tenant = _team(body)
    user = _slack_id(_dict(body.get("user")).get("id"))
    target = read_modal_metadata(metadata_key, tenant or "", view.get("private_metadata"))
    if not (tenant and user and target):
        return GONE
    values = _dict(_dict(_dict(view.get("state")).get("values")).get(CHANGE_BLOCK))
    text = _dict(values.get(CHANGE_INPUT)).get("value")
    text = text.strip() if isinstance(text, str) else ""
    if not text or len(text) > MAX_CHANGE_LENGTH:
        return SAY_WHAT
    return _submitted(body, tenant, user, target, "change", change=text)


def _submitted(
    body: dict[str, Any], tenant: str, user: str, target: ModalTarget, kind: Kind, **what: Any
) -> Click:
    """A modal's submission as the click on its basket that it is."""
    where = (target.channel, target.message_ts, target.ref)
    return Click(tenant, user, *where, kind, delivery=_delivery(body), **what)


def read_edit(metadata_key: bytes, body: dict[str, Any]) -> Click | dict[str, str]:
    """The edit in an Edit items ``view_submission``, or what to say in the modal, by block."""
    view = _dict(body.get("view"))
    tenant = _team(body)
    user = _slack_id(_dict(body.get("user")).get("id"))
    opened = read_edit_metadata(metadata_key, tenant or "", view.get("private_metadata"))
    if not (tenant and user and opened):
        return {REMOVE_BLOCK: GONE}
    edit = read_edit_state(opened, _dict(_dict(view.get("state")).get("values")))
    if isinstance(edit, dict):
        return edit
    return _submitted(body, tenant, user, opened.target, "edit", edit=edit)


@dataclass(frozen=True)
class Shop:
    """A ``/shop`` command: where its basket goes, what was asked, and by whom."""

    where: Where
    text: str
    user: str


def read_shop(command: dict[str, Any]) -> Shop | None:
    """The ``/shop`` command in ``command``; None if it lacks an ID or a text (see
    :func:`request_text`)."""
    tenant = _slack_id(command.get("team_id"))
    channel = _slack_id(command.get("channel_id"))
    user = _slack_id(command.get("user_id"))
    trigger = command.get("trigger_id")
    text = request_text(command)
    if not (tenant and channel and user and text and isinstance(trigger, str) and trigger):
        return None
    url = command.get("response_url")
    reply_url = url if isinstance(url, str) and url.startswith(("https://", "http://")) else ""
    where = Where(tenant, session_id_for(tenant, trigger), channel, reply_url)
    return Shop(where, text, user)


def request_text(command: dict[str, Any]) -> str:
    text = command.get("text")
    text = text.strip() if isinstance(text, str) else ""
    return text if len(text) <= MAX_REQUEST_LENGTH else ""
