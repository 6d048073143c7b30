"""A run's state as checkpoint JSON, and back.

What a checkpoint holds, taken at the end of every superstep: the format version, which workflow
and version of it the run belongs to, the graph signature, the superstep number, queued messages,
pending requests (ID, port, full data), shared state, each executor's own state, the requests
answered so far (by whom, with what) and the workflow's outputs so far: a session's audit trail
travels with it. Values are written through the :class:`TypeRegistry` as ``{"t": tag, "v":
value}``, so reading a checkpoint back only ever builds registered types.

Formats, and what reads them (each earlier one is upgraded on read; the next save writes the
current one):

    1   before versioning: no ``workflow``; type tags without a schema version ("Basket")
    2   adds ``"workflow": {"name": …, "version": …}``; tags carry versions ("Basket@1")

A format above :data:`FORMAT_VERSION` is :class:`CheckpointFromNewerVersion`. The document is
checked by hand rather than by a pydantic model: it is read on every click, and building those
models is a noticeable share of a cold start's lazy run.
"""

from __future__ import annotations

import json
import re
from typing import Any

from workflow.errors import CheckpointCorrupt, CheckpointFromNewerVersion, IncompatibleCheckpoint
from workflow.snapshot import AnsweredRequest, PendingRequest, RunSnapshot, WorkflowId

from .registry import TypeRegistry

__all__ = [
    "FORMAT_VERSION",
    "READS",
    "AnsweredRequest",
    "PendingRequest",
    "RunSnapshot",
    "WorkflowId",
    "decode_snapshot",
    "encode_snapshot",
    "written_with",
]

FORMAT_VERSION = 2
READS = (1, 2)  # every format deployed code has written

Tagged = dict[str, Any]


def encode_snapshot(snapshot: RunSnapshot, registry: TypeRegistry) -> str:
    """Compact JSON text for ``snapshot``; raises TypeError for a value of an unregistered type."""
    identity = snapshot.workflow
    doc = {
        "format": FORMAT_VERSION,
        "workflow": None
        if identity is None
        else {"name": identity.name, "version": identity.version},
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
    """The snapshot in ``text``, validated and upgraded to the current format.

    Raises CheckpointCorrupt (not JSON, not the schema, an unknown type tag),
    CheckpointFromNewerVersion, or IncompatibleCheckpoint (a format no deployed code wrote).
    """
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
    if version not in READS:
        raise IncompatibleCheckpoint(
            f"checkpoint format {version} was never written by this project ({READS})"
        )
    doc = _check_document(raw if version == FORMAT_VERSION else _upgrade_1_to_2(raw))
    identity = doc["workflow"]
    return RunSnapshot(
        graph=tuple(doc["graph"]),
        workflow=None if identity is None else WorkflowId(identity["name"], identity["version"]),
        superstep=doc["superstep"],
        queue=[(m["to"], registry.decode(m["m"])) for m in doc["queue"]],
        requests={
            r["id"]: PendingRequest(r["id"], r["port"], registry.decode(r["data"]))
            for r in doc["requests"]
        },
        state={
            scope: {k: registry.decode(v) for k, v in values.items()}
            for scope, values in doc["state"].items()
        },
        executors={eid: registry.decode(v) for eid, v in doc["executors"].items()},
        answered={
            rid: AnsweredRequest(
                rid, a["port"], registry.decode(a["data"]), a["by"], registry.decode(a["response"])
            )
            for rid, a in doc["answered"].items()
        },
        outputs=[registry.decode(o) for o in doc["outputs"]],
    )


_SHOWN_NAME = re.compile(r"[A-Za-z0-9_.-]{1,64}")


def written_with(text: str) -> str:
    """Which workflow version and format wrote a checkpoint document, for a person to read
    ("weekly-shop v1 · format 2"). It only peeks: nothing is decoded, it never raises, and
    nothing it shows comes from the document but a safe name and numbers."""
    try:
        raw = json.loads(text)
    except ValueError:
        return "unreadable"
    if not isinstance(raw, dict) or not _is(raw.get("format"), int):
        return "unreadable"
    fmt = f"format {raw['format']}"
    identity = raw.get("workflow")
    if raw["format"] == 1:
        return f"before versions · {fmt}"
    if not isinstance(identity, dict):
        return f"unnamed · {fmt}"
    name, version = identity.get("name"), identity.get("version")
    if not (isinstance(name, str) and _SHOWN_NAME.fullmatch(name) and _is(version, int)):
        return f"? · {fmt}"
    return f"{name} v{version} · {fmt}"


def _upgrade_1_to_2(raw: dict[str, Any]) -> dict[str, Any]:
    """Format 1 had no workflow identity (its tags' missing versions mean version 1)."""
    if "workflow" in raw:
        raise _fail("a format 1 checkpoint", "has no workflow field")
    return {**raw, "format": 2, "workflow": None}


# -- the document's shape, checked by hand (see the module docstring) ----------------------------

_DOCUMENT_KEYS = {
    "format", "workflow", "graph", "superstep", "queue", "requests", "state", "executors",
    "answered", "outputs",
}  # fmt: skip


def _fail(where: str, what: str) -> CheckpointCorrupt:
    return CheckpointCorrupt(f"checkpoint does not match its schema: {where} {what}")


def _is(value: Any, kind: type) -> bool:
    return isinstance(value, kind) and not (kind is int and isinstance(value, bool))


def _object(value: Any, where: str, keys: set[str]) -> dict[str, Any]:
    if not isinstance(value, dict) or set(value) != keys:
        raise _fail(where, f"must be an object with exactly {sorted(keys)}")
    return value


def _typed(value: Any, where: str, kind: type) -> Any:
    if not _is(value, kind):
        raise _fail(where, f"must be {kind.__name__}")
    return value


def _tagged(value: Any, where: str) -> Any:
    return _object(value, where, {"t", "v"})


def _check_document(raw: dict[str, Any]) -> dict[str, Any]:
    doc = _object(raw, "document", _DOCUMENT_KEYS)
    identity = doc["workflow"]
    if identity is not None:
        _object(identity, "workflow", {"name", "version"})
        _typed(identity["name"], "workflow.name", str)
        _typed(identity["version"], "workflow.version", int)
    for i, part in enumerate(_typed(doc["graph"], "graph", list)):
        _typed(part, f"graph[{i}]", str)
    _typed(doc["superstep"], "superstep", int)
    for i, message in enumerate(_typed(doc["queue"], "queue", list)):
        _object(message, f"queue[{i}]", {"to", "m"})
        _typed(message["to"], f"queue[{i}].to", str)
        _tagged(message["m"], f"queue[{i}].m")
    for i, request in enumerate(_typed(doc["requests"], "requests", list)):
        _object(request, f"requests[{i}]", {"id", "port", "data"})
        _typed(request["id"], f"requests[{i}].id", str)
        _typed(request["port"], f"requests[{i}].port", str)
        _tagged(request["data"], f"requests[{i}].data")
    for scope, values in _typed(doc["state"], "state", dict).items():
        for key, value in _typed(values, f"state.{scope}", dict).items():
            _tagged(value, f"state.{scope}.{key}")
    for eid, value in _typed(doc["executors"], "executors", dict).items():
        _tagged(value, f"executors.{eid}")
    for rid, answer in _typed(doc["answered"], "answered", dict).items():
        _object(answer, f"answered.{rid}", {"port", "data", "by", "response"})
        _typed(answer["port"], f"answered.{rid}.port", str)
        _typed(answer["by"], f"answered.{rid}.by", str)
        _tagged(answer["data"], f"answered.{rid}.data")
        _tagged(answer["response"], f"answered.{rid}.response")
    for i, output in enumerate(_typed(doc["outputs"], "outputs", list)):
        _tagged(output, f"outputs[{i}]")
    return doc


def graph_difference(saved: tuple[str, ...], current: tuple[str, ...]) -> str:
    """What differs between two graph signatures, in words; empty when they match."""
    removed = sorted(set(saved) - set(current))
    added = sorted(set(current) - set(saved))
    parts = [f"checkpoint has {p!r}, code does not" for p in removed]
    parts += [f"code has {p!r}, checkpoint does not" for p in added]
    return "; ".join(parts)
