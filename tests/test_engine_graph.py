"""The builder refuses bad graphs at build time; handlers are chosen by message type."""

from __future__ import annotations

import pytest

from tests.engine_kit import Answer, Ask, Done, Echo, Question, Sink
from workflow.engine.builder import RequestPort, WorkflowBuilder
from workflow.errors import GraphError
from workflow.persistence.registry import TypeRegistry


def registry() -> TypeRegistry:
    return TypeRegistry(Question, Answer)


def test_a_valid_graph_builds_with_a_stable_signature() -> None:
    def build() -> tuple[str, ...]:
        ask, port, done = Ask("ask"), RequestPort("port", Question, Answer), Done("done")
        b = WorkflowBuilder(start=ask, registry=registry()).add_edge(ask, port)
        return b.add_edge(port, done).with_output_from(done).build().signature

    assert build() == build()
    assert "port port:Question>Answer" in build()


def test_unknown_ids_are_refused() -> None:
    echo = Echo("echo")
    builder = WorkflowBuilder(start=echo).add_edge_by_id("echo", "nowhere")
    with pytest.raises(GraphError, match="unknown ID 'nowhere'"):
        builder.build()
    with pytest.raises(GraphError, match="output from unknown ID 'ghost'"):
        WorkflowBuilder(start=echo).with_output_from("ghost").build()


def test_duplicate_ids_are_refused() -> None:
    first, second = Echo("same"), Sink("same")
    with pytest.raises(GraphError, match="duplicate ID 'same'"):
        WorkflowBuilder(start=first).add_edge(first, second).build()


def test_an_edge_delivering_a_type_the_target_cannot_handle_is_refused() -> None:
    ask, sink = Ask("ask"), Sink("sink")  # ask sends Question, sink only takes str
    with pytest.raises(GraphError, match="'sink' has no handler for Question"):
        WorkflowBuilder(start=ask, registry=registry()).add_edge(ask, sink).build()


def test_a_port_with_no_outgoing_edge_is_refused() -> None:
    ask, port = Ask("ask"), RequestPort("port", Question, Answer)
    with pytest.raises(GraphError, match="request port 'port' has no outgoing edge"):
        WorkflowBuilder(start=ask, registry=registry()).add_edge(ask, port).build()


def test_a_port_fed_the_wrong_type_is_refused() -> None:
    echo, port, done = Echo("echo"), RequestPort("port", Question, Answer), Done("done")
    builder = WorkflowBuilder(start=echo, registry=registry()).add_edge(echo, port)
    with pytest.raises(GraphError, match="'port' has no handler for str"):
        builder.add_edge(port, done).build()


def test_types_that_would_enter_a_checkpoint_must_be_registered() -> None:
    ask, port, done = Ask("ask"), RequestPort("port", Question, Answer), Done("done")
    builder = WorkflowBuilder(start=ask).add_edge(ask, port).add_edge(port, done)
    with pytest.raises(GraphError, match="not registered"):
        builder.build()


def test_handlers_are_chosen_by_message_type() -> None:
    from tests.engine_kit import Counter

    counter = Counter("c")
    assert set(counter.input_types()) == {str, Answer}
    assert counter.output_types() == (Question,)
