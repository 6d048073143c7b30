"""The :class:`~workflow.engine.executor.WorkflowContext` an executor gets for one superstep.

What a handler sends, outputs, raises as events and writes to shared state goes through here;
the run collects it and applies it only if the whole superstep succeeds.
"""

from __future__ import annotations

import asyncio
from typing import Any

from workflow.errors import RunError

from .events import OutputEvent, WorkflowEvent
from .state import SharedState


class StepContext:
    def __init__(
        self,
        executor_id: str,
        state: SharedState,
        events: asyncio.Queue[WorkflowEvent],
        outputs: list[Any] | None,
    ) -> None:
        """``outputs`` collects what the executor yields; None if it is not an output executor."""
        self.executor_id = executor_id
        self._state = state
        self._events = events
        self._outputs = outputs
        self.sent: list[Any] = []

    def send_message(self, message: Any) -> None:
        self.sent.append(message)

    def yield_output(self, value: Any) -> None:
        if self._outputs is None:
            raise RunError(f"{self.executor_id!r} is not an output executor of this workflow")
        self._outputs.append(value)
        self._events.put_nowait(OutputEvent(self.executor_id, value))

    def add_event(self, event: WorkflowEvent) -> None:
        self._events.put_nowait(event)

    def read_state(self, key: str, scope: str | None = None) -> Any:
        return self._state.read(self.executor_id, key, scope)

    def queue_state_update(self, key: str, value: Any, scope: str | None = None) -> None:
        self._state.queue(self.executor_id, key, value, scope)
