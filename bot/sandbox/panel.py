"""The "Checkpoints" side panel: each session's checkpoints as the store holds them, and its lock.

This is where a newcomer sees the mechanism: every superstep appends a checkpoint, a click takes
the lock, and the pending request in the latest checkpoint is the basket on screen; each waiting
basket's next timer (a reminder or its expiry) is listed, and can be fired at once. Each
checkpoint says what wrote it: the workflow's name and graph version, the document format and
the record version (README.md, "Changing the workflow").
"""

from __future__ import annotations

import json
from typing import Any

from botocore.exceptions import BotoCoreError, ClientError

from workflow.checkpoint import written_with
from workflow.errors import WorkflowError
from workflow.s3_store import S3CheckpointStore

from ..runtime import Runtime


def sessions(rt: Runtime, tenant: str) -> list[dict[str, Any]]:
    """Every session of ``tenant``, newest first, with its checkpoints oldest first."""
    store = rt.store
    if not isinstance(store, S3CheckpointStore):  # the sandbox always runs on (moto) S3
        return []
    prefix = store.keys.tenant(tenant) + "s/"
    s3 = store.s3
    bucket = rt.settings.checkpoint_bucket
    sizes: dict[str, dict[str, int]] = {}
    try:
        for page in s3.get_paginator("list_objects_v2").paginate(Bucket=bucket, Prefix=prefix):
            for obj in page.get("Contents", []):
                session, _, rest = obj["Key"][len(prefix) :].partition("/")
                sizes.setdefault(session, {})[rest] = int(obj["Size"])
    except (ClientError, BotoCoreError):
        return []
    found = [_session(rt, store, tenant, s, objects) for s, objects in sizes.items()]
    return sorted(found, key=lambda s: s["updated"], reverse=True)


def _session(
    rt: Runtime, store: S3CheckpointStore, tenant: str, session: str, objects: dict[str, int]
) -> dict[str, Any]:
    try:
        infos = store.list(tenant, session)
        latest = store.latest(tenant, session)
        lease = rt.lock.holder(tenant, session)
    except WorkflowError as exc:
        return {"session": session, "error": str(exc), "checkpoints": [], "updated": ""}
    pending: list[str] = []
    if latest is not None:
        state = json.loads(latest.state)
        pending = [f"{r['port']} {r['id'][:8]}" for r in state.get("requests", [])]
    keys = store.keys
    checkpoints = [
        {
            "id": info.checkpoint_id,
            "parent": info.parent_checkpoint_id,
            "run": info.run_id[-8:],
            "created_at": info.created_at.isoformat(timespec="seconds"),
            "size": objects.get(
                keys.checkpoint(tenant, session, info.sequence)[
                    len(keys.session(tenant, session)) :
                ],
                0,
            ),
            "pending": pending if latest and info.checkpoint_id == latest.checkpoint_id else [],
            "version": _written_by(store, tenant, session, info.checkpoint_id),
        }
        for info in infos
    ]
    return {
        "session": session,
        "checkpoints": checkpoints,
        "lock": None
        if lease is None
        else {"owner": lease.owner.split(":")[0], "expires_at": lease.expires_at},
        "updated": checkpoints[-1]["created_at"] if checkpoints else "",
    }


def _written_by(store: S3CheckpointStore, tenant: str, session: str, checkpoint_id: str) -> str:
    try:
        record = store.read(tenant, session, checkpoint_id)
    except WorkflowError:
        return "unreadable"
    return "" if record is None else f"{written_with(record.state)} · record v{record.mac}"


def timers(rt: Runtime) -> list[dict[str, Any]]:
    """The basket timers armed on (moto's) EventBridge Scheduler, the next due first."""
    armed = rt.timers
    if armed is None:
        return []
    try:
        pending = armed.pending()
    except (ClientError, BotoCoreError):
        return []
    return [
        {"session": t.session, "kind": t.kind, "n": t.n, "at": t.at, "thread_ts": t.thread_ts}
        for t in pending
    ]
