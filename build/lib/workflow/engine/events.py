"""Events a run streams to its caller.

Built-in events describe the runtime (supersteps, executors, requests, outputs, checkpoints);
executors raise their own events by subclassing :class:`WorkflowEvent` and calling
``ctx.add_event``.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True)
class WorkflowEvent:
    """Base of every event; subclass it for events in your own domain's terms."""


@dataclass(frozen=True)
class SuperstepStarted(WorkflowEvent):
    superstep: int


@dataclass(frozen=True)
class SuperstepCompleted(WorkflowEvent):
    superstep: int


@dataclass(frozen=True)
class ExecutorInvoked(WorkflowEvent):
    executor_id: str


@dataclass(frozen=True)
class ExecutorCompleted(WorkflowEvent):
    executor_id: str


@dataclass(frozen=True)
class ExecutorFailedEvent(WorkflowEvent):
    executor_id: str
    error: BaseException


@dataclass(frozen=True)
class RequestInfoEvent(WorkflowEvent):
    """A request port asks the outside world; answer with ``run.respond(request_id, ...)``."""

    request_id: str
    port_id: str
    data: Any


@dataclass(frozen=True)
class OutputEvent(WorkflowEvent):
    executor_id: str
    data: Any


@dataclass(frozen=True)
class WorkflowErrorEvent(WorkflowEvent):
    error: BaseException


@dataclass(frozen=True)
class CheckpointSaved(WorkflowEvent):
    checkpoint_id: str
    superstep: int
