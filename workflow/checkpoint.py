"""A run's state as checkpoint JSON, and back.

What a checkpoint holds, taken at the end of every superstep: the format version, the graph
signature, the superstep number, queued messages, pending requests (ID, port, full data), shared
state, each executor's own state, the requests answered so far (by whom, with what) and the
workflow's outputs so far: a session's audit trail travels with it. Values are written through
the :class:`TypeRegistry` as ``{"t": tag, "v": value}``, so reading a checkpoint back only ever
builds registered types.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any

from pydantic import BaseModel, ConfigDict, ValidationError

from .errors import CheckpointCorrupt, CheckpointFromNewerVersion, IncompatibleCheckpoint
from .registry import TypeRegistry

FORMAT_VERSION = 1

Tagged = dict[str, Any]


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


@dataclass
class RunSnapshot:
    """Everything a run needs to carry on, in memory."""

    graph: tuple[str, ...]
    superstep: int = 0
    queue: list[tuple[str, Any]] = field(default_factory=list)
    requests: dict[str, PendingRequest] = field(default_factory=dict)
    state: dict[str, dict[str, Any]] = field(default_factory=dict)
    executors: dict[str, Any] = field(default_factory=dict)
    answered: dict[str, AnsweredRequest] = field(default_factory=dict)
    outputs: list[Any] = field(default_factory=list)


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True, strict=True)


class _Message(_Strict):
    to: str
    m: Tagged


class _Request(_Strict):
    id: str
    port: str
    data: Tagged


class _Answer(_Strict):
    port: str
    data: Tagged
    by: str
    response: Tagged


class _Document(_Strict):
    format: int
    graph: list[str]
    superstep: int
    queue: list[_Message]
    requests: list[_Request]
    state: dict[str, dict[str, Tagged]]
    executors: dict[str, Tagged]
    answered: dict[str, _Answer]
    outputs: list[Tagged]


def encode_snapshot(snapshot: RunSnapshot, registry: TypeRegistry) -> str:
    """Compact JSON text for ``snapshot``; raises TypeError for a value of an unregistered type."""
    doc = {
        "format": FORMAT_VERSION,
        "graph": list(snapshot.graph),
        "superstep": snapshot.superstep,
        "queue": [{"to": to, "m": registry.encode(m)} for to, m in snapshot.queue],
        "requests": [
            {"id": r.request_id, "port": r.port_id, "data": registry.encode(r.data)}
            for r in snapshot.requests.values()
        ],
        "state": {
            scope: {k: registry.encode(v) for k, v in values.items()}
            for scope, values in snapshot.state.items()
        },
        "executors": {eid: registry.encode(v) for eid, v in snapshot.executors.items()},
        "answered": {
            a.request_id: {
                "port": a.port_id,
                "data": registry.encode(a.data),
                "by": a.by,
                "response": registry.encode(a.response),
            }
            for a in snapshot.answered.values()
        },
        "outputs": [registry.encode(o) for o in snapshot.outputs],
    }
    return json.dumps(doc, separators=(",", ":"), ensure_ascii=False)


def decode_snapshot(text: str, registry: TypeRegistry) -> RunSnapshot:
    """The snapshot in ``text``, validated; raises CheckpointCorrupt or IncompatibleCheckpoint."""
    try:
        raw = json.loads(text)
    except ValueError as exc:
        raise CheckpointCorrupt(f"checkpoint is not JSON: {exc}") from exc
    version = raw.get("format") if isinstance(raw, dict) else None
    if not isinstance(version, int) or isinstance(version, bool):
        raise CheckpointCorrupt("checkpoint has no format version")
    if version > FORMAT_VERSION:
        raise CheckpointFromNewerVersion(
            f"checkpoint format {version} is newer than the format this code reads "
            f"({FORMAT_VERSION})"
        )
    if version != FORMAT_VERSION:
        raise IncompatibleCheckpoint(
            f"checkpoint format {version} is not the format this code reads ({FORMAT_VERSION})"
        )
    try:
        doc = _Document.model_validate(raw)
    except ValidationError as exc:
        raise CheckpointCorrupt(f"checkpoint does not match its schema: {exc}") from exc
    return RunSnapshot(
        graph=tuple(doc.graph),
        superstep=doc.superstep,
        queue=[(m.to, registry.decode(m.m)) for m in doc.queue],
        requests={
            r.id: PendingRequest(r.id, r.port, registry.decode(r.data)) for r in doc.requests
        },
        state={
            scope: {k: registry.decode(v) for k, v in values.items()}
            for scope, values in doc.state.items()
        },
        executors={eid: registry.decode(v) for eid, v in doc.executors.items()},
        answered={
            rid: AnsweredRequest(
                rid, a.port, registry.decode(a.data), a.by, registry.decode(a.response)
            )
            for rid, a in doc.answered.items()
        },
        outputs=[registry.decode(o) for o in doc.outputs],
    )


def graph_difference(saved: tuple[str, ...], current: tuple[str, ...]) -> str:
    """What differs between two graph signatures, in words; empty when they match."""
    removed = sorted(set(saved) - set(current))
    added = sorted(set(current) - set(saved))
    parts = [f"checkpoint has {p!r}, code does not" for p in removed]
    parts += [f"code has {p!r}, checkpoint does not" for p in added]
    return "; ".join(parts)
