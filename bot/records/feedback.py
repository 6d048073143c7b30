"""What people said of each basket (its feedback buttons): one small signed record per person
and basket, kept beside the session's outcome record, in the same workspace folder:

    <history prefix><tenant>/<9999999999999 - ended ms>-<session>          the outcome (history)
    <history prefix><tenant>/feedback/<session>/<round>-<user>             signed JSON, ~300 B

Beside it, and not in a folder of its own, because it is the outcome's: the bucket's history
lifecycle rule (400 days by default) keeps it as long as the outcome, and the app removed
(``bot.steps.uninstall``, which deletes everything under ``<history prefix><tenant>``) forgets
both. A reader joins the two on the session ID (both keys name it). The names sort after every
outcome record's (``f`` after digits), so the history's one LIST of the newest outcome names
(``bot.records.history``, ``MaxKeys`` 1,000) still returns the outcomes first, and the feedback
after them in the same page: the Home tab learns which feedback exists, and when it was last
written (``LastModified``), without a LIST of its own (with more than about 1,000 outcomes in
400 days, the newest feedback may fall off that page: a household writes about 60).

One object per (tenant, session, round, person): a person who changes their mind (Slack's
buttons are a toggle; each click sends the pressed button's value) writes the same key again,
and the last PUT wins, as S3 orders them. Timeline of one click, in its lazy run:

    1. the click's session and round are checked against our records (``bot.steps.feedback``)
    2. PUT <…>/feedback/<session>/<round>-<user>      (a retry or a second click: the same key)

Nothing else is written, and nothing is read back: a death before 2 leaves nothing, after it the
record. A record is signed (HMAC-SHA256, with a key derived from the history's) and checked
field by field when read, like the outcome it sits beside.
"""

from __future__ import annotations

import hashlib
import hmac
import json
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from botocore.exceptions import BotoCoreError, ClientError

from workflow.persistence.s3_client import get_object, store_error
from workflow.persistence.store import validate_id

from .history import S3History
from .slack_shapes import check_slack_ids

FOLDER = "feedback/"
VERDICTS = ("good", "bad")
FIELDS = ("session", "round", "user", "verdict", "at", "channel", "ts")


@dataclass(frozen=True)
class Said:
    """One person's verdict on one basket: ``round`` of ``session``, shown in ``channel`` as
    message ``ts``, said by ``user`` at ``at`` (epoch seconds)."""

    session: str
    round: int
    user: str
    verdict: str  # good, bad
    at: int
    channel: str
    ts: str

    def __post_init__(self) -> None:
        validate_id(self.session, "session ID")
        if not isinstance(self.round, int) or isinstance(self.round, bool) or self.round < 1:
            raise ValueError("Said.round must be a whole number from 1")
        if self.verdict not in VERDICTS:
            raise ValueError("Said.verdict must be good or bad")
        if not isinstance(self.at, int) or isinstance(self.at, bool) or self.at < 0:
            raise ValueError("Said.at must be epoch seconds")
        for name in ("user", "channel", "ts"):
            if not isinstance(getattr(self, name), str) or not getattr(self, name):
                raise ValueError(f"Said.{name} must be a non-empty string")
        check_slack_ids("Said", user=self.user, channel=self.channel, ts=self.ts)

    def to_json(self) -> dict[str, Any]:
        return {name: getattr(self, name) for name in FIELDS}

    @classmethod
    def from_json(cls, data: Any) -> Said:
        if not isinstance(data, dict) or set(data) != set(FIELDS):
            raise ValueError("Said: not a feedback record")
        return cls(**data)


def feedback_name(session: str, round: int, user: str) -> str:
    """A record's name in its workspace's folder: one per session, round and person."""
    check_slack_ids("feedback", user=user)
    return f"{FOLDER}{validate_id(session, 'session ID')}/{int(round)}-{user}"


def is_feedback_name(name: str) -> bool:
    return name.startswith(FOLDER)


def sign(key: bytes, tenant: str, body: dict[str, Any]) -> str:
    data = json.dumps(["feedback", tenant, body], sort_keys=True, separators=(",", ":")).encode()
    return hmac.new(key, data, hashlib.sha256).hexdigest()


def encode(key: bytes, tenant: str, said: Said) -> bytes:
    body = said.to_json()
    return json.dumps({"feedback": body, "mac": sign(key, tenant, body)}).encode()


def decode(key: bytes, tenant: str, raw: bytes) -> Said | None:
    """The record in ``raw``, or None if it is not one this app signed for ``tenant``."""
    try:
        data = json.loads(raw)
        body, mac = data["feedback"], data["mac"]
        if not isinstance(mac, str) or not hmac.compare_digest(mac, sign(key, tenant, body)):
            return None
        return Said.from_json(body)
    except (ValueError, TypeError, KeyError):
        return None


class S3Feedback:
    """The feedback records, in the history's bucket and folder, with a key of their own
    derived from the history's (:func:`feedback_beside`)."""

    def __init__(self, bucket: str, prefix: str, s3_client: Any, key: bytes) -> None:
        self.s3 = s3_client
        self.bucket = bucket
        self.prefix = prefix
        self.key = hmac.new(key, b"weekly-shop feedback v1", hashlib.sha256).digest()

    def _key(self, tenant: str, name: str) -> str:
        if not is_feedback_name(name):
            raise ValueError(f"not a feedback record name: {name[:40]!r}")
        return f"{self.prefix}{validate_id(tenant, 'tenant ID')}/{name}"

    def write(self, tenant: str, said: Said) -> str:
        """Keep ``said`` (one PUT, replacing what that person said of that basket); its name."""
        name = feedback_name(said.session, said.round, said.user)
        try:
            self.s3.put_object(
                Bucket=self.bucket,
                Key=self._key(tenant, name),
                Body=encode(self.key, tenant, said),
                ContentType="application/json",
                ServerSideEncryption="AES256",
            )
        except (ClientError, BotoCoreError) as exc:
            raise store_error("put feedback record", exc) from exc
        return name

    def read_name(self, tenant: str, name: str) -> Said | None:
        """One GET; a record that is missing, or does not verify for ``tenant`` and its own
        name, is None."""
        found = get_object(self.s3, self.bucket, self._key(tenant, name), "feedback")
        said = None if found is None else decode(self.key, tenant, found.body)
        if said is None or feedback_name(said.session, said.round, said.user) != name:
            return None
        return said


def feedback_beside(history: Any) -> S3Feedback | None:
    """The feedback records beside an S3 history (``bot.records.history.S3History``): the same
    bucket, folder and client; None beside any other history (the in-memory one keeps none)."""
    if not isinstance(history, S3History):
        return None
    return S3Feedback(history.bucket, history.prefix, history.s3, history.key)


def newest_said(
    feedback: S3Feedback | None,
    tenant: str,
    listed: list[tuple[str, datetime | None]],
    since: float,
    limit: int,
) -> tuple[list[Said], int]:
    """(what was said since ``since``, newest first, at most ``limit`` records read: one GET
    each; how many more were written since then but not read). ``listed`` is the history's one
    LIST of the workspace's folder (names and when each was last written)."""
    if feedback is None:
        return [], 0
    recent = [
        (when, name)
        for name, when in listed
        if is_feedback_name(name) and when is not None and when.timestamp() >= since
    ]
    recent.sort(reverse=True)
    found = (feedback.read_name(tenant, name) for _, name in recent[:limit])
    said = [s for s in found if s is not None]
    said.sort(key=lambda s: s.at, reverse=True)
    return said, max(0, len(recent) - limit)
