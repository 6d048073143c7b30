"""Supersteps, statuses, shared state, events, failures and request/response."""

from __future__ import annotations

import asyncio
import json

import pytest

from tests.engine_kit import (
    Answer,
    Ask,
    Boom,
    Done,
    Echo,
    Loop,
    Note,
    Question,
    Rendezvous,
    Sink,
    drain,
    session,
)
from workflow.engine.builder import RequestPort, WorkflowBuilder
from workflow.engine.events import (
    CheckpointSaved,
    ExecutorCompleted,
    ExecutorFailedEvent,
    ExecutorInvoked,
    OutputEvent,
    RequestInfoEvent,
    SuperstepCompleted,
    SuperstepStarted,
    WorkflowErrorEvent,
)
from workflow.engine.executor import Executor, WorkflowContext, handler
from workflow.engine.runner import Run, RunStatus
from workflow.errors import (
    ExecutorFailed,
    ResponseTypeMismatch,
    StoreError,
    SuperstepLimitExceeded,
    UnknownRequest,
)
from workflow.persistence.memory_store import InMemoryCheckpointStore
from workflow.persistence.registry import TypeRegistry


def ask_workflow() -> object:
    ask, port, done = Ask("ask"), RequestPort("port", Question, Answer), Done("done")
    builder = WorkflowBuilder(start=ask, registry=TypeRegistry(Question, Answer))
    return builder.add_edge(ask, port).add_edge(port, done).with_output_from(done).build()


async def test_messages_sent_in_one_superstep_are_delivered_in_the_next() -> None:
    a, b, sink = Echo("a"), Echo("b"), Sink("sink")
    wf = WorkflowBuilder(start=a).add_edge(a, b).add_edge(b, sink).with_output_from(sink).build()
    run = Run.start(wf, "hi")
    events = await drain(run)
    steps: dict[str, int] = {}
    current = 0
    for event in events:
        if isinstance(event, SuperstepStarted):
            current = event.superstep
        elif isinstance(event, ExecutorInvoked):
            steps[event.executor_id] = current
    assert steps == {"a": 1, "b": 2, "sink": 3}
    assert [e.data for e in events if isinstance(e, OutputEvent)] == ["sink got hi"]
    assert run.status is RunStatus.IDLE
    kinds = [type(e) for e in events[:5]]
    assert kinds == [SuperstepStarted, ExecutorInvoked, Note, ExecutorCompleted, SuperstepCompleted]


async def test_executors_of_one_superstep_run_concurrently() -> None:
    first, second = asyncio.Event(), asyncio.Event()
    start, left, right = (
        Echo("start"),
        Rendezvous("l", first, second),
        Rendezvous("r", second, first),
    )
    builder = WorkflowBuilder(start=start).add_edge(start, left).add_edge(start, right)
    run = Run.start(builder.with_output_from(left, right).build(), "go")
    outputs = {e.data for e in await drain(run) if isinstance(e, OutputEvent)}
    assert outputs == {"l", "r"}


async def test_conditional_edges_route_by_message() -> None:
    start, yes, no = Echo("start"), Sink("yes"), Sink("no")
    builder = WorkflowBuilder(start=start).add_edge(start, yes, condition=lambda m: m == "y")
    wf = builder.add_edge(start, no, condition=lambda m: m != "y").with_output_from(yes, no).build()
    assert [e.data for e in await drain(Run.start(wf, "y")) if isinstance(e, OutputEvent)] == [
        "yes got y"
    ]
    assert [e.data for e in await drain(Run.start(wf, "n")) if isinstance(e, OutputEvent)] == [
        "no got n"
    ]


async def test_a_runaway_loop_is_stopped_with_a_typed_error() -> None:
    loop = Loop("loop")
    wf = WorkflowBuilder(start=loop).add_edge(loop, loop).build()
    run = Run.start(wf, "again", max_supersteps=7)
    events = await drain(run)
    errors = [e.error for e in events if isinstance(e, WorkflowErrorEvent)]
    assert len(errors) == 1 and isinstance(errors[0], SuperstepLimitExceeded)
    assert run.status is RunStatus.FAILED
    assert run.superstep == 7


async def test_a_failed_executor_fails_the_run_and_raises_no_request() -> None:
    boom, port, done = Boom("boom"), RequestPort("port", str, Answer), Done("done")
    builder = WorkflowBuilder(start=boom, registry=TypeRegistry(Answer)).add_edge(boom, port)
    wf = builder.add_edge(port, done).build()
    run = Run.start(wf, "x")
    events = await drain(run)
    failed = [e for e in events if isinstance(e, ExecutorFailedEvent)]
    errors = [e for e in events if isinstance(e, WorkflowErrorEvent)]
    assert [f.executor_id for f in failed] == ["boom"]
    assert str(failed[0].error) == "boom"
    assert len(errors) == 1 and isinstance(errors[0].error, ExecutorFailed)
    assert not [e for e in events if isinstance(e, RequestInfoEvent)]
    assert run.status is RunStatus.FAILED and run.pending_requests == {}


class Writer(Executor):
    @handler
    async def write(self, message: str, ctx: WorkflowContext) -> str:
        ctx.queue_state_update("k", "shared", scope="s")
        ctx.queue_state_update("mine", "private")
        ctx.add_event(Note(f"writer reads {ctx.read_state('k', scope='s')}"))
        return message


class Reader(Executor):
    @handler
    async def read(self, message: str, ctx: WorkflowContext) -> None:
        seen = (ctx.read_state("k", scope="s"), ctx.read_state("mine"), ctx.read_state("nope", "s"))
        ctx.add_event(Note(f"{self.id} sees {seen}"))


async def test_state_updates_are_visible_to_the_writer_at_once_and_to_others_next_step() -> None:
    start, writer, same_step, next_step = Echo("start"), Writer("w"), Reader("r1"), Reader("r2")
    builder = WorkflowBuilder(start=start).add_edge(start, writer).add_edge(start, same_step)
    wf = builder.add_edge(writer, next_step).build()
    notes = [e.text for e in await drain(Run.start(wf, "go")) if isinstance(e, Note)]
    assert "writer reads shared" in notes
    assert "r1 sees (None, None, None)" in notes
    assert "r2 sees ('shared', None, None)" in notes  # the private scope stays private


async def test_a_request_is_answered_by_id_and_type_checked() -> None:
    run = Run.start(ask_workflow(), "ok?")
    events = await drain(run)
    (request,) = [e for e in events if isinstance(e, RequestInfoEvent)]
    assert request.data == Question(text="ok?")
    assert run.status is RunStatus.PENDING_REQUESTS

    with pytest.raises(ResponseTypeMismatch, match="expects Answer, got str"):
        run.respond(request.request_id, "yes")
    with pytest.raises(UnknownRequest):
        run.respond("no-such-request", Answer(ok=True))
    assert run.status is RunStatus.PENDING_REQUESTS  # nothing moved
    assert list(run.pending_requests) == [request.request_id]

    run.respond(request.request_id, Answer(ok=True))
    with pytest.raises(UnknownRequest):  # already answered
        run.respond(request.request_id, Answer(ok=False))
    outputs = [e.data for e in await drain(run) if isinstance(e, OutputEvent)]
    assert outputs == ["yes"]
    assert run.status is RunStatus.IDLE


async def test_a_checkpoint_is_saved_at_the_end_of_every_superstep() -> None:
    store = InMemoryCheckpointStore()
    run = Run.start(ask_workflow(), "ok?", session(store))
    events = await drain(run)
    saved = [e for e in events if isinstance(e, CheckpointSaved)]
    assert [s.superstep for s in saved] == [1, 2]
    assert [i.checkpoint_id for i in store.list("T1", "s1")] == [s.checkpoint_id for s in saved]


async def test_a_request_is_announced_only_once_the_checkpoint_holding_it_is_written() -> None:
    """A caller that stops watching the moment it sees a request (a Lambda answering Slack) must
    still leave that request in the latest checkpoint: look in the store at that moment."""
    store = InMemoryCheckpointStore()
    run = Run.start(ask_workflow(), "ok?", session(store))
    seen = []
    async for event in run.watch():
        if isinstance(event, RequestInfoEvent):
            latest = store.latest("T1", "s1")
            assert latest is not None, "a request was announced before any checkpoint was saved"
            pending = [r["id"] for r in json.loads(latest.state)["requests"]]
            assert event.request_id in pending, "announced before its checkpoint was saved"
            seen.append(event.request_id)
    assert len(seen) == 1


class FailingStore(InMemoryCheckpointStore):
    def create(self, record):  # type: ignore[no-untyped-def]
        raise StoreError("S3 put checkpoint failed: SlowDown")


async def test_a_failed_save_fails_the_run() -> None:
    run = Run.start(ask_workflow(), "ok?", session(FailingStore()))
    events = await drain(run)
    errors = [e.error for e in events if isinstance(e, WorkflowErrorEvent)]
    assert len(errors) == 1 and "SlowDown" in str(errors[0])
    assert run.status is RunStatus.FAILED
    assert not [e for e in events if isinstance(e, RequestInfoEvent)]


async def test_a_first_run_that_fails_before_asking_leaves_no_waiting_session() -> None:
    store = InMemoryCheckpointStore()
    start, boom = Echo("start"), Boom("boom")
    wf = WorkflowBuilder(start=start).add_edge(start, boom).build()
    run = Run.start(wf, "x", session(store))
    await drain(run)  # superstep 1 saved a checkpoint, superstep 2 failed
    assert run.status is RunStatus.FAILED
    assert store.latest("T1", "s1") is None
    assert await Run.resume(wf, session(store)) is None  # so the next start begins afresh
