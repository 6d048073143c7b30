"""The in-memory checkpoint store: the contract with nothing in the way, for tests and demos."""

from __future__ import annotations

import builtins
import threading

from workflow.errors import CheckpointConflict

from .store import CheckpointInfo, CheckpointRecord, sequence_of, validate_id, validate_record


class InMemoryCheckpointStore:
    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._sessions: dict[tuple[str, str], list[CheckpointRecord]] = {}

    def create(self, record: CheckpointRecord) -> CheckpointRecord:
        validate_record(record)
        key = (record.tenant_id, record.session_id)
        with self._lock:
            records = self._sessions.setdefault(key, [])
            if any(r.sequence == record.sequence for r in records):
                raise CheckpointConflict(
                    f"session {record.session_id!r} already has checkpoint {record.sequence}"
                )
            records.append(record)
            records.sort(key=lambda r: r.sequence)
        return record

    def _records(self, tenant_id: str, session_id: str) -> list[CheckpointRecord]:
        key = (validate_id(tenant_id, "tenant ID"), validate_id(session_id, "session ID"))
        with self._lock:
            return list(self._sessions.get(key, []))

    def latest(self, tenant_id: str, session_id: str) -> CheckpointRecord | None:
        records = self._records(tenant_id, session_id)
        return records[-1] if records else None

    def read(self, tenant_id: str, session_id: str, checkpoint_id: str) -> CheckpointRecord | None:
        sequence_of(checkpoint_id)  # InvalidIdentifier for anything but a checkpoint ID
        found = [
            r for r in self._records(tenant_id, session_id) if r.checkpoint_id == checkpoint_id
        ]
        return found[0] if found else None

    def list(self, tenant_id: str, session_id: str) -> builtins.list[CheckpointInfo]:
        return [r.info for r in self._records(tenant_id, session_id)]

    def list_by_run(self, tenant_id: str, run_id: str) -> builtins.list[CheckpointInfo]:
        validate_id(tenant_id, "tenant ID")
        validate_id(run_id, "run ID")
        with self._lock:
            found = [
                r.info
                for (tenant, _), records in self._sessions.items()
                if tenant == tenant_id
                for r in records
                if r.run_id == run_id
            ]
        return sorted(found, key=lambda i: (i.created_at, i.sequence))

    def delete(self, tenant_id: str, session_id: str) -> int:
        key = (validate_id(tenant_id, "tenant ID"), validate_id(session_id, "session ID"))
        with self._lock:
            return len(self._sessions.pop(key, []))
