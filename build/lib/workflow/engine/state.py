"""Shared state with named scopes.

A key lives in a scope. A named scope (``scope="shop"``) is shared by every executor that names
it; with no name, the scope is private to the executor. An update is queued: its writer reads it
back at once, every other executor from the next superstep, when :meth:`SharedState.commit` applies
it. A key missing from a scope reads as None; writing None removes the key.
"""

from __future__ import annotations

from typing import Any


def scope_key(executor_id: str, scope: str | None) -> str:
    """How a scope is named inside a checkpoint: ``n:<name>`` shared, ``x:<executor>`` private."""
    if scope is None:
        return f"x:{executor_id}"
    if not scope:
        raise ValueError("a scope name must not be empty")
    return f"n:{scope}"


class SharedState:
    def __init__(self, committed: dict[str, dict[str, Any]] | None = None) -> None:
        self._committed: dict[str, dict[str, Any]] = committed or {}
        self._queued: dict[str, dict[tuple[str, str], Any]] = {}

    def read(self, executor_id: str, key: str, scope: str | None) -> Any:
        skey = scope_key(executor_id, scope)
        mine = self._queued.get(executor_id, {})
        if (skey, key) in mine:
            return mine[(skey, key)]
        return self._committed.get(skey, {}).get(key)

    def queue(self, executor_id: str, key: str, value: Any, scope: str | None) -> None:
        self._queued.setdefault(executor_id, {})[(scope_key(executor_id, scope), key)] = value

    def commit(self) -> None:
        """Apply every queued update, in the order executors were queued."""
        for updates in self._queued.values():
            for (skey, key), value in updates.items():
                if value is None:
                    self._committed.get(skey, {}).pop(key, None)
                else:
                    self._committed.setdefault(skey, {})[key] = value
        self._committed = {k: v for k, v in self._committed.items() if v}
        self._queued.clear()

    def discard(self) -> None:
        self._queued.clear()

    def snapshot(self) -> dict[str, dict[str, Any]]:
        return {skey: dict(values) for skey, values in self._committed.items()}
