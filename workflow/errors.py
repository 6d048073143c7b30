"""Every error the workflow engine raises, in one tree.

    WorkflowError
    ├── GraphError                  the builder refused the graph (unknown/duplicate IDs, ...)
    ├── RunError                    a run could not go on
    │   ├── SuperstepLimitExceeded  a loop ran past the superstep bound
    │   ├── ExecutorFailed          an executor raised; the run ended as Failed
    │   ├── UnknownRequest          a response names no pending request
    │   │   └── RequestAlreadyAnswered  ...because it was answered already (and by whom)
    │   └── ResponseTypeMismatch    a response is not of the port's response type
    ├── CheckpointError             a checkpoint could not be written, read or trusted
    │   ├── CheckpointNotFound      no such checkpoint for this tenant and session
    │   ├── CheckpointTampered      its signature does not verify
    │   ├── CheckpointCorrupt       it verifies but cannot be decoded (unknown type tag, bad JSON)
    │   ├── IncompatibleCheckpoint  it was taken from another graph or an unknown format
    │   │   ├── CheckpointFromNewerVersion  ...written by a newer version of the code
    │   │   └── WorkflowVersionRemoved      ...on a graph version the code removed
    │   ├── CheckpointConflict      another writer appended after the same parent (fencing)
    │   └── CheckpointsHidden       the newest checkpoint is out of reach behind stray objects
    ├── InvalidIdentifier           a tenant, session or request ID is not safe in a key (bad input)
    ├── StoreError                  a checkpoint store backend failed
    │   └── StoreInUse              a local folder store is held by another process
    └── SessionBusy                 somebody else holds the session's lock
        └── LeaseLost               our lease on the lock was taken over

Exceptions never log themselves; the caller decides what the person sees.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from .snapshot import RunSnapshot, WorkflowId


class WorkflowError(Exception):
    """Base of everything the engine raises on purpose."""


class GraphError(WorkflowError):
    """The workflow graph is not valid; raised at build time or on resume."""


class RunError(WorkflowError):
    """A run could not go on."""


class SuperstepLimitExceeded(RunError):
    """The run used more supersteps than its bound: probably a loop that never ends."""


class ExecutorFailed(RunError):
    """An executor raised; the run ended as Failed and no request was raised."""

    def __init__(self, executor_id: str, cause: BaseException) -> None:
        super().__init__(f"executor {executor_id!r} failed: {cause}")
        self.executor_id = executor_id
        self.cause = cause


class UnknownRequest(RunError):
    """A response named a request that is not pending (never raised, or already answered)."""

    def __init__(self, request_id: str) -> None:
        super().__init__(f"no pending request {request_id!r}")
        self.request_id = request_id


class RequestAlreadyAnswered(UnknownRequest):
    """A response named a request that was pending once and has been answered since."""

    def __init__(self, request_id: str, answered_by: str, response: object = None) -> None:
        super().__init__(request_id)
        self.answered_by = answered_by
        self.response = response


class ResponseTypeMismatch(RunError):
    """A response was not of the type the request port expects."""


class CheckpointError(WorkflowError):
    """A checkpoint could not be written, read or trusted."""


class CheckpointNotFound(CheckpointError):
    """No checkpoint with that ID for this tenant and session (another tenant's reads the same)."""


class CheckpointTampered(CheckpointError):
    """The checkpoint's signature does not verify: it was edited or signed with another key."""

    def __init__(self, checkpoint_id: str) -> None:
        super().__init__(f"checkpoint {checkpoint_id!r} failed signature verification")
        self.checkpoint_id = checkpoint_id


class CheckpointCorrupt(CheckpointError):
    """The checkpoint verified but cannot be decoded into known types."""


class IncompatibleCheckpoint(CheckpointError):
    """The checkpoint was taken from a different graph, or written in an unknown format."""


class CheckpointFromNewerVersion(IncompatibleCheckpoint):
    """The checkpoint was written by a newer version of the code (during a deploy or after a
    rollback): nothing is wrong with it, and it resumes once that version runs again."""


class WorkflowVersionRemoved(IncompatibleCheckpoint):
    """The run started on a version of the graph the code has removed
    (``workflow.engine.versions``); ``snapshot`` is its last state, so the app can offer to start
    the same request again."""

    def __init__(self, workflow: WorkflowId, reason: str, snapshot: RunSnapshot) -> None:
        super().__init__(f"{workflow} was removed: {reason}")
        self.workflow = workflow
        self.reason = reason
        self.snapshot = snapshot


class CheckpointConflict(CheckpointError):
    """Another writer already appended a checkpoint at this position (lost a fencing race)."""


class CheckpointsHidden(CheckpointError):
    """More objects than a read may skip sit where the session's newest checkpoint should be
    found: the session's checkpoints are damaged, not the store unreachable (asking again
    meets the same objects)."""


class StoreError(WorkflowError):
    """A checkpoint store backend failed."""


class InvalidIdentifier(WorkflowError, ValueError):
    """A tenant, session or checkpoint ID is not safe to put in a key or a path: bad input from
    the caller, not a failure of the backend (which is StoreError)."""


class StoreInUse(StoreError):
    """A local folder store is already in use by another process."""


class SessionBusy(WorkflowError):
    """Somebody else holds this session's lock; ``holder`` is the lock's owner as it was
    taken (``workflow.engine.respond``: "<who>:<run>:<nonce>"), "" when not known."""

    def __init__(self, message: str, holder: str = "") -> None:
        super().__init__(message)
        self.holder = holder


class DuplicateDelivery(SessionBusy):
    """The same work holds the lock, taken too recently to be a dead attempt's: the platform
    delivered one event twice at once (Lambda's asynchronous queue may), and the other delivery
    is doing it now. This one does nothing; if the other dies, the platform retries it."""


class LeaseLost(SessionBusy):
    """Our lease on the session lock expired and was taken over by another owner."""
