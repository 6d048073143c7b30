"""A deploy that changes the graph, a model or the checkpoint format strands no waiting run.

Graphs have a name and a version (``workflow.engine.versions``): a waiting run resumes on the
version it started on, kept beside the new one, or is carried to the current one by a declared
carry; a removed version is refused with its reason and the run's last state. Models carry a schema
version in their type tag (``workflow.persistence.registry``), upgraded on read; checkpoint
documents carry a format version (``workflow.persistence.checkpoint``), upgraded on read. Whatever
is newer than the code is refused with its own error, and waits for that code.

The weekly shop's own graph change (an executor between ``write-basket`` and the port) runs in a
fresh process against moto's S3 in ``tests/test_deploys.py``.
"""

from __future__ import annotations

import dataclasses
import json
from typing import Any

import pytest

from tests import toy_next_deploy as next_deploy
from tests.engine_kit import Answer, Ask, Done, Question, drain, session
from workflow.engine.builder import RequestPort, Workflow, WorkflowBuilder
from workflow.engine.events import OutputEvent, RequestInfoEvent
from workflow.engine.executor import Executor, WorkflowContext, handler
from workflow.engine.runner import Run
from workflow.engine.versions import WorkflowVersions
from workflow.errors import (
    CheckpointCorrupt,
    CheckpointFromNewerVersion,
    IncompatibleCheckpoint,
    WorkflowVersionRemoved,
)
from workflow.persistence.checkpoint import WorkflowId, decode_snapshot, encode_snapshot
from workflow.persistence.memory_store import InMemoryCheckpointStore
from workflow.persistence.registry import TypeRegistry

NAME = "toy"


class Polish(Executor):
    """v2's new step between the asking executor and the port."""

    @handler
    async def polish(self, question: Question, ctx: WorkflowContext) -> Question:
        return Question(text=f"{question.text}, polished")


def graph_v1() -> Workflow:
    ask, port, done = Ask("ask"), RequestPort("port", Question, Answer), Done("done")
    builder = WorkflowBuilder(
        start=ask, registry=TypeRegistry(Question, Answer), name=NAME, version=1
    )
    return builder.add_edge(ask, port).add_edge(port, done).with_output_from(done).build()


def graph_v2() -> Workflow:
    ask, polish = Ask("ask"), Polish("polish")
    port, done = RequestPort("port", Question, Answer), Done("done")
    builder = WorkflowBuilder(
        start=ask, registry=TypeRegistry(Question, Answer), name=NAME, version=2
    )
    builder.add_edge(ask, polish).add_edge(polish, port).add_edge(port, done)
    return builder.with_output_from(done).build()


def only_v1() -> WorkflowVersions:
    versions = WorkflowVersions(NAME)
    versions.add(1, graph_v1)
    return versions


async def waiting_on_v1(store: InMemoryCheckpointStore) -> RequestInfoEvent:
    run = Run.start(only_v1(), "week", session(store))
    (request,) = [e for e in await drain(run) if isinstance(e, RequestInfoEvent)]
    return request


def latest_doc(store: InMemoryCheckpointStore) -> dict[str, Any]:
    doc: dict[str, Any] = json.loads(store.latest("T1", "s1").state)
    return doc


async def answer(versions: WorkflowVersions, store: InMemoryCheckpointStore, rid: str) -> Run:
    run = await Run.resume(versions, session(store))
    assert run is not None
    run.respond(rid, Answer(ok=True))
    events = await drain(run)
    assert [e.data for e in events if isinstance(e, OutputEvent)] == ["yes"]
    return run


async def test_a_run_that_started_on_v1_finishes_on_the_kept_v1_graph_after_v2_ships() -> None:
    store = InMemoryCheckpointStore()
    request = await waiting_on_v1(store)
    assert latest_doc(store)["workflow"] == {"name": NAME, "version": 1}
    versions = only_v1()
    versions.add(2, graph_v2)  # no carry: v1 runs finish on v1

    run = await answer(versions, store, request.request_id)

    assert run.workflow.identity == WorkflowId(NAME, 1)
    assert latest_doc(store)["workflow"] == {"name": NAME, "version": 1}
    new = Run.start(versions, "next week", session(store, "s2"))  # new runs start on v2
    (asked,) = [e for e in await drain(new) if isinstance(e, RequestInfoEvent)]
    assert asked.data.text == "next week, polished"


async def test_a_declared_carry_moves_a_waiting_run_to_the_current_graph() -> None:
    store = InMemoryCheckpointStore()
    request = await waiting_on_v1(store)
    carried: list[str] = []

    def v1_to_v2(snapshot: Any) -> Any:
        # The pending request sits at "port", which v2 has too: nothing to move but the note.
        carried.append(snapshot.workflow and str(snapshot.workflow))
        return snapshot

    versions = only_v1()
    versions.add(2, graph_v2, carry=v1_to_v2)

    run = await answer(versions, store, request.request_id)

    assert carried == ["toy v1"]
    assert run.workflow.identity == WorkflowId(NAME, 2)
    doc = latest_doc(store)
    assert doc["workflow"] == {"name": NAME, "version": 2}
    assert "executor polish:Polish" in doc["graph"]


async def test_a_removed_version_is_refused_with_its_reason_and_the_runs_last_state() -> None:
    store = InMemoryCheckpointStore()
    request = await waiting_on_v1(store)
    before = latest_doc(store)
    versions = WorkflowVersions(NAME)
    versions.add(2, graph_v2)
    versions.remove(1, reason="v1 asked before polishing")

    with pytest.raises(WorkflowVersionRemoved, match="toy v1 was removed: v1 asked") as caught:
        await Run.resume(versions, session(store))

    assert caught.value.workflow == WorkflowId(NAME, 1)
    assert list(caught.value.snapshot.requests) == [request.request_id]  # for a Start again
    assert latest_doc(store) == before  # nothing written


async def test_a_version_neither_kept_nor_removed_is_a_mistake_refused_loudly() -> None:
    store = InMemoryCheckpointStore()
    await waiting_on_v1(store)
    versions = WorkflowVersions(NAME)
    versions.add(2, graph_v2)

    with pytest.raises(IncompatibleCheckpoint, match="toy v1 is neither kept nor removed"):
        await Run.resume(versions, session(store))


async def test_a_checkpoint_from_a_newer_graph_version_waits_for_that_version() -> None:
    store = InMemoryCheckpointStore()
    versions = only_v1()
    versions.add(2, graph_v2)
    run = Run.start(versions, "week", session(store))
    await drain(run)  # waiting on v2; now a rollback to code that knows only v1

    with pytest.raises(CheckpointFromNewerVersion, match="toy v2, newer than this code's v1"):
        await Run.resume(only_v1(), session(store))


async def test_a_carry_chain_needs_every_step_else_the_run_stays_on_its_version() -> None:
    store = InMemoryCheckpointStore()
    request = await waiting_on_v1(store)
    versions = only_v1()
    versions.add(2, graph_v2)  # no carry from v1
    versions.add(3, lambda: _renumbered(graph_v2(), 3), carry=lambda s: s)

    run = await answer(versions, store, request.request_id)

    assert run.workflow.identity == WorkflowId(NAME, 1)


async def test_each_carry_in_a_chain_sees_the_version_the_one_before_it_carried_to() -> None:
    store = InMemoryCheckpointStore()
    request = await waiting_on_v1(store)
    seen: list[str] = []

    def noting(snapshot: Any) -> Any:
        seen.append(f"{snapshot.workflow} {'executor polish:Polish' in snapshot.graph}")
        return snapshot

    versions = only_v1()
    versions.add(2, graph_v2, carry=noting)
    versions.add(3, lambda: _renumbered(graph_v2(), 3), carry=noting)

    run = await answer(versions, store, request.request_id)

    assert seen == ["toy v1 False", "toy v2 True"]
    assert run.workflow.identity == WorkflowId(NAME, 3)


def graph_renamed_port() -> Workflow:
    """v2 whose port has a new ID: a run waiting at v1's "port" has nowhere to be answered."""
    ask, port, done = Ask("ask"), RequestPort("confirm", Question, Answer), Done("done")
    builder = WorkflowBuilder(
        start=ask, registry=TypeRegistry(Question, Answer), name=NAME, version=2
    )
    return builder.add_edge(ask, port).add_edge(port, done).with_output_from(done).build()


async def test_a_carry_that_leaves_a_request_on_a_port_the_new_graph_lacks_is_refused() -> None:
    store = InMemoryCheckpointStore()
    await waiting_on_v1(store)
    before = latest_doc(store)
    versions = only_v1()
    versions.add(2, graph_renamed_port, carry=lambda s: s)  # forgot to move the request

    with pytest.raises(
        IncompatibleCheckpoint, match="toy v2, the run still needs request port 'port'"
    ):
        await Run.resume(versions, session(store))
    assert latest_doc(store) == before


def _renumbered(workflow: Workflow, version: int) -> Workflow:
    return dataclasses.replace(workflow, identity=WorkflowId(NAME, version))


def test_declaring_versions_wrongly_fails_when_the_app_is_built() -> None:
    versions = only_v1()
    with pytest.raises(ValueError, match="declared twice"):
        versions.add(1, graph_v1)
    with pytest.raises(ValueError, match="needs a reason"):
        versions.remove(1, reason="")
    versions.add(3, graph_v2)  # builds v2, says it is v3
    with pytest.raises(ValueError, match="version 3 of 'toy' builds toy v2"):
        versions.current()


def format_1_text(store: InMemoryCheckpointStore) -> str:
    """The latest checkpoint as format 1 wrote it: no workflow field, tags without versions."""
    doc = latest_doc(store)
    format_1 = {k: v for k, v in doc.items() if k != "workflow"} | {"format": 1}
    format_1["requests"][0]["data"]["t"] = "Question"
    return json.dumps(format_1)


async def test_a_format_1_checkpoint_is_placed_on_version_1() -> None:
    """Format 1 predates graph versions: only version 1 wrote it."""
    store = InMemoryCheckpointStore()
    await waiting_on_v1(store)

    versions = only_v1()
    versions.add(2, graph_v2)
    snapshot = decode_snapshot(format_1_text(store), versions.current().registry)
    workflow, placed = versions.resolve(snapshot)

    assert snapshot.workflow is None
    assert workflow.identity == WorkflowId(NAME, 1)
    assert json.loads(encode_snapshot(placed, workflow.registry))["format"] == 2  # written back


async def test_a_format_1_checkpoint_of_a_removed_v1_is_refused_even_if_v2_looks_the_same() -> None:
    """A later graph with the same shape does not adopt version 1's runs: they were removed."""
    store = InMemoryCheckpointStore()
    await waiting_on_v1(store)
    versions = WorkflowVersions(NAME)
    versions.add(2, lambda: _renumbered(graph_v1(), 2))
    versions.remove(1, reason="v1 is retired")
    assert versions.current().signature == graph_v1().signature

    snapshot = decode_snapshot(format_1_text(store), versions.current().registry)
    with pytest.raises(WorkflowVersionRemoved, match="v1 is retired"):
        versions.resolve(snapshot)


@pytest.mark.parametrize(
    ("change", "refused"),
    [
        ({"format": 3}, CheckpointFromNewerVersion),  # a newer format: wait for it
        ({"format": 0}, IncompatibleCheckpoint),  # a format no deployed code wrote
        ({"format": 1, "workflow": None}, CheckpointCorrupt),  # format 1 had no such field
        ({"format": "2"}, CheckpointCorrupt),
    ],
)
async def test_a_format_this_code_never_wrote_is_refused_with_its_own_error(
    change: dict[str, Any], refused: type[Exception]
) -> None:
    store = InMemoryCheckpointStore()
    await waiting_on_v1(store)
    doc = latest_doc(store) | change
    with pytest.raises(refused):
        decode_snapshot(json.dumps(doc), graph_v1().registry)


# -- payload versions ----------------------------------------------------------------------


@pytest.mark.parametrize("tag", ["Question@1", "Question"])  # "Question": written by format 1
def test_a_model_changed_in_a_deploy_reads_its_older_values_through_the_upgrade(tag: str) -> None:
    value = next_deploy.registry().decode({"t": tag, "v": {"text": "week"}})
    assert value == next_deploy.Question(text="week", asked_by="")
    assert next_deploy.registry().encode(value)["t"] == "Question@2"


def test_a_value_of_a_newer_model_version_is_refused_and_waits() -> None:
    with pytest.raises(CheckpointFromNewerVersion, match="Question@2 is newer than"):
        TypeRegistry(Question).decode({"t": "Question@2", "v": {"text": "w", "asked_by": "U"}})


def test_an_upgrade_on_a_malformed_old_value_is_corrupt_not_a_crash() -> None:
    with pytest.raises(CheckpointCorrupt, match="Question@1 could not be upgraded"):
        next_deploy.registry().decode({"t": "Question@1", "v": {"words": "week"}})


def test_a_new_model_version_without_an_upgrade_from_each_older_one_is_refused() -> None:
    with pytest.raises(ValueError, match="Question@3 has no upgrade from version 2"):
        TypeRegistry().register(
            next_deploy.Question, version=3, upgrades={1: next_deploy.question_1_to_2}
        )


async def test_a_run_resumed_after_a_model_change_writes_the_new_version_back() -> None:
    store = InMemoryCheckpointStore()
    await waiting_on_v1(store)
    versions = WorkflowVersions(NAME)
    versions.add(1, lambda: next_deploy.graph_v1(NAME))

    run = await Run.resume(versions, session(store))

    assert run is not None
    (request,) = run.pending_requests.values()
    assert (request.data.text, request.data.asked_by) == ("week", "")
    run.respond(request.request_id, Answer(ok=False))
    await drain(run)
    assert latest_doc(store)["answered"][request.request_id]["data"]["t"] == "Question@2"
