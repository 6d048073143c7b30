"""Executors: the steps of a graph, with typed message handlers.

An executor has a fixed string ID (it is how a checkpoint names it) and one or more methods
marked with :func:`handler`. The type annotation of a handler's message parameter chooses which
messages it takes; its return annotation declares what it sends along its edges. Returning a value
sends it, so a handler rarely needs ``ctx.send_message``.
"""

from __future__ import annotations

import inspect
import types
import typing
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Any, ClassVar, Protocol

from .events import WorkflowEvent

HandlerFunc = Callable[[Any, Any, "WorkflowContext"], Awaitable[Any]]


class WorkflowContext(Protocol):
    """What a handler may do besides returning a message."""

    executor_id: str

    def send_message(self, message: Any) -> None:
        """Send ``message`` along this executor's edges; delivered in the next superstep."""

    def yield_output(self, value: Any) -> None:
        """Hand ``value`` to the caller as workflow output (output executors only)."""

    def add_event(self, event: WorkflowEvent) -> None:
        """Stream a custom event to the caller."""

    def read_state(self, key: str, scope: str | None = None) -> Any:
        """The value of ``key`` in ``scope`` (None: this executor's private scope), or None."""

    def queue_state_update(self, key: str, value: Any, scope: str | None = None) -> None:
        """Set ``key``: visible to this executor at once, to others from the next superstep."""


def handler(func: Callable[..., Awaitable[Any]]) -> Callable[..., Awaitable[Any]]:
    """Mark an ``async def name(self, message: T, ctx: WorkflowContext) -> Out`` method."""
    func.__workflow_handler__ = True  # type: ignore[attr-defined]
    return func


@dataclass(frozen=True)
class Handler:
    message_type: type[Any]
    output_types: tuple[type[Any], ...]
    name: str


class Executor:
    """Base class of a workflow step.

    Subclasses keep durable data in messages or shared state; anything kept in attributes must be
    saved by :meth:`on_checkpoint_save` and restored by :meth:`on_checkpoint_restore`, or a resumed
    run in a new process will not have it.
    """

    handlers: ClassVar[dict[type[Any], Handler]] = {}
    #: Extra types sent with ``ctx.send_message`` that no return annotation declares.
    sends: ClassVar[tuple[type[Any], ...]] = ()

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        found: dict[type[Any], Handler] = {}
        for base in reversed(cls.__mro__):
            for name, func in vars(base).items():
                if getattr(func, "__workflow_handler__", False):
                    h = _describe_handler(base, name, func)
                    found[h.message_type] = h
        cls.handlers = found

    def __init__(self, executor_id: str) -> None:
        if not executor_id or not executor_id.strip():
            raise ValueError("an executor needs a non-empty ID")
        self.id = executor_id

    @property
    def type_name(self) -> str:
        return type(self).__name__

    def input_types(self) -> tuple[type[Any], ...]:
        return tuple(self.handlers)

    def output_types(self) -> tuple[type[Any], ...]:
        out: list[type[Any]] = list(self.sends)
        for h in self.handlers.values():
            out.extend(t for t in h.output_types if t not in out)
        return tuple(out)

    def handler_for(self, message: Any) -> Handler | None:
        for tp in type(message).__mro__:
            if tp in self.handlers:
                return self.handlers[tp]
        return None

    async def dispatch(self, message: Any, ctx: WorkflowContext) -> Any:
        h = self.handler_for(message)
        if h is None:
            raise TypeError(f"executor {self.id!r} has no handler for {type(message).__name__}")
        return await getattr(self, h.name)(message, ctx)

    def on_checkpoint_save(self) -> Any:
        """State of this executor to keep in the checkpoint (a registered type), or None."""
        return None

    def on_checkpoint_restore(self, state: Any) -> None:
        """Take back what :meth:`on_checkpoint_save` returned, in a new process."""


def _describe_handler(owner: type[Any], name: str, func: Any) -> Handler:
    hints = typing.get_type_hints(func)
    params = [p for p in inspect.signature(func).parameters if p != "self"]
    if len(params) != 2 or params[0] not in hints:
        raise TypeError(f"{owner.__name__}.{name}: a handler is (self, message: T, ctx)")
    message_type = hints[params[0]]
    returned = hints.get("return", type(None))
    outputs: tuple[type[Any], ...]
    if returned is type(None):
        outputs = ()
    elif typing.get_origin(returned) in (typing.Union, types.UnionType):
        outputs = tuple(t for t in typing.get_args(returned) if t is not type(None))
    else:
        outputs = (returned,)
    return Handler(message_type=message_type, output_types=outputs, name=name)
