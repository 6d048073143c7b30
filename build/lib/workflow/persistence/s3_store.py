"""The S3 checkpoint store: where a checkpoint becomes S3 bytes.

Each checkpoint is one object, written with ``If-None-Match: *`` at a key fixed by its sequence
(see :mod:`workflow.persistence.s3_keys`), with SSE and the record's metadata as ``x-amz-meta-*``
so ``list`` can answer with HEADs instead of reading payloads.

Fencing timeline (two writers resumed from the same parent, sequence 4):

    A: PUT …/cp/999995 If-None-Match:*   -> 200, A's checkpoint is sequence 5
    B: PUT …/cp/999995 If-None-Match:*   -> 412 PreconditionFailed -> CheckpointConflict

Real S3 may instead answer 409 ConditionalRequestConflict while A's write is in flight; that is
retried here a few times, after which it is the same 412 or a success.
"""

from __future__ import annotations

import builtins
import logging
import time
from datetime import datetime
from typing import Any

from botocore.exceptions import BotoCoreError, ClientError

from workflow.errors import CheckpointConflict, CheckpointsHidden, CheckpointTampered

from .record_format import PLAIN, RecordCodec
from .s3_client import (
    get_object,
    head_metadata,
    is_conditional_conflict,
    is_precondition_failed,
    make_s3_client,
    store_error,
)
from .s3_keys import S3Keys
from .store import CheckpointInfo, CheckpointRecord, sequence_of, validate_id, validate_record

CONFLICT_RETRIES = 3
STRAY_KEYS_SKIPPED = 10
log = logging.getLogger(__name__)


class S3CheckpointStore:
    def __init__(
        self,
        bucket: str,
        prefix: str,
        s3_client: Any = None,
        codec: RecordCodec = PLAIN,
    ) -> None:
        self.bucket = bucket
        self.codec = codec
        self.keys = S3Keys(prefix)
        self.s3 = s3_client if s3_client is not None else make_s3_client()

    # -- writing ----------------------------------------------------------------------------

    def create(self, record: CheckpointRecord) -> CheckpointRecord:
        validate_record(record)
        key = self.keys.checkpoint(record.tenant_id, record.session_id, record.sequence)
        body = self.codec.to_bytes(record)
        for attempt in range(CONFLICT_RETRIES + 1):
            try:
                self.s3.put_object(
                    Bucket=self.bucket,
                    Key=key,
                    Body=body,
                    IfNoneMatch="*",
                    ServerSideEncryption="AES256",
                    ContentType="application/vnd.weekly-shop.checkpoint",
                    Metadata=_metadata(record.info),
                )
                break
            except ClientError as exc:
                if is_precondition_failed(exc):
                    if self._is_ours(key, record):
                        break  # an earlier attempt was applied and its answer lost (see below)
                    raise CheckpointConflict(
                        f"session {record.session_id!r} already has checkpoint {record.sequence}"
                    ) from exc
                if is_conditional_conflict(exc) and attempt < CONFLICT_RETRIES:
                    time.sleep(0.05 * 2**attempt)
                    continue
                raise store_error("put checkpoint", exc) from exc
            except BotoCoreError as exc:
                raise store_error("put checkpoint", exc) from exc
        return record

    def _is_ours(self, key: str, record: CheckpointRecord) -> bool:
        """Whether the object at ``key`` is ``record`` itself.

        S3 can apply a PUT and still answer 500 (or the answer can be lost); botocore retries,
        and the retry meets our own object with 412. That is a success, not a fence.
        """
        try:
            head = self.s3.head_object(Bucket=self.bucket, Key=key)
        except (ClientError, BotoCoreError):
            return False
        return bool(head.get("Metadata", {}).get("id") == record.id)

    # -- reading ----------------------------------------------------------------------------

    def _get(self, key: str, tenant_id: str, session_id: str) -> CheckpointRecord | None:
        found = get_object(self.s3, self.bucket, key, "checkpoint")
        if found is None:
            return None
        record = self.codec.from_bytes(found[0], key, tenant_id, session_id)
        if record.sequence != self.keys.sequence_from_key(key):
            # The signature covers the sequence, not the key: an older checkpoint copied to a
            # newer key would otherwise bring an answered basket back to life.
            raise CheckpointTampered(record.checkpoint_id)
        return record

    def latest(self, tenant_id: str, session_id: str) -> CheckpointRecord | None:
        """The newest checkpoint: one LIST of one key and one GET. A key under ``cp/`` that is
        not a sequence (another tool's object, a newer layout) is skipped with a warning, one
        more LIST each, rather than breaking every click on the session; past
        ``STRAY_KEYS_SKIPPED`` of them the session is damaged (CheckpointsHidden: a lasting
        state, not a failure of S3 to retry)."""
        prefix = self.keys.checkpoints(tenant_id, session_id)
        start: dict[str, str] = {}
        for _ in range(STRAY_KEYS_SKIPPED + 1):
            try:
                page = self.s3.list_objects_v2(
                    Bucket=self.bucket, Prefix=prefix, MaxKeys=1, **start
                )
            except (ClientError, BotoCoreError) as exc:
                raise store_error("list checkpoints", exc) from exc
            contents = page.get("Contents", [])
            if not contents:
                return None
            key = str(contents[0]["Key"])
            if self.keys.is_checkpoint_key(key):
                return self._get(key, tenant_id, session_id)
            log.warning("skipping %s: not a checkpoint key", key)
            start = {"StartAfter": key}
        raise CheckpointsHidden(
            f"more than {STRAY_KEYS_SKIPPED} objects under {prefix} are not checkpoints"
        )

    def read(self, tenant_id: str, session_id: str, checkpoint_id: str) -> CheckpointRecord | None:
        key = self.keys.checkpoint(tenant_id, session_id, sequence_of(checkpoint_id))
        record = self._get(key, tenant_id, session_id)
        return record if record is not None and record.checkpoint_id == checkpoint_id else None

    def _keys(self, prefix: str) -> list[str]:
        keys: list[str] = []
        try:
            for page in self.s3.get_paginator("list_objects_v2").paginate(
                Bucket=self.bucket, Prefix=prefix
            ):
                keys += [obj["Key"] for obj in page.get("Contents", [])]
        except (ClientError, BotoCoreError) as exc:
            raise store_error("list", exc) from exc
        return keys

    def _head_info(self, key: str, tenant_id: str, session_id: str) -> CheckpointInfo | None:
        meta = head_metadata(self.s3, self.bucket, key, "checkpoint")
        return None if meta is None else _info(meta, tenant_id, session_id)

    def list(self, tenant_id: str, session_id: str) -> builtins.list[CheckpointInfo]:
        keys = self._keys(self.keys.checkpoints(tenant_id, session_id))
        keys = [k for k in keys if self.keys.is_checkpoint_key(k)]
        infos = [self._head_info(k, tenant_id, session_id) for k in reversed(keys)]
        return [i for i in infos if i is not None]

    def list_by_run(self, tenant_id: str, run_id: str) -> builtins.list[CheckpointInfo]:
        """The run's checkpoints, found by reading the metadata of every checkpoint the tenant has.

        A deliberate trade: no run index is written on the hot path (an approve click stays at
        six requests), so this costs one LIST page per 1,000 objects and one HEAD per checkpoint
        of the tenant. It is for inspection, not for answering clicks; the bucket's lifecycle
        rule keeps a tenant's history bounded.
        """
        validate_id(run_id, "run ID")
        prefix = self.keys.tenant(tenant_id) + "s/"
        found = []
        for key in self._keys(prefix):
            session, _, rest = key[len(prefix) :].partition("/")
            if rest.startswith("cp/") and self.keys.is_checkpoint_key(key):
                info = self._head_info(key, tenant_id, session)
                if info is not None and info.run_id == run_id:
                    found.append(info)
        return sorted(found, key=lambda i: (i.created_at, i.sequence))

    def delete(self, tenant_id: str, session_id: str) -> int:
        keys = self._keys(self.keys.checkpoints(tenant_id, session_id))
        for start in range(0, len(keys), 1000):
            batch = [{"Key": k} for k in keys[start : start + 1000]]
            try:
                self.s3.delete_objects(Bucket=self.bucket, Delete={"Objects": batch, "Quiet": True})
            except (ClientError, BotoCoreError) as exc:
                raise store_error("delete checkpoints", exc) from exc
        return len(keys)


def _metadata(info: CheckpointInfo) -> dict[str, str]:
    return {
        "id": info.id,
        "checkpoint-id": info.checkpoint_id,
        "parent": info.parent_checkpoint_id or "",
        "run": info.run_id,
        "at": info.created_at.isoformat(),
    }


def _info(meta: dict[str, str], tenant_id: str, session_id: str) -> CheckpointInfo | None:
    try:
        checkpoint_id = meta["checkpoint-id"]
        return CheckpointInfo(
            id=meta["id"],
            checkpoint_id=checkpoint_id,
            parent_checkpoint_id=meta["parent"] or None,
            run_id=validate_id(meta["run"], "run ID"),
            session_id=session_id,
            tenant_id=tenant_id,
            created_at=datetime.fromisoformat(meta["at"]),
            sequence=sequence_of(checkpoint_id),
        )
    except (KeyError, ValueError):
        return None
