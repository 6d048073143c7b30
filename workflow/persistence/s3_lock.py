"""The session lock as one S3 object per session, with conditional writes only.

Taking a free lock (two contenders):

    A: PUT …/lock If-None-Match:*        -> 200, ETag E1: A holds it
    B: PUT …/lock If-None-Match:*        -> 412 -> GET: A's lease not expired -> SessionBusy

Taking over an expired lease (B and C both read ETag E1 and see it expired):

    B: PUT …/lock If-Match:E1            -> 200, ETag E2: B holds it
    C: PUT …/lock If-Match:E1            -> 412 -> SessionBusy
    A: DELETE …/lock If-Match:E1         -> 412 -> LeaseLost (A cannot delete B's lock)

Taking over the live lease of a dead attempt of the same work (Lambda's retry of a crashed
invocation; see ``workflow.persistence.lock``), whose lock object names that work in its owner:

    R: PUT …/lock If-None-Match:*        -> 412 -> GET: live, but owner "<same work>#…",
                                            taken at least ``retry_after`` seconds ago
    R: PUT …/lock If-Match:E1            -> 200, ETag E2: the retry holds it

    D: the same, taken less than ``retry_after`` ago -> DuplicateDelivery (the same event,
       delivered twice at once: the other delivery is doing it)

Real S3 may answer 409 ConditionalRequestConflict to a racing conditional write; that loser is
told SessionBusy too, which is what it is.

The lock object's JSON is read and written by hand (it was a pydantic model's, and is still byte
for byte what that model wrote: code deployed beside this one reads it).
"""

from __future__ import annotations

import json
import math
import secrets
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from botocore.exceptions import BotoCoreError, ClientError

from workflow.errors import LeaseLost, SessionBusy

from .lock import Lease, busy_with
from .s3_client import (
    get_object,
    is_conditional_conflict,
    is_missing,
    is_precondition_failed,
    make_s3_client,
    store_error,
)
from .s3_keys import S3Keys

# The longest lease a lock may claim (LOCK_TTL_SECONDS is at most 900): a lock object claiming to
# expire later than this after S3 wrote it (a clock far ahead, a bug, the year 2500) is treated
# as expiring then, so it cannot keep a session busy for longer.
MAX_LEASE_SECONDS = 900.0
WORK_MARK = (
    "#"  # owner "<work>#<holder>" when the holder names its work (workflow.persistence.lock)
)


@dataclass(slots=True)
class _LockBody:
    owner: str
    acquired_at: float
    expires_at: float
    attempt: str = ""  # random per acquire call: tells our own applied PUT from anyone else's
    # No new fields: the code deployed before this one refuses a lock object with more (it was
    # extra="forbid"), and would take such a lock over as garbage. The work rides in ``owner``.

    def __post_init__(self) -> None:
        self.acquired_at = float(self.acquired_at)
        self.expires_at = float(self.expires_at)

    def to_bytes(self) -> bytes:
        """``{"owner":…,"acquired_at":…,"expires_at":…,"attempt":…}``, compact, as written
        before (by pydantic: non-ASCII as UTF-8, floats as :func:`_json_float`)."""
        owner, attempt = (json.dumps(s, ensure_ascii=False) for s in (self.owner, self.attempt))
        acquired_at, expires_at = _json_float(self.acquired_at), _json_float(self.expires_at)
        return (
            f'{{"owner":{owner},"acquired_at":{acquired_at},"expires_at":{expires_at},'
            f'"attempt":{attempt}}}'
        ).encode()

    @classmethod
    def from_bytes(cls, raw: bytes) -> _LockBody:
        """The lock object ``raw``; ``ValueError`` unless it is an object whose ``owner`` is a
        string, times are numbers and ``attempt``, if there, a string. A lock written by a newer
        version may carry more fields: they are ignored, and it is honoured all the same."""
        data = json.loads(raw)
        if not isinstance(data, dict):
            raise ValueError("a lock object is a JSON object")
        owner, attempt = data.get("owner"), data.get("attempt", "")
        if not isinstance(owner, str) or not isinstance(attempt, str):
            raise ValueError("a lock's owner and attempt are strings")
        return cls(owner, _time(data.get("acquired_at")), _time(data.get("expires_at")), attempt)

    @property
    def work(self) -> str:
        return self.owner.split(WORK_MARK, 1)[0] if WORK_MARK in self.owner else ""

    @property
    def holder(self) -> str:
        return self.owner.split(WORK_MARK, 1)[-1]


def _time(value: Any) -> float:
    if not isinstance(value, int | float) or isinstance(value, bool):
        raise ValueError("a lock's times are numbers")
    try:
        return float(value)
    except OverflowError as exc:  # an integer beyond any float
        raise ValueError("a lock's times are numbers") from exc


def _json_float(x: float) -> str:
    """``x`` in JSON as pydantic wrote it: Python's ``repr``, but ``1e-7`` for ``1e-07`` and
    ``0.000015`` for ``1.5e-05``; ``null`` for infinities and NaN."""
    if not math.isfinite(x):
        return "null"
    text = repr(x)
    mantissa, e, exponent = text.partition("e")
    if not e or exponent.startswith("+"):
        return text
    if exponent == "-05":
        sign, digits = ("-", mantissa[1:]) if mantissa.startswith("-") else ("", mantissa)
        return f"{sign}0.0000{digits.replace('.', '')}"
    return f"{mantissa}e-{exponent[1:].lstrip('0')}"


class S3SessionLock:
    def __init__(
        self,
        bucket: str,
        prefix: str,
        s3_client: Any = None,
        clock: Callable[[], float] = time.time,
        retry_after: float = 0.0,
    ) -> None:
        """``retry_after``: how long ago a live lock of the same work must have been taken to
        be a dead attempt's (``workflow.persistence.lock``)."""
        self.bucket = bucket
        self.keys = S3Keys(prefix)
        self.s3 = s3_client if s3_client is not None else make_s3_client()
        self._clock = clock
        self.retry_after = retry_after

    def _put(self, key: str, body: _LockBody, **condition: str) -> str:
        response = self.s3.put_object(
            Bucket=self.bucket,
            Key=key,
            Body=body.to_bytes(),
            ContentType="application/json",
            ServerSideEncryption="AES256",
            **condition,
        )
        return str(response["ETag"])

    def acquire(
        self, tenant_id: str, session_id: str, owner: str, ttl_seconds: float, work: str = ""
    ) -> Lease:
        key = self.keys.lock(tenant_id, session_id)
        now = self._clock()
        body = _LockBody(
            owner=f"{work}{WORK_MARK}{owner}" if work else owner,
            acquired_at=now,
            expires_at=now + ttl_seconds,
            attempt=secrets.token_hex(8),
        )
        for _ in range(2):  # a second pass only if the lock vanished between our PUT and GET
            try:
                etag = self._put(key, body, IfNoneMatch="*")
                return Lease(tenant_id, session_id, owner, now, body.expires_at, etag, work)
            except ClientError as exc:
                if is_conditional_conflict(exc):
                    raise SessionBusy(f"session {session_id!r} is being locked right now") from exc
                if not is_precondition_failed(exc):
                    raise store_error("put lock", exc) from exc
            except BotoCoreError as exc:
                raise store_error("put lock", exc) from exc
            current, attempt = self._read_with_attempt(key, tenant_id, session_id)
            if current is None:
                continue
            if attempt == body.attempt:
                # Our own PUT, applied, with its answer lost and retried into a 412.
                return current
            busy = busy_with(current, now, work, self.retry_after)
            if busy is not None:
                raise busy
            # Expired, or an earlier attempt of this very work, which is dead
            # (workflow.persistence.lock).
            return self._take_over(key, current, body, session_id)
        raise SessionBusy(f"session {session_id!r} lock is changing hands")

    def _take_over(self, key: str, stale: Lease, body: _LockBody, session_id: str) -> Lease:
        try:
            etag = self._put(key, body, IfMatch=stale.version)
        except ClientError as exc:
            if is_precondition_failed(exc) or is_conditional_conflict(exc) or is_missing(exc):
                current, attempt = self._read_with_attempt(key, stale.tenant_id, session_id)
                if current is not None and attempt == body.attempt:
                    return current  # our take-over, applied, with its answer lost
                raise SessionBusy(f"session {session_id!r} was taken over by someone else") from exc
            raise store_error("take over lock", exc) from exc
        except BotoCoreError as exc:
            raise store_error("take over lock", exc) from exc
        return Lease(
            stale.tenant_id,
            stale.session_id,
            body.holder,
            body.acquired_at,
            body.expires_at,
            etag,
            body.work,
        )

    def _read(self, key: str, tenant_id: str, session_id: str) -> Lease | None:
        return self._read_with_attempt(key, tenant_id, session_id)[0]

    def _read_with_attempt(
        self, key: str, tenant_id: str, session_id: str
    ) -> tuple[Lease | None, str]:
        found = get_object(self.s3, self.bucket, key, "lock")
        if found is None:
            return None, ""
        try:
            body = _LockBody.from_bytes(found.body)
        except ValueError:
            # An unreadable lock object is treated as expired, so it can be taken over.
            body = _LockBody(owner="?", acquired_at=0.0, expires_at=0.0)
        written = found.last_modified.timestamp() if found.last_modified else body.acquired_at
        expires_at = min(body.expires_at, written + MAX_LEASE_SECONDS)
        lease = Lease(
            tenant_id, session_id, body.holder, body.acquired_at, expires_at, found.etag, body.work
        )
        return lease, body.attempt

    def release(self, lease: Lease) -> None:
        key = self.keys.lock(lease.tenant_id, lease.session_id)
        try:
            self.s3.delete_object(Bucket=self.bucket, Key=key, IfMatch=lease.version)
        except ClientError as exc:
            if is_precondition_failed(exc) or is_missing(exc):
                raise LeaseLost(f"lease on session {lease.session_id!r} was taken over") from exc
            raise store_error("delete lock", exc) from exc
        except BotoCoreError as exc:
            raise store_error("delete lock", exc) from exc

    def holder(self, tenant_id: str, session_id: str) -> Lease | None:
        return self._read(self.keys.lock(tenant_id, session_id), tenant_id, session_id)
