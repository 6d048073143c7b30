"""Which checkpoint Slack shows: the bot's receipt, one small object per session.

The workflow writes its checkpoint before the bot posts to Slack, so a process that dies in
between leaves the store ahead of the channel. After posting, the bot records the checkpoint the
channel now shows. A later click (or Lambda's retry of the lost invocation) that finds its work
already done compares the receipt with the latest checkpoint: the same, and it is a stale click;
different, and it shows what the latest checkpoint holds, then writes the receipt
(``bot.turn.catch_up``).

    Receipts           the seam: shown() and mark_shown(), first_reminder(); all raise StoreError
    InMemoryReceipts   its twin, for tests
    S3Receipts         ``<prefix><tenant>/s/<session>/shown``, beside the session's checkpoints

What a failure costs is the caller's policy (``bot.turn``): a receipt that could not be written
only costs a repost later.
"""

from __future__ import annotations

import threading
from typing import Any, Protocol

from botocore.exceptions import BotoCoreError, ClientError

from workflow.s3_client import create_marker, get_object, store_error
from workflow.s3_keys import S3Keys
from workflow.store import validate_id

NAME = "shown"


class Receipts(Protocol):
    def shown(self, tenant_id: str, session_id: str) -> str | None:
        """The checkpoint ID the channel shows, or None if nothing was recorded."""
        ...

    def mark_shown(self, tenant_id: str, session_id: str, checkpoint_id: str) -> None:
        """Record that the channel now shows ``checkpoint_id``."""
        ...

    def first_reminder(self, tenant_id: str, session_id: str, request_id: str, n: int) -> bool:
        """Record reminder ``n`` of ``request_id`` as sent: True the first time only."""
        ...


class InMemoryReceipts:
    def __init__(self) -> None:
        self._mutex = threading.Lock()
        self._shown: dict[tuple[str, str], str] = {}
        self._reminded: set[tuple[str, str, str, int]] = set()

    def shown(self, tenant_id: str, session_id: str) -> str | None:
        key = (validate_id(tenant_id, "tenant ID"), validate_id(session_id, "session ID"))
        with self._mutex:
            return self._shown.get(key)

    def mark_shown(self, tenant_id: str, session_id: str, checkpoint_id: str) -> None:
        key = (validate_id(tenant_id, "tenant ID"), validate_id(session_id, "session ID"))
        with self._mutex:
            self._shown[key] = validate_id(checkpoint_id, "checkpoint ID")

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

    def mark_shown(self, tenant_id: str, session_id: str, checkpoint_id: str) -> None:
        key = self.keys.beside(tenant_id, session_id, NAME)
        try:
            self.s3.put_object(
                Bucket=self.bucket,
                Key=key,
                Body=validate_id(checkpoint_id, "checkpoint ID").encode("ascii"),
                ContentType="text/plain",
                ServerSideEncryption="AES256",
            )
        except (ClientError, BotoCoreError) as exc:
            raise store_error("put receipt", exc) from exc

    def first_reminder(self, tenant_id: str, session_id: str, request_id: str, n: int) -> bool:
        """A marker object per reminder, created with ``If-None-Match: *``: of any number of
        deliveries of one reminder, exactly one creates it (S3 answers the others 412)."""
        name = f"reminded_{validate_id(request_id, 'request ID')}_{int(n)}"
        key = self.keys.beside(tenant_id, session_id, name)
        return create_marker(self.s3, self.bucket, key, "reminder marker")
