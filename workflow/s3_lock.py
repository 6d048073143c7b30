"""The session lock as one S3 object per session, with conditional writes only.

Taking a free lock (two contenders):

    A: PUT …/lock If-None-Match:*        -> 200, ETag E1: A holds it
    B: PUT …/lock If-None-Match:*        -> 412 -> GET: A's lease not expired -> SessionBusy

Taking over an expired lease (B and C both read ETag E1 and see it expired):

    B: PUT …/lock If-Match:E1            -> 200, ETag E2: B holds it
    C: PUT …/lock If-Match:E1            -> 412 -> SessionBusy
    A: DELETE …/lock If-Match:E1         -> 412 -> LeaseLost (A cannot delete B's lock)

Taking over the live lease of a dead attempt of the same work (Lambda's retry of a crashed
invocation; see ``workflow.lock``), whose lock object names that work in its owner:

    R: PUT …/lock If-None-Match:*        -> 412 -> GET: live, but owner "<same work>#…"
    R: PUT …/lock If-Match:E1            -> 200, ETag E2: the retry holds it

Real S3 may answer 409 ConditionalRequestConflict to a racing conditional write; that loser is
told SessionBusy too, which is what it is.
"""

from __future__ import annotations

import json
import secrets
import time
from collections.abc import Callable
from typing import Any

from botocore.exceptions import BotoCoreError, ClientError
from pydantic import BaseModel, ConfigDict, ValidationError

from .errors import LeaseLost, SessionBusy
from .lock import Lease
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
WORK_MARK = "#"  # owner "<work>#<holder>" when the holder names its work (workflow.lock)


class _LockBody(BaseModel):
    # A lock written by a newer version may carry more fields: it is honoured all the same.
    model_config = ConfigDict(extra="ignore")
    owner: str
    acquired_at: float
    expires_at: float
    attempt: str = ""  # random per acquire call: tells our own applied PUT from anyone else's
    # No new fields: the code deployed before this one refuses a lock object with more (it was
    # extra="forbid"), and would take such a lock over as garbage. The work rides in ``owner``.

    @property
    def work(self) -> str:
        return self.owner.split(WORK_MARK, 1)[0] if WORK_MARK in self.owner else ""

    @property
    def holder(self) -> str:
        return self.owner.split(WORK_MARK, 1)[-1]


class S3SessionLock:
    def __init__(
        self,
        bucket: str,
        prefix: str,
        s3_client: Any = None,
        clock: Callable[[], float] = time.time,
    ) -> None:
        self.bucket = bucket
        self.keys = S3Keys(prefix)
        self.s3 = s3_client if s3_client is not None else make_s3_client()
        self._clock = clock

    def _put(self, key: str, body: _LockBody, **condition: str) -> str:
        response = self.s3.put_object(
            Bucket=self.bucket,
            Key=key,
            Body=body.model_dump_json().encode(),
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
            if current.expires_at > now and not (work and current.work == work):
                raise SessionBusy(f"session {session_id!r} is locked by {current.owner!r}")
            # Expired, or an earlier attempt of this very work, which is dead (workflow.lock).
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
            body = _LockBody.model_validate(json.loads(found.body))
        except (ValueError, ValidationError):
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
