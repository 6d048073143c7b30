"""The toy graph of ``test_versions`` as the next deploy has it: the same names, with
``Question`` at schema version 2 (it gained ``asked_by``) and an upgrade from version 1."""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel

from tests.engine_kit import Answer
from workflow.engine.builder import RequestPort, Workflow, WorkflowBuilder
from workflow.engine.executor import Executor, WorkflowContext, handler
from workflow.persistence.registry import TypeRegistry


class Question(BaseModel):
    text: str
    asked_by: str


def question_1_to_2(value: Any) -> Any:
    return {"text": value["text"], "asked_by": ""}


class Ask(Executor):
    @handler
    async def ask(self, message: str, ctx: WorkflowContext) -> Question:
        return Question(text=message, asked_by="U0ALICE")


class Done(Executor):
    @handler
    async def done(self, answer: Answer, ctx: WorkflowContext) -> None:
        ctx.yield_output("yes" if answer.ok else "no")


def registry() -> TypeRegistry:
    types = TypeRegistry(Answer)
    types.register(Question, version=2, upgrades={1: question_1_to_2})
    return types


def graph_v1(name: str) -> Workflow:
    ask, port, done = Ask("ask"), RequestPort("port", Question, Answer), Done("done")
    builder = WorkflowBuilder(start=ask, registry=registry(), name=name, version=1)
    return builder.add_edge(ask, port).add_edge(port, done).with_output_from(done).build()
