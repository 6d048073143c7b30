"""The checkpoint store contract every backend keeps.

A store appends and reads :class:`CheckpointRecord` s. It does no signing, no lineage and no
decoding: that policy lives in ``workflow.persistence.session``. What every backend guarantees:

- ``create`` appends (at least once: a replayed superstep writes a new record, no dedupe), but
  refuses a second record at the same ``sequence`` of a session with :class:`CheckpointConflict`.
  That is the fence: two writers resuming from the same parent collide, and one loses.
- Every read is scoped by tenant: another tenant's checkpoint reads exactly like a missing one.
- ``list`` and ``list_by_run`` return metadata (:class:`CheckpointInfo`) without the payload.
- Tenant and session IDs are validated before they reach a key or a path.
"""

from __future__ import annotations

import builtins
import os
import re
import secrets
import time
import uuid
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Protocol

from workflow.errors import InvalidIdentifier

MAX_ID_LENGTH = 128
_SAFE_ID = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.:-]*$")
_CHECKPOINT_ID = re.compile(r"^(\d{6})-[0-9a-f]{8}$")


def validate_id(value: str, what: str) -> str:
    """``value`` if it is safe in an S3 key and a file name; raises InvalidIdentifier."""
    if not isinstance(value, str) or not value:
        raise InvalidIdentifier(f"{what} must be a non-empty string")
    if len(value) > MAX_ID_LENGTH:
        raise InvalidIdentifier(f"{what} is longer than {MAX_ID_LENGTH} characters")
    if ".." in value or not _SAFE_ID.fullmatch(value):
        raise InvalidIdentifier(f"{what} {value[:40]!r} has characters not allowed in an ID")
    return value


def new_checkpoint_id(sequence: int) -> str:
    """A checkpoint ID that carries its position in the session, so a backend can find it."""
    if not 0 <= sequence < 1_000_000:
        raise ValueError(f"sequence {sequence} out of range")
    return f"{sequence:06d}-{secrets.token_hex(4)}"


def sequence_of(checkpoint_id: str) -> int:
    """The sequence a checkpoint ID carries; raises InvalidIdentifier for anything else."""
    match = _CHECKPOINT_ID.fullmatch(checkpoint_id) if isinstance(checkpoint_id, str) else None
    if match is None:
        raise InvalidIdentifier(f"not a checkpoint ID: {str(checkpoint_id)[:40]!r}")
    return int(match.group(1))


def uuid7() -> uuid.UUID:
    """A time-ordered UUID (RFC 9562 version 7): 48-bit Unix milliseconds, then randomness."""
    ms = time.time_ns() // 1_000_000
    rand = int.from_bytes(os.urandom(10), "big")
    value = (ms & ((1 << 48) - 1)) << 80
    value |= 0x7 << 76
    value |= ((rand >> 62) & 0xFFF) << 64
    value |= 0b10 << 62
    value |= rand & ((1 << 62) - 1)
    return uuid.UUID(int=value)


def utcnow() -> datetime:
    """Now in UTC, to the millisecond: what every backend can store and give back unchanged."""
    now = datetime.now(UTC)
    return now.replace(microsecond=now.microsecond // 1000 * 1000)


@dataclass(frozen=True)
class CheckpointInfo:
    """A checkpoint's metadata: what ``list`` returns without reading payloads."""

    id: str
    checkpoint_id: str
    parent_checkpoint_id: str | None
    run_id: str
    session_id: str
    tenant_id: str
    created_at: datetime
    sequence: int


@dataclass(frozen=True)
class CheckpointRecord(CheckpointInfo):
    """A whole checkpoint: metadata, the state JSON byte-for-byte as written, its signature.

    ``mac`` names what the signature covers (``workflow.persistence.signing``): 2, written now,
    covers the record's ``id`` and ``created_at`` too; 1 is how records of record version 1 were
    signed.
    """

    state: str
    signature: str
    mac: int = 2

    @property
    def info(self) -> CheckpointInfo:
        return CheckpointInfo(
            id=self.id,
            checkpoint_id=self.checkpoint_id,
            parent_checkpoint_id=self.parent_checkpoint_id,
            run_id=self.run_id,
            session_id=self.session_id,
            tenant_id=self.tenant_id,
            created_at=self.created_at,
            sequence=self.sequence,
        )


def validate_record(record: CheckpointRecord) -> CheckpointRecord:
    """``record`` if its IDs are safe to store and its checkpoint ID carries its sequence.

    Every backend's ``create`` calls this first, so no backend writes a record another backend
    would refuse (or write half of it: the S3 store puts the run ID in a key and a header).
    """
    validate_id(record.tenant_id, "tenant ID")
    validate_id(record.session_id, "session ID")
    validate_id(record.run_id, "run ID")
    if sequence_of(record.checkpoint_id) != record.sequence:
        raise InvalidIdentifier(
            f"checkpoint ID {record.checkpoint_id!r} does not carry sequence {record.sequence}"
        )
    return record


class CheckpointStore(Protocol):
    """Append-only, tenant-scoped checkpoint storage (in memory, a folder, S3)."""

    def create(self, record: CheckpointRecord) -> CheckpointRecord:
        """Append ``record``; CheckpointConflict if its session already has its sequence."""
        ...

    def latest(self, tenant_id: str, session_id: str) -> CheckpointRecord | None:
        """The session's newest checkpoint (highest sequence), or None."""
        ...

    def read(self, tenant_id: str, session_id: str, checkpoint_id: str) -> CheckpointRecord | None:
        """One checkpoint, or None if missing or another tenant's."""
        ...

    def list(self, tenant_id: str, session_id: str) -> builtins.list[CheckpointInfo]:
        """The session's checkpoints, oldest to newest, without payloads."""
        ...

    def list_by_run(self, tenant_id: str, run_id: str) -> builtins.list[CheckpointInfo]:
        """The checkpoints one run wrote, oldest to newest, without payloads."""
        ...

    def delete(self, tenant_id: str, session_id: str) -> int:
        """Remove the session's checkpoints; the number removed."""
        ...
