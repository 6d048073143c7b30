"""Checkpoint values as plain classes: the protocol the :class:`TypeRegistry` reads them through,
and the checks their constructors and ``from_json`` make (a record's header line is checked with
them too, ``workflow.persistence.record_format``).

A class crosses a checkpoint when it provides ``to_json()`` (its fields as JSON-ready data, in
declaration order: the order is in the checkpoint's bytes) and ``from_json(data)``, which builds
it from data read back and raises ``ValueError`` or ``TypeError`` for anything else. A checkpoint
is a trust boundary, so the checks below take only what JSON holds, as it holds it: an ``int`` is
an ``int`` (not a bool, a float or a numeric string), a ``bool`` is ``True`` or ``False``, a list
is a list. Plain classes rather than pydantic models keep pydantic out of every click's cold
start: building the models was a noticeable share of it.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Collection
from typing import Any, Protocol, Self


class CheckpointValue(Protocol):
    """What :class:`~workflow.persistence.registry.TypeRegistry` needs of a plain class."""

    def to_json(self) -> dict[str, Any]: ...

    @classmethod
    def from_json(cls, data: Any) -> Self: ...


class AllFields:
    """A frozen dataclass whose JSON is every field, in declaration order, and reads back only
    from an object with exactly those fields (the checks are its own ``__post_init__``)."""

    def to_json(self) -> dict[str, Any]:
        return {f.name: getattr(self, f.name) for f in dataclasses.fields(self)}  # type: ignore[arg-type]

    @classmethod
    def from_json(cls, data: Any) -> Self:
        names = [f.name for f in dataclasses.fields(cls)]  # type: ignore[arg-type]
        return cls(**fields_of(data, cls.__name__, names, names))


def _shown(value: Any) -> str:
    text = repr(value)
    return text if len(text) <= 60 else f"{text[:57]}..."


def fields_of(data: Any, name: str, fields: Collection[str], required: Collection[str]) -> Any:
    """``data`` as keyword arguments for ``name``: an object whose keys are among ``fields``
    (no others) and include every one of ``required``."""
    if not isinstance(data, dict):
        raise ValueError(f"{name} must be an object, not {type(data).__name__}")
    extra = [k for k in data if k not in fields]
    if extra:
        raise ValueError(f"{name} has unknown field {_shown(extra[0])}")
    missing = [k for k in required if k not in data]
    if missing:
        raise ValueError(f"{name} is missing {missing[0]!r}")
    return data


def check_str(value: Any, where: str, *, min_length: int = 0, max_length: int | None = None) -> str:
    if not isinstance(value, str):
        raise ValueError(f"{where} must be a string, not {type(value).__name__}")
    if len(value) < min_length:
        raise ValueError(f"{where} must have at least {min_length} character(s)")
    if max_length is not None and len(value) > max_length:
        raise ValueError(f"{where} must have at most {max_length} characters, not {len(value)}")
    return value


def check_optional_str(value: Any, where: str, *, max_length: int | None = None) -> str | None:
    return None if value is None else check_str(value, where, max_length=max_length)


def check_int(value: Any, where: str, *, ge: int | None = None) -> int:
    if not isinstance(value, int) or isinstance(value, bool):
        raise ValueError(f"{where} must be an integer, not {type(value).__name__}")
    if ge is not None and value < ge:
        raise ValueError(f"{where} must be >= {ge}, not {value}")
    return value


def check_optional_int(value: Any, where: str, *, ge: int | None = None) -> int | None:
    return None if value is None else check_int(value, where, ge=ge)


def check_bool(value: Any, where: str) -> bool:
    if not isinstance(value, bool):
        raise ValueError(f"{where} must be true or false, not {_shown(value)}")
    return value


def check_str_list(value: Any, where: str, *, max_length: int) -> list[str]:
    """A new list of the strings in the list ``value``."""
    if not isinstance(value, list):
        raise ValueError(f"{where} must be a list, not {type(value).__name__}")
    if len(value) > max_length:
        raise ValueError(f"{where} must have at most {max_length} items, not {len(value)}")
    for i, item in enumerate(value):
        check_str(item, f"{where}[{i}]")
    return list(value)
