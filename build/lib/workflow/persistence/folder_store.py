"""A checkpoint store in a local folder, for the console app and anyone without S3.

Like the reference sample's file store, it is for one process at a time: opening it takes an
exclusive lock on ``<root>/.lock``, and a second process gets :class:`StoreInUse`. Layout:

    <root>/<tenant>/.index.jsonl                    one metadata line per checkpoint
    <root>/<tenant>/<session>/<sequence>.ckpt       record bytes (see record_format)

A checkpoint file is published with ``os.link`` from a temporary file, which fails if the name
exists: that is the same-sequence fence the S3 store gets from ``If-None-Match: *``.
"""

from __future__ import annotations

import builtins
import fcntl
import json
import os
import shutil
import threading
from datetime import datetime
from pathlib import Path
from typing import IO, Any

from workflow.errors import CheckpointConflict, StoreInUse

from .record_format import PLAIN, RecordCodec
from .store import CheckpointInfo, CheckpointRecord, sequence_of, validate_id, validate_record


def _info_to_json(info: CheckpointInfo) -> dict[str, Any]:
    return {
        "id": info.id,
        "checkpoint_id": info.checkpoint_id,
        "parent_checkpoint_id": info.parent_checkpoint_id,
        "run_id": info.run_id,
        "session_id": info.session_id,
        "tenant_id": info.tenant_id,
        "created_at": info.created_at.isoformat(),
        "sequence": info.sequence,
    }


def _info_from_json(line: str) -> CheckpointInfo:
    d = json.loads(line)
    return CheckpointInfo(
        id=d["id"],
        checkpoint_id=d["checkpoint_id"],
        parent_checkpoint_id=d["parent_checkpoint_id"],
        run_id=d["run_id"],
        session_id=d["session_id"],
        tenant_id=d["tenant_id"],
        created_at=datetime.fromisoformat(d["created_at"]),
        sequence=int(d["sequence"]),
    )


class FolderCheckpointStore:
    def __init__(self, root: str | os.PathLike[str], codec: RecordCodec = PLAIN) -> None:
        self.root = Path(root)
        self.codec = codec
        self.root.mkdir(parents=True, exist_ok=True, mode=0o700)
        self._lockfile: IO[str] | None = open(self.root / ".lock", "a")  # noqa: SIM115
        try:
            fcntl.flock(self._lockfile, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError as exc:
            self._lockfile.close()
            self._lockfile = None
            raise StoreInUse(
                f"the store at {self.root} is already in use by another process"
            ) from exc
        self._mutex = threading.Lock()

    def close(self) -> None:
        if self._lockfile is not None:
            fcntl.flock(self._lockfile, fcntl.LOCK_UN)
            self._lockfile.close()
            self._lockfile = None

    def __enter__(self) -> FolderCheckpointStore:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def _session_dir(self, tenant_id: str, session_id: str) -> Path:
        return (
            self.root / validate_id(tenant_id, "tenant ID") / validate_id(session_id, "session ID")
        )

    def _index(self, tenant_id: str) -> Path:
        # A dot name: no ID can start with ".", so no session folder can take this name.
        return self.root / validate_id(tenant_id, "tenant ID") / ".index.jsonl"

    def _read_index(self, tenant_id: str) -> list[CheckpointInfo]:
        path = self._index(tenant_id)
        if not path.exists():
            return []
        return [_info_from_json(line) for line in path.read_text().splitlines() if line]

    def create(self, record: CheckpointRecord) -> CheckpointRecord:
        validate_record(record)
        folder = self._session_dir(record.tenant_id, record.session_id)
        with self._mutex:
            folder.mkdir(parents=True, exist_ok=True, mode=0o700)
            final = folder / f"{record.sequence:06d}.ckpt"
            tmp = folder / f".{record.id}.tmp"
            tmp.write_bytes(self.codec.to_bytes(record))
            try:
                os.link(tmp, final)
            except FileExistsError as exc:
                raise CheckpointConflict(
                    f"session {record.session_id!r} already has checkpoint {record.sequence}"
                ) from exc
            finally:
                tmp.unlink()
            with self._index(record.tenant_id).open("a") as index:
                index.write(json.dumps(_info_to_json(record.info)) + "\n")
        return record

    def _load(self, path: Path, tenant_id: str, session_id: str) -> CheckpointRecord:
        return self.codec.from_bytes(path.read_bytes(), str(path), tenant_id, session_id)

    def latest(self, tenant_id: str, session_id: str) -> CheckpointRecord | None:
        folder = self._session_dir(tenant_id, session_id)
        files = sorted(folder.glob("*.ckpt")) if folder.exists() else []
        return self._load(files[-1], tenant_id, session_id) if files else None

    def read(self, tenant_id: str, session_id: str, checkpoint_id: str) -> CheckpointRecord | None:
        path = self._session_dir(tenant_id, session_id) / f"{sequence_of(checkpoint_id):06d}.ckpt"
        if not path.exists():
            return None
        record = self._load(path, tenant_id, session_id)
        return record if record.checkpoint_id == checkpoint_id else None

    def list(self, tenant_id: str, session_id: str) -> builtins.list[CheckpointInfo]:
        validate_id(session_id, "session ID")
        found = [i for i in self._read_index(tenant_id) if i.session_id == session_id]
        return sorted(found, key=lambda i: i.sequence)

    def list_by_run(self, tenant_id: str, run_id: str) -> builtins.list[CheckpointInfo]:
        validate_id(run_id, "run ID")
        found = [i for i in self._read_index(tenant_id) if i.run_id == run_id]
        return sorted(found, key=lambda i: (i.created_at, i.sequence))

    def delete(self, tenant_id: str, session_id: str) -> int:
        folder = self._session_dir(tenant_id, session_id)
        with self._mutex:
            count = len(list(folder.glob("*.ckpt"))) if folder.exists() else 0
            shutil.rmtree(folder, ignore_errors=True)
            kept = [i for i in self._read_index(tenant_id) if i.session_id != session_id]
            if kept or self._index(tenant_id).exists():
                self._index(tenant_id).write_text(
                    "".join(json.dumps(_info_to_json(i)) + "\n" for i in kept)
                )
        return count
