"""Which checkpoint Slack shows: the bot's receipt, one small object per session.

The workflow writes its checkpoint before the bot posts to Slack, so a process that dies in
between leaves the store ahead of the channel. After posting, the bot records the checkpoint the
channel now shows. A later click (or Lambda's retry of the lost invocation) that finds its work
already done compares the receipt with the latest checkpoint: the same, and it is a stale click;
different, and it shows what the latest checkpoint holds, then writes the receipt
(``bot.steps.turn.catch_up``).

    Receipts           the seam: shown() and mark_shown(), first_reminder(), waiting(),
                       newest_waiting() and basket(); all raise StoreError
    InMemoryReceipts   its twin, for tests
    S3Receipts         ``<prefix><tenant>/s/<session>/shown``, beside the session's checkpoints

A receipt written when a basket was posted also says which basket waits (``bot.records.waiting``:
the message, its round, who asked, when; or that it is approved and held for its undo window,
until when, by whom), in the object's metadata (``x-amz-meta-*``), so the Home tab
lists the waiting baskets with a HEAD of each receipt, never a checkpoint's payload
(``waiting``), or of the newest few only (``newest_waiting``: a receipt is rewritten each time a
basket is posted, so its LastModified, which a LIST gives for free, says which are newest); the
body stays the bare checkpoint ID, as older code reads it.

What a failure costs is the caller's policy (``bot.steps.turn``): a receipt that could not be
written only costs a repost later.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Collection
from typing import Any, Protocol

from botocore.exceptions import BotoCoreError, ClientError

from workflow.errors import InvalidIdentifier
from workflow.persistence.s3_client import create_marker, get_object, head_metadata, store_error
from workflow.persistence.s3_keys import S3Keys
from workflow.persistence.store import validate_id

from .waiting import MAX_NAMED, Waiting, metadata_of, request_excerpt, waiting_of

__all__ = ["MAX_NAMED", "InMemoryReceipts", "Receipts", "S3Receipts", "Waiting", "request_excerpt"]

NAME = "shown"


class Receipts(Protocol):
    def shown(self, tenant_id: str, session_id: str) -> str | None:
        """The checkpoint ID the channel shows, or None if nothing was recorded."""
        ...

    def mark_shown(
        self, tenant_id: str, session_id: str, checkpoint_id: str, waiting: Waiting | None = None
    ) -> None:
        """Record that the channel now shows ``checkpoint_id`` (and ``waiting``, its basket)."""
        ...

    def waiting(self, tenant_id: str, ended: Collection[str]) -> list[tuple[str, Waiting]]:
        """(session, basket) for each session of the tenant whose receipt names a waiting
        basket, leaving out the ``ended`` sessions (their receipts are older than their end)."""
        ...

    def newest_waiting(
        self, tenant_id: str, ended: Collection[str], limit: int, since: float = 0.0
    ) -> tuple[list[tuple[str, Waiting]], int]:
        """As ``waiting``, but reading only the ``limit`` newest receipts (by when they were
        written) of sessions not ``ended``, leaving out those written at or before ``since``
        (epoch seconds); and how many more receipts were left unread."""
        ...

    def basket(self, tenant_id: str, session_id: str) -> Waiting | None:
        """The basket one session's receipt names (one HEAD), or None: what a button on the
        Home tab acts on, read from our own record rather than from the button."""
        ...

    def forget(self, tenant_id: str, session_id: str) -> None:
        """The session waits on nothing any more (its basket was retired)."""
        ...

    def first_reminder(self, tenant_id: str, session_id: str, request_id: str, n: int) -> bool:
        """Record reminder ``n`` of ``request_id`` as sent: True the first time only."""
        ...


class InMemoryReceipts:
    def __init__(self) -> None:
        self._mutex = threading.Lock()
        self._shown: dict[tuple[str, str], str] = {}
        self._waiting: dict[tuple[str, str], Waiting] = {}
        self._written: dict[tuple[str, str], float] = {}  # when each receipt was written
        self._reminded: set[tuple[str, str, str, int]] = set()

    def shown(self, tenant_id: str, session_id: str) -> str | None:
        key = (validate_id(tenant_id, "tenant ID"), validate_id(session_id, "session ID"))
        with self._mutex:
            return self._shown.get(key)

    def mark_shown(
        self, tenant_id: str, session_id: str, checkpoint_id: str, waiting: Waiting | None = None
    ) -> None:
        key = (validate_id(tenant_id, "tenant ID"), validate_id(session_id, "session ID"))
        with self._mutex:
            self._shown[key] = validate_id(checkpoint_id, "checkpoint ID")
            self._written[key] = time.time()
            self._waiting.pop(key, None)
            if waiting is not None:
                self._waiting[key] = waiting

    def basket(self, tenant_id: str, session_id: str) -> Waiting | None:
        key = (validate_id(tenant_id, "tenant ID"), validate_id(session_id, "session ID"))
        with self._mutex:
            return self._waiting.get(key)

    def forget(self, tenant_id: str, session_id: str) -> None:
        with self._mutex:
            self._shown.pop((tenant_id, session_id), None)
            self._written.pop((tenant_id, session_id), None)
            self._waiting.pop((tenant_id, session_id), None)

    def waiting(self, tenant_id: str, ended: Collection[str]) -> list[tuple[str, Waiting]]:
        with self._mutex:
            return [
                (session, found)
                for (tenant, session), found in sorted(self._waiting.items())
                if tenant == tenant_id and session not in ended
            ]

    def newest_waiting(
        self, tenant_id: str, ended: Collection[str], limit: int, since: float = 0.0
    ) -> tuple[list[tuple[str, Waiting]], int]:
        with self._mutex:
            written = sorted(
                (
                    (at, session)
                    for (tenant, session), at in self._written.items()
                    if tenant == tenant_id and session not in ended and at > since
                ),
                reverse=True,
            )
            read = [(s, self._waiting.get((tenant_id, s))) for _, s in written[:limit]]
            return [(s, w) for s, w in read if w is not None], max(0, len(written) - limit)

    def first_reminder(self, tenant_id: str, session_id: str, request_id: str, n: int) -> bool:
        key = (tenant_id, session_id, validate_id(request_id, "request ID"), n)
        with self._mutex:
            first = key not in self._reminded
            self._reminded.add(key)
            return first


class S3Receipts:
    def __init__(self, bucket: str, prefix: str, s3_client: Any) -> None:
        self.s3 = s3_client
        self.bucket = bucket
        self.keys = S3Keys(prefix)

    def shown(self, tenant_id: str, session_id: str) -> str | None:
        key = self.keys.beside(tenant_id, session_id, NAME)
        found = get_object(self.s3, self.bucket, key, "receipt")
        if found is None:
            return None
        return found[0].decode("ascii", "replace").strip() or None

    def mark_shown(
        self, tenant_id: str, session_id: str, checkpoint_id: str, waiting: Waiting | None = None
    ) -> None:
        key = self.keys.beside(tenant_id, session_id, NAME)
        try:
            self.s3.put_object(
                Bucket=self.bucket,
                Key=key,
                Body=validate_id(checkpoint_id, "checkpoint ID").encode("ascii"),
                ContentType="text/plain",
                Metadata=metadata_of(waiting),
                ServerSideEncryption="AES256",
            )
        except (ClientError, BotoCoreError) as exc:
            raise store_error("put receipt", exc) from exc

    def waiting(self, tenant_id: str, ended: Collection[str]) -> list[tuple[str, Waiting]]:
        """One LIST page per 1,000 sessions (their folders, ``Delimiter="/"``), then a HEAD of
        the receipt of each session not ``ended`` (its metadata: no body is read). Sessions
        live under ``s/`` for the bucket's 30 days at most, so this grows with recent sessions,
        never with the history. For where every one counts (a removed workspace's timers);
        the Home tab reads ``newest_waiting``."""
        prefix = self.keys.tenant(tenant_id) + "s/"
        sessions: list[str] = []
        try:
            pages = self.s3.get_paginator("list_objects_v2").paginate(
                Bucket=self.bucket, Prefix=prefix, Delimiter="/"
            )
            for page in pages:
                for common in page.get("CommonPrefixes", []):
                    sessions.append(common["Prefix"][len(prefix) :].rstrip("/"))
        except (ClientError, BotoCoreError) as exc:
            raise store_error("list sessions", exc) from exc
        return self._read(tenant_id, [s for s in sessions if s not in ended])

    def newest_waiting(
        self, tenant_id: str, ended: Collection[str], limit: int, since: float = 0.0
    ) -> tuple[list[tuple[str, Waiting]], int]:
        """One LIST page per 1,000 objects under the sessions' folders, without a delimiter so
        that each receipt comes with its LastModified (a waiting session keeps about three
        objects: its checkpoints and its receipt); then a HEAD of only the ``limit`` newest
        receipts not ``ended`` and written after ``since``. However many sessions wait, the
        HEADs stay at ``limit``."""
        prefix = self.keys.tenant(tenant_id) + "s/"
        written: list[tuple[float, str]] = []
        try:
            pages = self.s3.get_paginator("list_objects_v2").paginate(
                Bucket=self.bucket, Prefix=prefix
            )
            for page in pages:
                for listed in page.get("Contents", []):
                    session, _, name = listed["Key"][len(prefix) :].partition("/")
                    at = listed["LastModified"].timestamp()
                    if name == NAME and session not in ended and at > since:
                        written.append((at, session))
        except (ClientError, BotoCoreError) as exc:
            raise store_error("list sessions", exc) from exc
        written.sort(reverse=True)  # newest first (S3 keeps whole seconds: ties by session)
        newest = [session for _, session in written[:limit]]
        return self._read(tenant_id, newest), max(0, len(written) - limit)

    def _read(self, tenant_id: str, sessions: list[str]) -> list[tuple[str, Waiting]]:
        """A HEAD of each session's receipt: the basket it names, if it names one."""
        out = []
        for session in sessions:
            try:
                key = self.keys.beside(tenant_id, session, NAME)
            except InvalidIdentifier:  # not a folder this app made
                continue
            meta = head_metadata(self.s3, self.bucket, key, "receipt")
            waiting = None if meta is None else waiting_of(meta)
            if waiting is not None:
                out.append((session, waiting))
        return out

    def basket(self, tenant_id: str, session_id: str) -> Waiting | None:
        meta = head_metadata(
            self.s3, self.bucket, self.keys.beside(tenant_id, session_id, NAME), "receipt"
        )
        return None if meta is None else waiting_of(meta)

    def forget(self, tenant_id: str, session_id: str) -> None:
        """The session waits on nothing any more (a retired basket): its receipt goes."""
        try:
            key = self.keys.beside(tenant_id, session_id, NAME)
            self.s3.delete_object(Bucket=self.bucket, Key=key)
        except (ClientError, BotoCoreError) as exc:
            raise store_error("delete receipt", exc) from exc

    def first_reminder(self, tenant_id: str, session_id: str, request_id: str, n: int) -> bool:
        """A marker object per reminder, created with ``If-None-Match: *``: of any number of
        deliveries of one reminder, exactly one creates it (S3 answers the others 412)."""
        name = f"reminded_{validate_id(request_id, 'request ID')}_{int(n)}"
        key = self.keys.beside(tenant_id, session_id, name)
        return create_marker(self.s3, self.bucket, key, "reminder marker")
