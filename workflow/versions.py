"""The versions of a workflow's graph an app can still resume, and how old runs are carried.

A run's checkpoints name the workflow and the version of its graph the run started on. A deploy
that changes the graph adds a version beside the old ones instead of replacing it:

    versions = WorkflowVersions("weekly-shop")
    versions.add(1, build_v1)                       # still resumes runs that started on v1
    versions.add(2, build_v2, carry=v1_to_v2)       # ...or carries them to v2 with v1_to_v2
    versions.remove(1, reason="v1 baskets expired")  # a deliberate act, with its reason

:meth:`WorkflowVersions.resolve` places a checkpoint's run:

- on the current version, if it started there, or if declared carries lead there from its
  version (each ``carry`` takes the previous version's snapshot to its own graph's);
- else on the graph of the version it started on, kept for that purpose;
- a removed version is :class:`WorkflowVersionRemoved` (with the old snapshot, so the app can
  offer to start the same request again); a version newer than the current one is
  :class:`CheckpointFromNewerVersion`; an older one neither kept nor removed is a mistake in the
  code, refused loudly (the compatibility corpus's tests catch it before a deploy does).

A checkpoint written before graphs had versions (format 1) names none: it is placed on the kept
version whose graph signature it carries. Checkpoints are decoded with the current graph's type
registry, before the version is known: it must keep every type a kept version's runs can hold
(a changed model is registered at its new schema version with upgrades, ``workflow.registry``).
A removed version's number is never reused.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from dataclasses import dataclass

from .builder import Workflow
from .checkpoint import RunSnapshot, WorkflowId, graph_difference
from .errors import CheckpointFromNewerVersion, IncompatibleCheckpoint, WorkflowVersionRemoved

Carry = Callable[[RunSnapshot], RunSnapshot]


@dataclass
class _Version:
    build: Callable[[], Workflow]
    carry: Carry | None
    graph: Workflow | None = None

    def workflow(self, name: str, number: int) -> Workflow:
        if self.graph is None:
            graph = self.build()
            if graph.identity != WorkflowId(name, number):
                raise ValueError(f"version {number} of {name!r} builds {graph.identity}")
            self.graph = graph
        return self.graph


class WorkflowVersions:
    def __init__(self, name: str) -> None:
        self.name = name
        self._kept: dict[int, _Version] = {}
        self._removed: dict[int, str] = {}

    def add(self, version: int, build: Callable[[], Workflow], carry: Carry | None = None) -> None:
        """Keep ``version``, built by ``build`` when first needed; ``carry`` takes a snapshot of
        the version before it to this one's graph."""
        if version in self._kept or version in self._removed:
            raise ValueError(f"{self.name} v{version} is declared twice")
        self._kept[version] = _Version(build, carry)

    def remove(self, version: int, *, reason: str) -> None:
        """Stop resuming ``version``; its runs get WorkflowVersionRemoved, with ``reason``."""
        if not reason:
            raise ValueError("removing a version needs a reason")
        self._kept.pop(version, None)
        self._removed[version] = reason

    @property
    def current_version(self) -> int:
        return max(self._kept)

    def current(self) -> Workflow:
        """The graph new runs start on."""
        return self.get(self.current_version)

    def get(self, version: int) -> Workflow:
        return self._kept[version].workflow(self.name, version)

    def resolve(self, snapshot: RunSnapshot) -> tuple[Workflow, RunSnapshot]:
        """The graph ``snapshot``'s run resumes on, and the snapshot to resume (carried if need
        be); raises as the module docstring says."""
        identity = snapshot.workflow or self._placed(snapshot)
        if identity.name != self.name:
            raise IncompatibleCheckpoint(f"checkpoint of {identity.name!r}, not {self.name!r}")
        version = identity.version
        if version in self._removed:
            raise WorkflowVersionRemoved(identity, self._removed[version], snapshot)
        if version > self.current_version:
            raise CheckpointFromNewerVersion(
                f"checkpoint of {identity}, newer than this code's v{self.current_version}"
            )
        if version not in self._kept:
            raise IncompatibleCheckpoint(
                f"{identity} is neither kept nor removed: declare what happens to its runs"
            )
        carries = [self._kept[n].carry if n in self._kept else None for n in self._after(version)]
        if carries and all(carries):
            for carry in carries:
                snapshot = carry(snapshot) if carry else snapshot
            target = self.current()
            return target, dataclasses.replace(
                snapshot, graph=target.signature, workflow=target.identity
            )
        return self.get(version), snapshot

    def _after(self, version: int) -> range:
        return range(version + 1, self.current_version + 1)

    def _placed(self, snapshot: RunSnapshot) -> WorkflowId:
        """A format 1 checkpoint's version: the kept one whose graph it was taken from."""
        for number in sorted(self._kept):
            graph = self.get(number)
            if not graph_difference(snapshot.graph, graph.signature):
                return WorkflowId(self.name, number)
        if self._removed:  # the graph is no longer here at all: treat it as its oldest removed
            oldest = min(self._removed)
            return WorkflowId(self.name, oldest)
        diff = graph_difference(snapshot.graph, self.current().signature)
        raise IncompatibleCheckpoint(f"checkpoint from a graph no version has: {diff}")
