"""One session's checkpoints: lineage, signing and verification over any store.

This is the policy half of checkpointing (the store backends are the primitive half). Each
:class:`SessionCheckpoints` is one *run*: a start or a resume opens a new one with a new run ID.
Its first save names as parent the checkpoint it resumed from, and takes the next sequence after
the session's latest, so a writer whose lease was taken over collides with the new holder's
checkpoint and gets :class:`CheckpointConflict` instead of forking the chain.
"""

from __future__ import annotations

import asyncio
import dataclasses
from typing import Protocol

from workflow.errors import CheckpointNotFound, CheckpointTampered

from .signing import CheckpointSigner
from .store import (
    CheckpointInfo,
    CheckpointRecord,
    CheckpointStore,
    new_checkpoint_id,
    utcnow,
    uuid7,
    validate_id,
)


class Checkpointer(Protocol):
    """Where a run saves and loads its checkpoints; :class:`SessionCheckpoints` is ours."""

    async def save(self, state: str) -> str:
        """Append ``state``; return the new checkpoint's ID. Raises CheckpointError."""
        ...

    async def load(self, checkpoint_id: str | None = None) -> tuple[str, str] | None:
        """``(checkpoint_id, state)`` of the latest (or given) checkpoint, verified; or None."""
        ...

    async def discard(self) -> None:
        """Remove this session's checkpoints."""
        ...


class SessionCheckpoints:
    """The :class:`Checkpointer` a run uses for one tenant's session."""

    def __init__(
        self, store: CheckpointStore, signer: CheckpointSigner, tenant_id: str, session_id: str
    ) -> None:
        self.store = store
        self.signer = signer
        self.tenant_id = validate_id(tenant_id, "tenant ID")
        self.session_id = validate_id(session_id, "session ID")
        self.run_id = str(uuid7())
        self._parent: str | None = None
        self._next_sequence = 0
        self.last: CheckpointRecord | None = None

    async def load(self, checkpoint_id: str | None = None) -> tuple[str, str] | None:
        """The verified ``(checkpoint_id, state)`` of the latest or given checkpoint, or None.

        Raises CheckpointTampered when the signature does not verify, CheckpointNotFound when a
        given checkpoint does not exist for this tenant and session.
        """
        latest = await asyncio.to_thread(self.store.latest, self.tenant_id, self.session_id)
        record = latest
        if checkpoint_id is not None and (latest is None or latest.checkpoint_id != checkpoint_id):
            record = await asyncio.to_thread(
                self.store.read, self.tenant_id, self.session_id, checkpoint_id
            )
            if record is None:
                raise CheckpointNotFound(f"no checkpoint {checkpoint_id!r} in this session")
        if record is None or latest is None:
            return None
        self.verify(record)
        self._parent = record.checkpoint_id
        self._next_sequence = latest.sequence + 1
        self.last = record
        return record.checkpoint_id, record.state

    def verify(self, record: CheckpointRecord) -> None:
        if (
            record.tenant_id != self.tenant_id
            or record.session_id != self.session_id
            or not self.signer.verify(record)
        ):
            raise CheckpointTampered(record.checkpoint_id)

    async def save(self, state: str) -> str:
        """Append ``state`` after the last checkpoint this run loaded or saved."""
        unsigned = CheckpointRecord(
            id=str(uuid7()),
            checkpoint_id=new_checkpoint_id(self._next_sequence),
            parent_checkpoint_id=self._parent,
            run_id=self.run_id,
            session_id=self.session_id,
            tenant_id=self.tenant_id,
            created_at=utcnow(),
            sequence=self._next_sequence,
            state=state,
            signature="",
        )
        record = dataclasses.replace(unsigned, signature=self.signer.sign(unsigned))
        await asyncio.to_thread(self.store.create, record)
        self._parent = record.checkpoint_id
        self._next_sequence += 1
        self.last = record
        return record.checkpoint_id

    async def discard(self) -> None:
        await asyncio.to_thread(self.store.delete, self.tenant_id, self.session_id)

    async def history(self) -> list[CheckpointInfo]:
        return await asyncio.to_thread(self.store.list, self.tenant_id, self.session_id)
