"""What became of each basket: one outcome record per ended session, kept long after it.

A session's own objects (checkpoints, lock, receipt) live under ``<prefix><tenant>/s/`` for the
bucket's 30 days at most. When a session ends (ordered, rejected, expired), the turn that shows
the end in Slack writes an :class:`Ended` record instead of the session's receipt (so an approve
still costs the same requests), under a prefix of its own:

    <history prefix><tenant>/<9999999999999 - ended ms>-<session>    signed JSON, ~1 KB

The history prefix is a sibling of the checkpoint prefix (``weekly-shop/`` → ``weekly-shop-
history/``), not inside it: S3 applies the shortest of overlapping expiration rules, so under the
30-day rule nothing could be kept for ``HISTORY_DAYS``. That lifecycle rule (serverless.yml, 400
days by default) deletes a record, or its workspace removing the app (``bot.steps.uninstall``). Keys
sort newest first: the newest N outcomes are one LIST (``MaxKeys``) and N GETs, however long the
history is. A record's key is a function of its session and its last checkpoint's time, so a
redelivery that finds the session ended reads it back as the session's receipt
(``bot.steps.turn.catch_up``).

A record is signed (HMAC-SHA256, key derived from the checkpoint signing key) and checked field
by field when read: a "Repeat this order" turns its items into a new basket, so it is a trust
boundary like a checkpoint.

(A little over 300 lines: the outcome record's format, its signature and its S3 listing are
one record's; the feedback records beside them are read through its one LIST.)
"""

from __future__ import annotations

import dataclasses
import hashlib
import hmac
import json
import threading
from dataclasses import dataclass
from datetime import datetime
from typing import Any, Literal, Protocol

from botocore.exceptions import BotoCoreError, ClientError

from workflow.persistence.s3_client import get_object, store_error
from workflow.persistence.s3_keys import sibling_prefix
from workflow.persistence.store import validate_id
from workflow.persistence.values import AllFields, check_bool, check_int, check_str, fields_of

from .slack_shapes import check_link, check_slack_ids

Kind = Literal["ordered", "rejected", "expired", "failed"]
KINDS: tuple[Kind, ...] = ("ordered", "rejected", "expired", "failed")
MAX_MS = 9_999_999_999_999
MAX_APPROVERS = 50  # named in one order's record (``BasketDecision.approvals``' bound)
OPTIONAL = ("destination", "order_url", "sha256")  # absent from records written without them


def history_prefix(checkpoint_prefix: str) -> str:
    """``weekly-shop/`` → ``weekly-shop-history/`` (``history/`` for the bucket's root)."""
    return sibling_prefix(checkpoint_prefix, "history")


FAILED = "failed."  # a failed start's record names "failed.<session>": it did not end that ID


def record_name(session: str, ended_at: datetime) -> str:
    """A record's name in its workspace's folder: newest first, then the session."""
    ms = int(ended_at.timestamp() * 1000)
    return f"{MAX_MS - ms:013d}-{validate_id(session, 'session ID')}"


def name_of(ended: Ended, ended_at: datetime) -> str:
    """The name ``ended`` is kept under. A failed start's session ID may start again (a
    redelivery that works): its record does not name the session as ended."""
    return record_name((FAILED if ended.kind == "failed" else "") + ended.session, ended_at)


def session_of(name: str) -> str | None:
    """The session a record name names (None if it is not a record name)."""
    head, dash, session = name.partition("-")
    if len(head) != 13 or not head.isdigit() or not dash:
        return None
    try:
        return validate_id(session, "session ID")
    except ValueError:
        return None


def history_key(prefix: str, tenant: str, name: str) -> str:
    if session_of(name) is None:
        raise ValueError(f"not an outcome record name: {name[:40]!r}")
    return f"{prefix}{validate_id(tenant, 'tenant ID')}/{name}"


@dataclass(frozen=True, slots=True, kw_only=True)
class Ended(AllFields):
    """One ended session: what was asked and by whom, what became of it, who answered, when,
    and the basket it ended with (``items`` as ``Item.to_json()`` data; ``checkpoint_id`` is the
    session's last checkpoint, which the channel shows). A ``failed`` one is a first basket the
    shopper could not write: no checkpoint (""), no items, nobody answered."""

    session: str
    checkpoint_id: str
    kind: Kind
    at: int  # epoch seconds of the answer
    answered_by: str
    requested_by: str
    request: str
    round: int
    items: list[dict[str, Any]]
    channel: str
    ts: str  # the basket message, for a link
    shown: bool = True  # Slack shows the end (else the next click shows it, and writes it again)
    # An order a quorum approved: everyone who approved it, in order, ``answered_by`` last.
    # Written only then (a record of one approver is what it was before quorums, and reads in
    # code from before them).
    approved_by: tuple[str, ...] = ()
    # Where an order went (``bot.records.orders``): the destination, its link, and the SHA-256
    # of the basket as ordered. Written only for an order (older records have none).
    destination: str = ""
    order_url: str = ""
    sha256: str = ""

    def __post_init__(self) -> None:
        validate_id(self.session, "session ID")
        if self.checkpoint_id or self.kind != "failed":
            validate_id(self.checkpoint_id, "checkpoint ID")
        if self.kind not in KINDS:
            raise ValueError(f"Ended.kind must be one of {', '.join(KINDS)}")
        check_int(self.at, "Ended.at", ge=0)
        check_str(self.answered_by, "Ended.answered_by", max_length=64)
        check_str(self.requested_by, "Ended.requested_by", max_length=64)
        check_str(self.request, "Ended.request", max_length=3000)
        check_int(self.round, "Ended.round", ge=1)
        check_str(self.channel, "Ended.channel", max_length=64)
        check_str(self.ts, "Ended.ts", max_length=32)
        check_bool(self.shown, "Ended.shown")
        bot = self.kind in ("expired", "failed")  # answered by the bot, or by nobody
        check_slack_ids("Ended", channel=self.channel, ts=self.ts, user=self.requested_by)
        check_slack_ids("Ended", user="" if bot else self.answered_by)
        approved_by = self.approved_by
        if not isinstance(approved_by, tuple | list) or len(approved_by) > MAX_APPROVERS:
            raise ValueError(f"Ended.approved_by must be a list of at most {MAX_APPROVERS}")
        if approved_by and self.kind != "ordered":
            raise ValueError("Ended.approved_by names the approvers of an order only")
        for user in approved_by:
            check_str(user, "Ended.approved_by[]", min_length=1, max_length=64)
            check_slack_ids("Ended", user=user)
        object.__setattr__(self, "approved_by", tuple(approved_by))
        if (self.destination or self.order_url or self.sha256) and self.kind != "ordered":
            raise ValueError("Ended.destination, order_url and sha256 are an order's only")
        check_str(self.destination, "Ended.destination", max_length=20)
        check_str(self.order_url, "Ended.order_url", max_length=2000)
        check_link(self.order_url, "Ended.order_url")
        check_str(self.sha256, "Ended.sha256", max_length=64)
        from workflow.shop.basket import Basket

        Basket.from_json({"items": self.items, "round": self.round})  # the items are a basket's

    def to_json(self) -> dict[str, Any]:
        body = AllFields.to_json(self)  # (no super(): a slots dataclass is a new class)
        if self.approved_by:
            body["approved_by"] = list(self.approved_by)
        else:
            del body["approved_by"]
        for name in OPTIONAL:
            if body[name] == "":
                del body[name]
        return body

    @classmethod
    def from_json(cls, data: Any) -> Ended:
        names = [f.name for f in dataclasses.fields(cls)]
        optional = ("approved_by", *OPTIONAL)
        data = fields_of(data, "Ended", names, [n for n in names if n not in optional])
        if not isinstance(data.get("approved_by", []), list):
            raise ValueError("Ended.approved_by must be a list")
        return cls(**data)

    def basket(self) -> Any:
        """The basket it ended with (``workflow.shop.basket.Basket``)."""
        from workflow.shop.basket import Basket

        return Basket.from_json({"items": self.items, "round": self.round})


def sign(key: bytes, tenant: str, body: dict[str, Any]) -> str:
    data = json.dumps([tenant, body], sort_keys=True, separators=(",", ":")).encode()
    return hmac.new(key, data, hashlib.sha256).hexdigest()


def encode(key: bytes, tenant: str, ended: Ended) -> bytes:
    body = ended.to_json()
    return json.dumps({"ended": body, "mac": sign(key, tenant, body)}).encode()


def decode(key: bytes, tenant: str, raw: bytes) -> Ended | None:
    """The record in ``raw``, or None if it is not one this app signed for ``tenant``."""
    try:
        data = json.loads(raw)
        body, mac = data["ended"], data["mac"]
        if not isinstance(mac, str) or not hmac.compare_digest(mac, sign(key, tenant, body)):
            return None
        return Ended.from_json(body)
    except (ValueError, TypeError, KeyError):
        return None


class History(Protocol):
    def write(self, tenant: str, ended: Ended, ended_at: datetime) -> None:
        """Record that the session ended (its last checkpoint written at ``ended_at``)."""
        ...

    def read(self, tenant: str, session: str, ended_at: datetime) -> Ended | None:
        """The session's record, if it ended with the checkpoint written at ``ended_at``."""
        ...

    def rewrite(self, tenant: str, name: str, ended: Ended) -> None:
        """Write the record called ``name`` again, as ``ended`` (an order's Retry)."""
        ...

    def names(self, tenant: str, limit: int) -> list[str]:
        """The names of the workspace's newest ``limit`` records, newest first (one LIST)."""
        ...

    def read_name(self, tenant: str, name: str) -> Ended | None:
        """The record called ``name`` in the workspace's folder, if it verifies."""
        ...

    def listed(self, tenant: str, limit: int) -> list[tuple[str, datetime | None]]:
        """Every name in the workspace's folder, in key order, with when it was last written
        (one LIST, as :meth:`names`): the outcomes', then the feedback records beside them
        (``bot.records.feedback``)."""
        ...


def newest(history: History, tenant: str, limit: int) -> list[tuple[str, Ended]]:
    """The workspace's newest ``limit`` outcomes, newest first, with their names."""
    found = ((name, history.read_name(tenant, name)) for name in history.names(tenant, limit))
    return [(name, ended) for name, ended in found if ended is not None]


class InMemoryHistory:
    def __init__(self) -> None:
        self._mutex = threading.Lock()
        self._records: dict[str, dict[str, Ended]] = {}

    def write(self, tenant: str, ended: Ended, ended_at: datetime) -> None:
        self.rewrite(tenant, name_of(ended, ended_at), ended)

    def rewrite(self, tenant: str, name: str, ended: Ended) -> None:
        with self._mutex:
            self._records.setdefault(tenant, {})[name] = ended

    def read(self, tenant: str, session: str, ended_at: datetime) -> Ended | None:
        return self.read_name(tenant, record_name(session, ended_at))

    def names(self, tenant: str, limit: int) -> list[str]:
        with self._mutex:
            return sorted(self._records.get(tenant, {}))[:limit]

    def read_name(self, tenant: str, name: str) -> Ended | None:
        with self._mutex:
            return self._records.get(tenant, {}).get(name)

    def listed(self, tenant: str, limit: int) -> list[tuple[str, datetime | None]]:
        return [(name, None) for name in self.names(tenant, limit)]


class S3History:
    def __init__(self, bucket: str, prefix: str, s3_client: Any, key: bytes) -> None:
        self.s3 = s3_client
        self.bucket = bucket
        self.prefix = prefix
        self.key = key

    def write(self, tenant: str, ended: Ended, ended_at: datetime) -> None:
        self.rewrite(tenant, name_of(ended, ended_at), ended)

    def rewrite(self, tenant: str, name: str, ended: Ended) -> None:
        try:
            self.s3.put_object(
                Bucket=self.bucket,
                Key=history_key(self.prefix, tenant, name),
                Body=encode(self.key, tenant, ended),
                ContentType="application/json",
                ServerSideEncryption="AES256",
            )
        except (ClientError, BotoCoreError) as exc:
            raise store_error("put outcome record", exc) from exc

    def read(self, tenant: str, session: str, ended_at: datetime) -> Ended | None:
        return self.read_name(tenant, record_name(session, ended_at))

    def names(self, tenant: str, limit: int) -> list[str]:
        """One LIST of at most ``limit`` (≤ 1,000) keys: the newest, by their names."""
        prefix = f"{self.prefix}{validate_id(tenant, 'tenant ID')}/"
        try:
            listed = self.s3.list_objects_v2(Bucket=self.bucket, Prefix=prefix, MaxKeys=limit)
        except (ClientError, BotoCoreError) as exc:
            raise store_error("list outcome records", exc) from exc
        names = [str(obj["Key"])[len(prefix) :] for obj in listed.get("Contents", [])]
        return [name for name in names if session_of(name) is not None]

    def listed(self, tenant: str, limit: int) -> list[tuple[str, datetime | None]]:
        """One LIST of at most ``limit`` (≤ 1,000) keys, outcomes first (their names sort
        before ``feedback/``), each with its ``LastModified``."""
        prefix = f"{self.prefix}{validate_id(tenant, 'tenant ID')}/"
        try:
            listed = self.s3.list_objects_v2(Bucket=self.bucket, Prefix=prefix, MaxKeys=limit)
        except (ClientError, BotoCoreError) as exc:
            raise store_error("list outcome records", exc) from exc
        found = []
        for obj in listed.get("Contents", []):
            when = obj.get("LastModified")
            found.append(
                (str(obj["Key"])[len(prefix) :], when if isinstance(when, datetime) else None)
            )
        return found

    def read_name(self, tenant: str, name: str) -> Ended | None:
        """One GET; a record that is missing or does not verify for ``tenant`` is None."""
        found = get_object(self.s3, self.bucket, history_key(self.prefix, tenant, name), "outcome")
        ended = None if found is None else decode(self.key, tenant, found[0])
        if ended is None or session_of(name) not in (ended.session, FAILED + ended.session):
            return None
        return ended
