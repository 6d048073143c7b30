"""One superstep's deliveries: every queued message to its node, executors concurrently.

A message for a request port raises a request; a message for an executor goes to its handler
for the message's type. What handlers return or send is routed along the sender's edges (an edge
whose condition holds) and queued for the next superstep. An executor that raises fails the whole
superstep with :class:`ExecutorFailed`; nothing it did is applied.
"""

from __future__ import annotations

import asyncio
import uuid
from typing import Any

from workflow.errors import ExecutorFailed, RunError
from workflow.persistence.checkpoint import PendingRequest

from .builder import RequestPort, Workflow
from .context import StepContext
from .events import ExecutorCompleted, ExecutorInvoked, WorkflowEvent
from .executor import Executor
from .state import SharedState

Queue = list[tuple[str, Any]]


async def deliver(
    workflow: Workflow,
    queue: Queue,
    state: SharedState,
    outputs: list[Any],
    events: asyncio.Queue[WorkflowEvent],
) -> tuple[Queue, list[PendingRequest]]:
    """Deliver ``queue``; the next superstep's queue and the requests raised."""
    by_target: dict[str, list[Any]] = {}
    for target, message in queue:
        by_target.setdefault(target, []).append(message)
    raised: list[PendingRequest] = []
    jobs = []
    for target, messages in by_target.items():
        node = workflow.nodes[target]
        if isinstance(node, RequestPort):
            raised += [PendingRequest(uuid.uuid4().hex, node.id, m) for m in messages]
        else:
            step_outputs = outputs if node.id in workflow.output_ids else None
            context = StepContext(node.id, state, events, step_outputs)
            jobs.append(_invoke(workflow, node, messages, context, events))
    results = await asyncio.gather(*jobs, return_exceptions=True)
    next_queue: Queue = []
    for result in results:
        if isinstance(result, BaseException):
            raise result
        next_queue += result
    return next_queue, raised


async def _invoke(
    workflow: Workflow,
    executor: Executor,
    messages: list[Any],
    context: StepContext,
    events: asyncio.Queue[WorkflowEvent],
) -> Queue:
    events.put_nowait(ExecutorInvoked(executor.id))
    try:
        for message in messages:
            result = await executor.dispatch(message, context)
            if result is not None:
                context.sent.append(result)
        routed = [t for m in context.sent for t in route(workflow, executor.id, m)]
    except Exception as exc:
        raise ExecutorFailed(executor.id, exc) from exc
    events.put_nowait(ExecutorCompleted(executor.id))
    return routed


def route(workflow: Workflow, source_id: str, message: Any) -> Queue:
    """Where ``message`` from ``source_id`` goes: every edge whose condition holds."""
    edges = workflow.edges_from(source_id)
    targets = [(e.target, message) for e in edges if e.condition is None or e.condition(message)]
    if edges and not targets:
        raise RunError(f"{type(message).__name__} from {source_id!r} matched no edge")
    return targets
