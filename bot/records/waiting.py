"""What a session's receipt says of its basket (``bot.records.receipts``), in the receipt
object's S3 metadata (``x-amz-meta-*``), so that the Home tab lists baskets with a HEAD of each
receipt, never a checkpoint's payload.

    Waiting        the basket as posted: its message, its round, who asked, when, the first
                   words of what was asked; or, approved and held for its undo window, until
                   when and by whom
    metadata_of    a Waiting as metadata (a held basket's two fields only when it is held, so
                   a waiting basket's receipt is as it always was)
    waiting_of     the Waiting a receipt's metadata names; older receipts (no request, not
                   held) still read
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any
from urllib.parse import quote, unquote

from workflow.persistence.store import validate_id
from workflow.persistence.values import AllFields, check_int, check_str

from .slack_shapes import check_slack_ids

MAX_REQUEST_EXCERPT = 80  # characters of the request a receipt keeps
MAX_NAMED = 10  # approvers a held basket's receipt names (S3 metadata is 2 KB in all)


@dataclass(frozen=True, slots=True, kw_only=True)
class Waiting(AllFields):
    """The basket a session waits on, as posted: where, which round, who asked, when; or the
    basket approved and held for its undo window (``held_until``), and who approved it."""

    request_id: str
    channel: str
    ts: str
    round: int
    requested_by: str
    posted_at: int  # epoch seconds
    # The first words of what was asked (the person's own), so that two baskets waiting for
    # one person differ on the Home tab. Older receipts have none.
    request: str = ""
    # Approved, held until its order goes then (epoch seconds; 0: it waits for an answer), by
    # these people (the first MAX_NAMED): its ``posted_at`` is that approval. Older: neither.
    held_until: int = 0
    approved_by: tuple[str, ...] = ()

    def __post_init__(self) -> None:
        validate_id(self.request_id, "request ID")
        check_str(self.channel, "Waiting.channel", min_length=1, max_length=64)
        check_str(self.ts, "Waiting.ts", min_length=1, max_length=32)
        check_int(self.round, "Waiting.round", ge=1)
        check_str(self.requested_by, "Waiting.requested_by", max_length=64)
        check_int(self.posted_at, "Waiting.posted_at", ge=0)
        check_str(self.request, "Waiting.request", max_length=MAX_REQUEST_EXCERPT)
        check_slack_ids("Waiting", user=self.requested_by, channel=self.channel, ts=self.ts)
        check_int(self.held_until, "Waiting.held_until", ge=0)
        if not isinstance(self.approved_by, tuple) or len(self.approved_by) > MAX_NAMED:
            raise ValueError(f"Waiting.approved_by must be a tuple of at most {MAX_NAMED}")
        for user in self.approved_by:
            check_slack_ids("Waiting.approved_by", user=check_str(user, "Waiting.approved_by"))


OPTIONAL = ("request", "held_until", "approved_by")  # older receipts lack them
WAITING_FIELDS = tuple(name for name in Waiting.__dataclass_fields__ if name not in OPTIONAL)


def request_excerpt(request: str) -> str:
    """The first :data:`MAX_REQUEST_EXCERPT` characters of a request, for a receipt."""
    return request[:MAX_REQUEST_EXCERPT]


def metadata_of(waiting: Waiting | None) -> dict[str, str]:
    """User metadata is sent as HTTP headers, ASCII only and 2 KB in all (S3): the request's
    words go percent-encoded (at most 80 characters, so under 1 KB encoded)."""
    if waiting is None:
        return {}
    meta = {k.replace("_", "-"): str(v) for k, v in waiting.to_json().items()}
    meta["request"] = quote(waiting.request, safe="")
    del meta["held-until"], meta["approved-by"]
    if waiting.held_until:  # (only then: a waiting basket's receipt is as it always was)
        meta["held-until"] = str(waiting.held_until)
        meta["approved-by"] = " ".join(waiting.approved_by)
    return meta


def waiting_of(meta: dict[str, str]) -> Waiting | None:
    """The waiting basket a receipt's metadata names (None: none, or not one we wrote)."""
    data: dict[str, Any] = {name: meta.get(name.replace("_", "-")) for name in WAITING_FIELDS}
    if any(v is None for v in data.values()):
        return None
    try:
        data["round"], data["posted_at"] = int(data["round"]), int(data["posted_at"])
        request = unquote(meta.get("request") or "", errors="strict")
        held = int(meta.get("held-until") or 0)
        by = tuple((meta.get("approved-by") or "").split())
        return Waiting(**data, request=request, held_until=held, approved_by=by)
    except (ValueError, TypeError):
        return None
