"""A run's state in memory: what a checkpoint holds (``workflow.persistence.checkpoint`` writes and
reads it).

Plain data, below everything else in the engine: the error tree (``workflow.errors``) names these
types, and the checkpoint document, the runner and the versions build them, so this module
imports nothing of the engine's.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any


@dataclass(frozen=True)
class PendingRequest:
    request_id: str
    port_id: str
    data: Any


@dataclass(frozen=True)
class AnsweredRequest:
    """A request that was pending once, and the answer it got."""

    request_id: str
    port_id: str
    data: Any
    by: str
    response: Any


@dataclass(frozen=True)
class WorkflowId:
    """Which workflow, and which version of its graph, a run belongs to."""

    name: str
    version: int

    def __str__(self) -> str:
        return f"{self.name} v{self.version}"


@dataclass
class RunSnapshot:
    """Everything a run needs to carry on, in memory. ``workflow`` is None for a checkpoint
    written before workflows had versions (format 1); ``workflow.engine.versions`` places it."""

    graph: tuple[str, ...]
    workflow: WorkflowId | None = None
    superstep: int = 0
    queue: list[tuple[str, Any]] = field(default_factory=list)
    requests: dict[str, PendingRequest] = field(default_factory=dict)
    state: dict[str, dict[str, Any]] = field(default_factory=dict)
    executors: dict[str, Any] = field(default_factory=dict)
    answered: dict[str, AnsweredRequest] = field(default_factory=dict)
    outputs: list[Any] = field(default_factory=list)
