"""Building a workflow graph: executors, request ports and edges, checked before anything runs.

    builder = WorkflowBuilder(start=write_basket)
    builder.add_edge(write_basket, approve_basket)
    builder.add_edge(approve_basket, write_basket, condition=wants_another_basket)
    builder.add_edge(approve_basket, place_order, condition=is_final)
    workflow = builder.with_output_from(place_order).build()

``build`` raises :class:`GraphError` for unknown or duplicate IDs, an edge that can deliver a type
its target has no handler for, and a request port with no outgoing edge.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, Generic, TypeVar

from workflow.errors import GraphError
from workflow.persistence.checkpoint import WorkflowId
from workflow.persistence.registry import TypeRegistry

from .executor import Executor

Req = TypeVar("Req")
Resp = TypeVar("Resp")


@dataclass(frozen=True)
class RequestPort(Generic[Req, Resp]):
    """A step that sends its input out of the workflow as a request and passes the answer on."""

    id: str
    request_type: type[Req]
    response_type: type[Resp]

    @property
    def signature(self) -> str:
        return f"port {self.id}:{self.request_type.__name__}>{self.response_type.__name__}"


Node = Executor | RequestPort[Any, Any]
Condition = Callable[[Any], bool]


def only(*types: type[Any]) -> Condition:
    """A condition that passes messages of ``types`` alone. The builder checks only those
    types against the edge's target, so an executor that sends two types (a basket to the port,
    what is left to do to itself) can have an edge for each."""

    def condition(message: Any) -> bool:
        return isinstance(message, types)

    condition.__name__ = "is_" + "_or_".join(t.__name__ for t in types)
    condition.passes = types  # type: ignore[attr-defined]
    return condition


@dataclass(frozen=True)
class Edge:
    source: str
    target: str
    condition: Condition | None = None

    @property
    def signature(self) -> str:
        cond = "" if self.condition is None else f"?{getattr(self.condition, '__name__', 'if')}"
        return f"edge {self.source}>{self.target}{cond}"


def _accepts(node: Node, tp: type[Any]) -> bool:
    if isinstance(node, RequestPort):
        return issubclass(tp, node.request_type)
    return any(issubclass(tp, t) for t in node.input_types())


def _emits(node: Node) -> tuple[type[Any], ...]:
    if isinstance(node, RequestPort):
        return (node.response_type,)
    return node.output_types()


@dataclass(frozen=True)
class Workflow:
    """A checked, immutable graph. Build it from code in every process that runs or resumes it."""

    nodes: dict[str, Node]
    edges: tuple[Edge, ...]
    start_id: str
    output_ids: frozenset[str]
    registry: TypeRegistry
    identity: WorkflowId | None = None  # name and version, recorded in every checkpoint
    signature: tuple[str, ...] = field(init=False)

    def __post_init__(self) -> None:
        parts = [f"start {self.start_id}"]
        parts += [f"output {i}" for i in sorted(self.output_ids)]
        for node in self.nodes.values():
            if isinstance(node, RequestPort):
                parts.append(node.signature)
            else:
                parts.append(f"executor {node.id}:{node.type_name}")
        parts += [e.signature for e in self.edges]
        object.__setattr__(self, "signature", tuple(sorted(parts)))

    def executors(self) -> list[Executor]:
        return [n for n in self.nodes.values() if isinstance(n, Executor)]

    def port(self, port_id: str) -> RequestPort[Any, Any]:
        """The request port ``port_id``; GraphError if the graph has no port of that ID."""
        node = self.nodes.get(port_id)
        if not isinstance(node, RequestPort):
            raise GraphError(f"no request port {port_id!r} in this graph")
        return node

    def edges_from(self, source_id: str) -> list[Edge]:
        return [e for e in self.edges if e.source == source_id]


class WorkflowBuilder:
    """Collects nodes and edges; :meth:`build` checks them and returns a :class:`Workflow`."""

    def __init__(
        self,
        start: Node,
        registry: TypeRegistry | None = None,
        *,
        name: str = "",
        version: int = 1,
    ) -> None:
        """``name`` and ``version`` identify the graph in its checkpoints (workflow.engine.versions
        keeps the versions an app can still resume); a nameless graph records none."""
        self._identity = WorkflowId(name, version) if name else None
        self._nodes: dict[str, Node] = {}
        self._edges: list[Edge] = []
        self._outputs: set[str] = set()
        self._errors: list[str] = []
        self._registry = registry or TypeRegistry()
        self._add_node(start)
        self._start_id = start.id

    def _add_node(self, node: Node) -> None:
        known = self._nodes.get(node.id)
        if known is None:
            self._nodes[node.id] = node
        elif known is not node:
            self._errors.append(f"duplicate ID {node.id!r}")

    def add_edge(
        self, source: Node, target: Node, condition: Condition | None = None
    ) -> WorkflowBuilder:
        self._add_node(source)
        self._add_node(target)
        self._edges.append(Edge(source.id, target.id, condition))
        return self

    def add_edge_by_id(
        self, source_id: str, target_id: str, condition: Condition | None = None
    ) -> WorkflowBuilder:
        """Add an edge between nodes already added; unknown IDs are reported by :meth:`build`."""
        self._edges.append(Edge(source_id, target_id, condition))
        return self

    def with_output_from(self, *nodes: Node | str) -> WorkflowBuilder:
        for node in nodes:
            self._outputs.add(node if isinstance(node, str) else node.id)
        return self

    def build(self) -> Workflow:
        errors = list(self._errors)
        for edge in self._edges:
            for end in (edge.source, edge.target):
                if end not in self._nodes:
                    errors.append(f"edge {edge.source}>{edge.target} names unknown ID {end!r}")
        errors += [
            f"output from unknown ID {i!r}" for i in sorted(self._outputs - set(self._nodes))
        ]
        if not errors:
            errors += self._type_errors()
        if errors:
            raise GraphError("invalid workflow graph: " + "; ".join(errors))
        return Workflow(
            nodes=dict(self._nodes),
            edges=tuple(self._edges),
            start_id=self._start_id,
            output_ids=frozenset(self._outputs),
            registry=self._registry,
            identity=self._identity,
        )

    def _type_errors(self) -> list[str]:
        errors: list[str] = []
        for edge in self._edges:
            source, target = self._nodes[edge.source], self._nodes[edge.target]
            passes = getattr(edge.condition, "passes", None)  # only(...): those types alone
            for tp in _emits(source):
                if passes is not None and not issubclass(tp, passes):
                    continue
                if not _accepts(target, tp):
                    errors.append(
                        f"{target.id!r} has no handler for {tp.__name__}, "
                        f"which edge {edge.source}>{edge.target} can deliver"
                    )
        for node in self._nodes.values():
            if isinstance(node, RequestPort) and not any(e.source == node.id for e in self._edges):
                errors.append(f"request port {node.id!r} has no outgoing edge")
            for tp in (*_emits(node), *_port_types(node)):
                if not self._registry.knows(tp):
                    errors.append(f"type {tp.__name__} used by {node.id!r} is not registered")
        return errors


def _port_types(node: Node) -> tuple[type[Any], ...]:
    return (node.request_type,) if isinstance(node, RequestPort) else ()
