"""Small executors and helpers for engine tests (not the shop: the shop has its own tests)."""

from __future__ import annotations

import asyncio
from dataclasses import dataclass
from typing import Any

from pydantic import BaseModel

from workflow.engine.events import WorkflowEvent
from workflow.engine.executor import Executor, WorkflowContext, handler
from workflow.engine.runner import Run
from workflow.persistence.memory_store import InMemoryCheckpointStore
from workflow.persistence.session import SessionCheckpoints
from workflow.persistence.signing import CheckpointSigner

SIGNER = CheckpointSigner(b"engine-test-key-0123456789")


class Question(BaseModel):
    text: str


class Answer(BaseModel):
    ok: bool


class Count(BaseModel):
    n: int


@dataclass(frozen=True)
class Note(WorkflowEvent):
    text: str


class Echo(Executor):
    """Passes a string on, noting which superstep saw it."""

    @handler
    async def echo(self, message: str, ctx: WorkflowContext) -> str:
        ctx.add_event(Note(f"{self.id}:{message}"))
        return message


class Sink(Executor):
    @handler
    async def take(self, message: str, ctx: WorkflowContext) -> None:
        ctx.yield_output(f"{self.id} got {message}")


class Ask(Executor):
    @handler
    async def ask(self, message: str, ctx: WorkflowContext) -> Question:
        return Question(text=message)


class Done(Executor):
    @handler
    async def done(self, answer: Answer, ctx: WorkflowContext) -> None:
        ctx.yield_output("yes" if answer.ok else "no")


class Loop(Executor):
    @handler
    async def again(self, message: str, ctx: WorkflowContext) -> str:
        return message


class Boom(Executor):
    @handler
    async def explode(self, message: str, ctx: WorkflowContext) -> str:
        raise RuntimeError("boom")


class Counter(Executor):
    """Keeps a count in an attribute, saved and restored through the checkpoint hooks."""

    def __init__(self, executor_id: str) -> None:
        super().__init__(executor_id)
        self.count = 0

    @handler
    async def bump(self, message: str, ctx: WorkflowContext) -> Question:
        self.count += 1
        return Question(text=f"{message}#{self.count}")

    @handler
    async def answered(self, answer: Answer, ctx: WorkflowContext) -> None:
        ctx.yield_output(f"count={self.count}")

    def on_checkpoint_save(self) -> Any:
        return Count(n=self.count)

    def on_checkpoint_restore(self, state: Any) -> None:
        self.count = state.n


class Rendezvous(Executor):
    """Two of these in one superstep finish only if they run concurrently."""

    def __init__(self, executor_id: str, mine: asyncio.Event, other: asyncio.Event) -> None:
        super().__init__(executor_id)
        self.mine, self.other = mine, other

    @handler
    async def meet(self, message: str, ctx: WorkflowContext) -> None:
        self.mine.set()
        await asyncio.wait_for(self.other.wait(), timeout=2)
        ctx.yield_output(self.id)


def session(store: InMemoryCheckpointStore, sid: str = "s1") -> SessionCheckpoints:
    return SessionCheckpoints(store, SIGNER, "T1", sid)


async def drain(run: Run) -> list[WorkflowEvent]:
    return [event async for event in run.watch()]
