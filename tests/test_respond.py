"""Answering a paused session under its lock: refusals write nothing and leave no lock."""

from __future__ import annotations

import pytest

from tests.engine_kit import Answer, Ask, Done, Question, drain, session
from workflow.engine.builder import RequestPort, Workflow, WorkflowBuilder
from workflow.engine.events import OutputEvent, RequestInfoEvent
from workflow.engine.respond import respond_in_session
from workflow.engine.runner import Run, RunStatus
from workflow.errors import (
    CheckpointNotFound,
    RequestAlreadyAnswered,
    SessionBusy,
    UnknownRequest,
)
from workflow.persistence.lock import InMemorySessionLock
from workflow.persistence.memory_store import InMemoryCheckpointStore
from workflow.persistence.registry import TypeRegistry


def workflow() -> Workflow:
    ask, port, done = Ask("ask"), RequestPort("port", Question, Answer), Done("done")
    builder = WorkflowBuilder(start=ask, registry=TypeRegistry(Question, Answer))
    return builder.add_edge(ask, port).add_edge(port, done).with_output_from(done).build()


@pytest.fixture
async def paused() -> tuple[InMemoryCheckpointStore, str]:
    store = InMemoryCheckpointStore()
    run = Run.start(workflow(), "ok?", session(store))
    (request,) = [e for e in await drain(run) if isinstance(e, RequestInfoEvent)]
    return store, request.request_id


def yes(_: object) -> Answer:
    return Answer(ok=True)


async def test_an_answer_resumes_once_and_releases_the_lock(paused) -> None:  # type: ignore[no-untyped-def]
    store, request_id = paused
    lock = InMemorySessionLock()
    answered = await respond_in_session(
        workflow(), session(store), lock, request_id, yes, answered_by="U1"
    )
    assert [e.data for e in answered.events if isinstance(e, OutputEvent)] == ["yes"]
    assert answered.run.status is RunStatus.IDLE
    assert lock.holder("T1", "s1") is None
    with pytest.raises(RequestAlreadyAnswered) as second:
        await respond_in_session(workflow(), session(store), lock, request_id, yes)
    assert second.value.answered_by == "U1"
    assert lock.holder("T1", "s1") is None


async def test_a_held_lock_refuses_and_writes_nothing(paused) -> None:  # type: ignore[no-untyped-def]
    store, request_id = paused
    lock = InMemorySessionLock()
    lock.acquire("T1", "s1", "someone-else", 60)
    with pytest.raises(SessionBusy):
        await respond_in_session(workflow(), session(store), lock, request_id, yes)
    assert len(store.list("T1", "s1")) == 2


@pytest.mark.parametrize(
    ("session_id", "request_id", "error"),
    [("s1", "not-a-request", UnknownRequest), ("nobody", "x", CheckpointNotFound)],
)
async def test_unknown_requests_and_sessions_refuse_and_release(  # type: ignore[no-untyped-def]
    paused, session_id, request_id, error
) -> None:
    store, _ = paused
    lock = InMemorySessionLock()
    with pytest.raises(error):
        await respond_in_session(workflow(), session(store, session_id), lock, request_id, yes)
    assert lock.holder("T1", session_id) is None
    assert len(store.list("T1", "s1")) == 2


async def test_a_refusing_check_writes_nothing_and_releases(paused) -> None:  # type: ignore[no-untyped-def]
    store, request_id = paused
    lock = InMemorySessionLock()

    def only_approvers(run: Run, request: object) -> None:
        raise PermissionError("not an approver")

    with pytest.raises(PermissionError):
        await respond_in_session(
            workflow(), session(store), lock, request_id, yes, check=only_approvers
        )
    assert lock.holder("T1", "s1") is None
    assert len(store.list("T1", "s1")) == 2
