"""The change modal: its blocks, and its ``private_metadata``, MACed.

The metadata names the tenant, session, request, channel and basket message, with a MAC over
them, so a submission whose metadata the bot did not write (edited, or from another workspace)
is refused in the ack path, before anything is read. ``private_metadata`` ≤ 3000 characters and
a modal title ≤ 24 (Slack's Block Kit reference; ``bot.sandbox.block_kit`` checks them).
"""

from __future__ import annotations

import base64
import hashlib
import hmac
import json
from dataclasses import dataclass
from typing import Any

from .blocks import MAX_CHANGE_LENGTH, Ref, plain

CHANGE_MODAL = "change_basket_modal"
CHANGE_BLOCK = "change"
CHANGE_INPUT = "change_text"
METADATA_MAC_CHARS = 22  # 128 bits, base64url


@dataclass(frozen=True)
class ModalTarget:
    """What a change modal answers: the request, and the basket message it came from."""

    ref: Ref
    channel: str
    message_ts: str


def _metadata_mac(
    key: bytes, tenant: str, ref: Ref, channel: str, message_ts: str, extra: dict[str, str]
) -> str:
    """The MAC over every field: the change modal's five, then any ``extra`` by name (so a
    change modal's metadata is no edit modal's, nor the other way round)."""
    named = [f"{k}={v}" for k, v in sorted(extra.items())]
    fields = "\x1f".join([tenant, ref.session_id, ref.request_id, channel, message_ts, *named])
    digest = hmac.new(key, fields.encode(), hashlib.sha256).digest()
    return base64.urlsafe_b64encode(digest).decode()[:METADATA_MAC_CHARS]


def modal_metadata(key: bytes, tenant: str, ref: Ref, channel: str, message_ts: str) -> str:
    """The change modal's ``private_metadata``: IDs and where the basket is, with their MAC."""
    return metadata_with(key, tenant, ref, channel, message_ts)


def metadata_with(
    key: bytes, tenant: str, ref: Ref, channel: str, message_ts: str, **extra: str
) -> str:
    """A modal's ``private_metadata``: the IDs, where the basket is, ``extra`` fields (one
    letter each), and the MAC over all of them."""
    data = {"s": ref.session_id, "r": ref.request_id, "c": channel, "m": message_ts, **extra}
    data["h"] = _metadata_mac(key, tenant, ref, channel, message_ts, extra)
    return json.dumps(data, separators=(",", ":"))


def read_modal_metadata(key: bytes, tenant: str, value: object) -> ModalTarget | None:
    """The target in ``value`` if this bot wrote it for ``tenant``; None for anything else
    (garbage, missing keys, edited fields, another workspace's modal)."""
    read = read_metadata_with(key, tenant, value)
    return None if read is None else read[0]


def read_metadata_with(
    key: bytes, tenant: str, value: object, *extra: str
) -> tuple[ModalTarget, dict[str, str]] | None:
    """The target and the ``extra`` fields in ``value`` if this bot wrote them, with exactly
    those fields, for ``tenant``; None for anything else."""
    try:
        data = json.loads(value) if isinstance(value, str) else None
    except ValueError:
        return None
    if not isinstance(data, dict) or set(data) != {"s", "r", "c", "m", "h", *extra}:
        return None
    fields = [data.get(k) for k in ("s", "r", "c", "m", "h", *extra)]
    if not all(isinstance(f, str) and f for f in fields):
        return None
    session, request, channel, ts, mac = (str(f) for f in fields[:5])
    ref = Ref(session, request)
    named = {k: str(data[k]) for k in extra}
    if not hmac.compare_digest(mac, _metadata_mac(key, tenant, ref, channel, ts, named)):
        return None
    return ModalTarget(ref, channel, ts), named


def change_modal(metadata: str) -> dict[str, Any]:
    """The "What should change?" modal; ``metadata`` comes from :func:`modal_metadata`."""
    return {
        "type": "modal",
        "callback_id": CHANGE_MODAL,
        "private_metadata": metadata,
        "title": plain("Change this basket", 24),
        "submit": plain("Ask for it", 24),
        "close": plain("Cancel", 24),
        "blocks": [
            {
                "type": "input",
                "block_id": CHANGE_BLOCK,
                "label": plain("What should change?", 2000),
                "element": {
                    "type": "plain_text_input",
                    "action_id": CHANGE_INPUT,
                    "multiline": True,
                    "max_length": MAX_CHANGE_LENGTH,
                    "placeholder": plain("We are away on Saturday, no pizza", 150),
                },
            }
        ],
    }
