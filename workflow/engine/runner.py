"""Running a workflow in supersteps, pausing at request ports, resuming from checkpoints.

    run = Run.start(workflow, "dinners this week ...", checkpoints=session)
    async for event in run.watch():           # runs until Idle, PendingRequests or Failed
        ...
    run.respond(request_id, decision)         # then watch() again

    run = await Run.resume(workflow, checkpoints=session)   # in a new process
    async for event in run.watch():           # re-raises pending requests with the same IDs
        ...

Every message queued for a superstep is delivered; executors of one superstep run concurrently;
what they send is delivered in the next. A checkpoint is saved at the end of every superstep, and a
failed save fails the run: an approval must never be silently lost.
"""

from __future__ import annotations

import asyncio
import enum
import uuid
from collections.abc import AsyncIterator
from typing import Any

from workflow.errors import (
    CheckpointConflict,
    CheckpointError,
    ExecutorFailed,
    IncompatibleCheckpoint,
    RequestAlreadyAnswered,
    ResponseTypeMismatch,
    SuperstepLimitExceeded,
    UnknownRequest,
    WorkflowError,
)
from workflow.persistence.checkpoint import (
    AnsweredRequest,
    PendingRequest,
    RunSnapshot,
    decode_snapshot,
    encode_snapshot,
    graph_difference,
)
from workflow.persistence.session import Checkpointer

from .builder import Workflow
from .events import (
    CheckpointSaved,
    ExecutorFailedEvent,
    RequestInfoEvent,
    SuperstepCompleted,
    SuperstepStarted,
    WorkflowErrorEvent,
    WorkflowEvent,
)
from .state import SharedState
from .superstep import deliver, route
from .versions import WorkflowVersions

DEFAULT_MAX_SUPERSTEPS = 100


class RunStatus(enum.Enum):
    READY = "ready"  # has queued work or responses not yet processed
    IDLE = "idle"  # nothing left to do
    PENDING_REQUESTS = "pending_requests"  # stopped at a request port
    FAILED = "failed"


class Run:
    """One run of a workflow: a start, or a resume from a checkpoint (each is a new run)."""

    def __init__(
        self,
        workflow: Workflow,
        snapshot: RunSnapshot,
        checkpoints: Checkpointer | None = None,
        *,
        max_supersteps: int = DEFAULT_MAX_SUPERSTEPS,
        resumed_from: str | None = None,
    ) -> None:
        self.workflow = workflow
        self.checkpoints = checkpoints
        self.max_supersteps = max_supersteps
        self.resumed_from = resumed_from
        self.run_id = str(uuid.uuid4())
        self.error: BaseException | None = None
        self._superstep = snapshot.superstep
        self._first_superstep = snapshot.superstep  # the superstep bound is each run's
        self._queue = list(snapshot.queue)
        self._pending = dict(snapshot.requests)
        self._answered = dict(snapshot.answered)
        self._outputs = list(snapshot.outputs)
        self._step_outputs: list[Any] = []
        self._state = SharedState(snapshot.state)
        self._to_reraise = list(self._pending.values())
        self._ever_pending = bool(self._pending)
        self._saved_any = False
        self._failed = False
        for executor in workflow.executors():
            if executor.id in snapshot.executors:
                executor.on_checkpoint_restore(snapshot.executors[executor.id])

    # -- opening ---------------------------------------------------------------------------

    @classmethod
    def start(
        cls,
        workflow: Workflow | WorkflowVersions,
        message: Any,
        checkpoints: Checkpointer | None = None,
        **kw: Any,
    ) -> Run:
        """A new run with ``message`` queued for the start executor (of the current version)."""
        if isinstance(workflow, WorkflowVersions):
            workflow = workflow.current()
        snapshot = RunSnapshot(
            graph=workflow.signature,
            workflow=workflow.identity,
            queue=[(workflow.start_id, message)],
        )
        return cls(workflow, snapshot, checkpoints, **kw)

    @classmethod
    async def resume(
        cls,
        workflow: Workflow | WorkflowVersions,
        checkpoints: Checkpointer,
        checkpoint_id: str | None = None,
        **kw: Any,
    ) -> Run | None:
        """A new run from the latest (or given) checkpoint, or None when there is none.

        With :class:`WorkflowVersions`, on the version the run started on or carried to the
        current one (``workflow.engine.versions``). Raises CheckpointTampered, CheckpointCorrupt,
        CheckpointFromNewerVersion, WorkflowVersionRemoved or IncompatibleCheckpoint (the graph
        differs from the one it was taken from).
        """
        loaded = await checkpoints.load(checkpoint_id)
        if loaded is None:
            return None
        cp_id, text = loaded
        if isinstance(workflow, WorkflowVersions):
            # The current registry reads every older value: it holds the upgrades.
            snapshot = decode_snapshot(text, workflow.current().registry)
            workflow, snapshot = workflow.resolve(snapshot)
        else:
            snapshot = decode_snapshot(text, workflow.registry)
        diff = graph_difference(snapshot.graph, workflow.signature)
        if diff:
            raise IncompatibleCheckpoint(
                f"checkpoint {cp_id!r} was taken from another graph: {diff}"
            )
        return cls(workflow, snapshot, checkpoints, resumed_from=cp_id, **kw)

    # -- state -----------------------------------------------------------------------------

    @property
    def status(self) -> RunStatus:
        if self._failed:
            return RunStatus.FAILED
        if self._queue or self._to_reraise:
            return RunStatus.READY
        return RunStatus.PENDING_REQUESTS if self._pending else RunStatus.IDLE

    @property
    def pending_requests(self) -> dict[str, PendingRequest]:
        return dict(self._pending)

    def pending_events(self) -> list[WorkflowEvent]:
        """A :class:`RequestInfoEvent` for each pending request, as when it was raised."""
        return [RequestInfoEvent(r.request_id, r.port_id, r.data) for r in self._pending.values()]

    @property
    def superstep(self) -> int:
        return self._superstep

    @property
    def answered(self) -> dict[str, AnsweredRequest]:
        """Requests answered in this session so far: who answered ("" if not said), and how."""
        return dict(self._answered)

    @property
    def outputs(self) -> list[Any]:
        """Everything the workflow has output in this session so far, across runs."""
        return list(self._outputs)

    def read_state(self, key: str, scope: str) -> Any:
        """A committed value of a named shared-state scope, or None (for callers, not steps)."""
        return self._state.read("", key, scope)

    def pending_request(self, request_id: str) -> PendingRequest:
        """The pending request ``request_id``; RequestAlreadyAnswered (naming who answered, and
        how) if it was answered before, UnknownRequest if it never was pending."""
        request = self._pending.get(request_id)
        if request is not None:
            return request
        done = self._answered.get(request_id)
        if done is not None:
            raise RequestAlreadyAnswered(request_id, done.by, done.response)
        raise UnknownRequest(request_id)

    def respond(self, request_id: str, response: Any, answered_by: str = "") -> None:
        """Answer a pending request; the answer goes along the port's edges on the next watch().

        Raises RequestAlreadyAnswered, UnknownRequest (never raised) or ResponseTypeMismatch; in
        each case nothing changes.
        """
        request = self.pending_request(request_id)
        port = self.workflow.port(request.port_id)
        if not isinstance(response, port.response_type):
            raise ResponseTypeMismatch(
                f"port {port.id!r} expects {port.response_type.__name__}, "
                f"got {type(response).__name__}"
            )
        targets = route(self.workflow, port.id, response)
        del self._pending[request_id]
        self._answered[request_id] = AnsweredRequest(
            request_id, port.id, request.data, answered_by, response
        )
        self._to_reraise = [r for r in self._to_reraise if r.request_id != request_id]
        self._queue.extend(targets)

    # -- running ---------------------------------------------------------------------------

    async def watch(self) -> AsyncIterator[WorkflowEvent]:
        """Run supersteps until there is no work, streaming events as they happen."""
        for request in self._to_reraise:
            yield RequestInfoEvent(request.request_id, request.port_id, request.data)
        self._to_reraise = []
        while self._queue and not self._failed:
            async for event in self._superstep_events():
                yield event
        first_run_failed = self._failed and self.resumed_from is None and not self._ever_pending
        # Only what this run wrote: after a CheckpointConflict the session is someone else's.
        ours = self._saved_any and not isinstance(self.error, CheckpointConflict)
        if first_run_failed and ours and self.checkpoints is not None:
            # A first run that never asked anything must not look like a waiting session.
            await self.checkpoints.discard()

    async def _superstep_events(self) -> AsyncIterator[WorkflowEvent]:
        # A long-lived basket (many edits, each re-priced in chunks) never runs out of steps.
        if self._superstep - self._first_superstep >= self.max_supersteps:
            yield self._fail(SuperstepLimitExceeded(f"more than {self.max_supersteps} supersteps"))
            return
        self._superstep += 1
        yield SuperstepStarted(self._superstep)
        events: asyncio.Queue[WorkflowEvent] = asyncio.Queue()
        step = asyncio.ensure_future(
            deliver(self.workflow, self._queue, self._state, self._step_outputs, events)
        )
        while not step.done() or not events.empty():
            getter = asyncio.ensure_future(events.get())
            await asyncio.wait({getter, step}, return_when=asyncio.FIRST_COMPLETED)
            if getter.done():
                yield getter.result()
            else:
                getter.cancel()
        try:
            next_queue, raised = step.result()
        except ExecutorFailed as exc:
            self._state.discard()
            self._step_outputs = []
            yield ExecutorFailedEvent(exc.executor_id, exc.cause)
            yield self._fail(exc)
            return
        self._state.commit()
        self._outputs += self._step_outputs
        self._step_outputs = []
        self._queue = next_queue
        for request in raised:
            self._pending[request.request_id] = request
        saved: str | None = None
        if self.checkpoints is not None:
            # Saved before the requests are announced: a caller that stops watching as soon as
            # it sees a request must still leave that request in the latest checkpoint.
            try:
                saved = await self.checkpoints.save(self._encode())
            except WorkflowError as exc:
                for request in raised:
                    del self._pending[request.request_id]
                yield self._fail(exc)
                return
            self._saved_any = True
        self._ever_pending = self._ever_pending or bool(raised)
        for request in raised:
            yield RequestInfoEvent(request.request_id, request.port_id, request.data)
        if saved is not None:
            yield CheckpointSaved(saved, self._superstep)
        yield SuperstepCompleted(self._superstep)

    def _fail(self, error: BaseException) -> WorkflowErrorEvent:
        self._failed = True
        self.error = error
        return WorkflowErrorEvent(error)

    def _encode(self) -> str:
        try:
            return self._encode_snapshot()
        except TypeError as exc:  # a value of a type the registry does not know
            raise CheckpointError(f"cannot checkpoint superstep {self._superstep}: {exc}") from exc

    def _encode_snapshot(self) -> str:
        snapshot = RunSnapshot(
            graph=self.workflow.signature,
            workflow=self.workflow.identity,
            superstep=self._superstep,
            queue=self._queue,
            requests=self._pending,
            state=self._state.snapshot(),
            executors={
                e.id: s
                for e in self.workflow.executors()
                if (s := e.on_checkpoint_save()) is not None
            },
            answered=self._answered,
            outputs=self._outputs,
        )
        return encode_snapshot(snapshot, self.workflow.registry)
