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

A checkpoint written before graphs had versions (format 1) names none: it was written by version
1, and is placed there (then kept, carried or refused like any other version 1 run; resuming on
version 1's graph still checks its signature). A carried snapshot is checked against the graph
it lands on: its pending requests' ports and its queued messages' executors must be there.

Checkpoints are decoded with the current graph's type registry, before the version is known: it
must keep every type a kept version's runs can hold (a changed model is registered at its new
schema version with upgrades, ``workflow.persistence.registry``). A removed version's number is
never reused.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from dataclasses import dataclass

from workflow.errors import (
    CheckpointFromNewerVersion,
    GraphError,
    IncompatibleCheckpoint,
    WorkflowVersionRemoved,
)
from workflow.persistence.checkpoint import RunSnapshot, WorkflowId

from .builder import Workflow

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
        later = list(self._after(version))
        if later and all(n in self._kept and self._kept[n].carry for n in later):
            for number in later:
                carry = self._kept[number].carry
                assert carry is not None
                step = self.get(number)
                snapshot = dataclasses.replace(
                    carry(snapshot), graph=step.signature, workflow=step.identity
                )
            target = self.current()
            _check_carried(snapshot, target)
            return target, snapshot
        return self.get(version), snapshot

    def _after(self, version: int) -> range:
        return range(version + 1, self.current_version + 1)

    def _placed(self, snapshot: RunSnapshot) -> WorkflowId:
        """A format 1 checkpoint's version: 1, the only one there was before versions were
        recorded. Not guessed from its graph signature: a later version whose graph happens to
        look the same must not adopt the runs of a removed version 1."""
        return WorkflowId(self.name, 1)


def _check_carried(snapshot: RunSnapshot, target: Workflow) -> None:
    """A carried snapshot must fit its new graph: what it waits on, and what it has queued,
    must be there (a carry that forgot a renamed port would otherwise strand the run)."""
    missing = sorted(
        {
            f"request port {r.port_id!r}"
            for r in snapshot.requests.values()
            if not _is_port(target, r.port_id)
        }
        | {f"executor {node!r}" for node, _ in snapshot.queue if node not in target.nodes}
    )
    if missing:
        raise IncompatibleCheckpoint(
            f"carried to {target.identity}, the run still needs {', '.join(missing)}"
        )


def _is_port(graph: Workflow, port_id: str) -> bool:
    try:
        graph.port(port_id)
    except GraphError:
        return False
    return True
