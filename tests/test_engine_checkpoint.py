"""What a checkpoint holds, and resuming from one with nothing else in memory."""

from __future__ import annotations

import dataclasses
import json

import pytest

from tests.engine_kit import SIGNER, Answer, Count, Counter, Done, Question, drain, session
from workflow.engine.builder import RequestPort, Workflow, WorkflowBuilder
from workflow.engine.events import ExecutorInvoked, OutputEvent, RequestInfoEvent
from workflow.engine.runner import Run, RunStatus
from workflow.errors import (
    CheckpointCorrupt,
    CheckpointFromNewerVersion,
    CheckpointTampered,
    IncompatibleCheckpoint,
)
from workflow.persistence.checkpoint import FORMAT_VERSION
from workflow.persistence.memory_store import InMemoryCheckpointStore
from workflow.persistence.registry import TypeRegistry
from workflow.persistence.signing import CheckpointSigner


def counter_workflow(done_id: str = "done", extra_port: bool = False) -> Workflow:
    counter, port, done = Counter("counter"), RequestPort("port", Question, Answer), Done(done_id)
    builder = WorkflowBuilder(start=counter, registry=TypeRegistry(Question, Answer, Count))
    builder.add_edge(counter, port).add_edge(port, done)
    if extra_port:
        builder.add_edge(counter, RequestPort("audit", Question, Answer))
        builder.add_edge_by_id("audit", done_id)
    return builder.with_output_from(done).build()


async def pending(store: InMemoryCheckpointStore) -> RequestInfoEvent:
    run = Run.start(counter_workflow(), "week", session(store))
    (request,) = [e for e in await drain(run) if isinstance(e, RequestInfoEvent)]
    return request


async def test_the_latest_checkpoint_holds_everything_a_run_needs() -> None:
    store = InMemoryCheckpointStore()
    request = await pending(store)
    doc = json.loads(store.latest("T1", "s1").state)
    assert doc["format"] == FORMAT_VERSION
    assert doc["workflow"] is None  # a graph built without a name records none
    assert doc["superstep"] == 2
    assert "executor counter:Counter" in doc["graph"]
    assert doc["queue"] == []
    assert doc["requests"] == [
        {
            "id": request.request_id,
            "port": "port",
            "data": {"t": "Question@1", "v": {"text": "week#1"}},  # tags carry schema versions
        }
    ]
    assert doc["executors"] == {"counter": {"t": "Count@1", "v": {"n": 1}}}


async def test_resume_reraises_the_same_request_without_running_its_executor_again() -> None:
    store = InMemoryCheckpointStore()
    request = await pending(store)
    workflow = counter_workflow()  # new executor objects: the count starts at 0
    resumed = await Run.resume(workflow, session(store))
    assert resumed is not None
    assert workflow.nodes["counter"].count == 1  # type: ignore[union-attr]  # restored by hook
    events = await drain(resumed)
    assert [e for e in events if isinstance(e, ExecutorInvoked)] == []
    (again,) = [e for e in events if isinstance(e, RequestInfoEvent)]
    assert (again.request_id, again.data) == (request.request_id, request.data)
    resumed.respond(again.request_id, Answer(ok=True))
    outputs = [e.data for e in await drain(resumed) if isinstance(e, OutputEvent)]
    assert outputs == ["yes"]
    assert resumed.status is RunStatus.IDLE


async def test_lineage_survives_resume() -> None:
    store = InMemoryCheckpointStore()
    await pending(store)
    resumed_from = store.latest("T1", "s1")
    resumed = await Run.resume(counter_workflow(), session(store))
    (request,) = [e for e in await drain(resumed) if isinstance(e, RequestInfoEvent)]
    resumed.respond(request.request_id, Answer(ok=False))
    await drain(resumed)
    history = store.list("T1", "s1")
    assert history[2].parent_checkpoint_id == resumed_from.checkpoint_id
    assert history[2].run_id != resumed_from.run_id
    assert [i.checkpoint_id for i in store.list_by_run("T1", history[2].run_id)] == [
        history[2].checkpoint_id
    ]


@pytest.mark.parametrize(
    ("changed", "says"),
    [
        (lambda: counter_workflow(done_id="finish"), "executor done:Done"),
        (lambda: counter_workflow(extra_port=True), "port audit:Question>Answer"),
    ],
)
async def test_a_changed_graph_is_refused_saying_what_differs(changed, says) -> None:  # type: ignore[no-untyped-def]
    store = InMemoryCheckpointStore()
    await pending(store)
    with pytest.raises(IncompatibleCheckpoint, match=says):
        await Run.resume(changed(), session(store))


def resign(store: InMemoryCheckpointStore, edit, signer: CheckpointSigner = SIGNER) -> str:  # type: ignore[no-untyped-def]
    """Replace the latest checkpoint with an edited state, signed by ``signer``."""
    latest = store.latest("T1", "s1")
    state = edit(json.loads(latest.state))
    record = dataclasses.replace(latest, state=json.dumps(state), signature="")
    record = dataclasses.replace(record, signature=signer.sign(record))
    store._sessions[("T1", "s1")][-1] = record
    return latest.checkpoint_id


def retag(doc: dict) -> dict:  # type: ignore[type-arg]
    doc["requests"][0]["data"]["t"] = "os.system"
    return doc


def future(doc: dict) -> dict:  # type: ignore[type-arg]
    doc["format"] = FORMAT_VERSION + 1
    return doc


async def test_an_unknown_type_tag_is_an_error_that_names_it() -> None:
    store = InMemoryCheckpointStore()
    await pending(store)
    resign(store, retag)
    with pytest.raises(CheckpointCorrupt, match="unknown type tag 'os.system'"):
        await Run.resume(counter_workflow(), session(store))


async def test_a_future_format_version_is_incompatible() -> None:
    store = InMemoryCheckpointStore()
    await pending(store)
    resign(store, future)
    with pytest.raises(CheckpointFromNewerVersion, match=f"format {FORMAT_VERSION + 1} is newer"):
        await Run.resume(counter_workflow(), session(store))


async def test_an_edited_checkpoint_is_refused_naming_it() -> None:
    store = InMemoryCheckpointStore()
    await pending(store)

    def edit(doc: dict) -> dict:  # type: ignore[type-arg]
        doc["requests"][0]["data"]["v"]["text"] = "50 bottles of champagne"
        return doc

    stranger = CheckpointSigner(b"somebody-elses-key-0123")
    checkpoint_id = resign(store, edit, signer=stranger)
    with pytest.raises(CheckpointTampered, match=checkpoint_id):
        await Run.resume(counter_workflow(), session(store))


async def test_a_failure_after_a_response_keeps_the_request_pending() -> None:
    store = InMemoryCheckpointStore()
    request = await pending(store)
    wf = counter_workflow()
    resumed = await Run.resume(wf, session(store))
    await drain(resumed)
    done = wf.nodes["done"]

    async def broken(answer, ctx):  # type: ignore[no-untyped-def]
        raise RuntimeError("order service down")

    done.done = broken  # type: ignore[method-assign,union-attr]
    resumed.respond(request.request_id, Answer(ok=True))
    await drain(resumed)
    assert resumed.status is RunStatus.FAILED
    again = await Run.resume(counter_workflow(), session(store))  # the request is still pending
    assert list(again.pending_requests) == [request.request_id]


async def test_an_answered_request_is_remembered_with_who_answered_it() -> None:
    from workflow.errors import RequestAlreadyAnswered

    store = InMemoryCheckpointStore()
    request = await pending(store)
    resumed = await Run.resume(counter_workflow(), session(store))
    resumed.respond(request.request_id, Answer(ok=True), answered_by="U0BOB")
    await drain(resumed)
    again = await Run.resume(counter_workflow(), session(store))
    (answer,) = again.answered.values()
    assert (answer.request_id, answer.by, answer.response) == (
        request.request_id,
        "U0BOB",
        Answer(ok=True),
    )
    assert again.outputs == ["yes"]
    with pytest.raises(RequestAlreadyAnswered) as caught:
        again.respond(request.request_id, Answer(ok=False))
    assert caught.value.answered_by == "U0BOB"
    assert store.latest("T1", "s1").sequence == 2  # nothing was written by the refusal
