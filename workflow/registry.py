"""The explicit list of types that may cross a checkpoint.

A checkpoint stores messages, request data and state as ``{"t": tag, "v": value}``. Decoding looks
the tag up here and validates the value with the registered pydantic model: nothing is imported by
name, nothing is evaluated, and an unknown tag is an error that names it.
"""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, TypeAdapter, ValidationError

from .errors import CheckpointCorrupt

_BUILTINS: dict[str, type[Any]] = {"str": str, "int": int, "float": float, "bool": bool}


class TypeRegistry:
    """Maps type tags to the types allowed in checkpoints.

    ``str``, ``int``, ``float`` and ``bool`` are always allowed; pydantic models are added with
    :meth:`register`. Encoding a value of an unregistered type raises ``TypeError`` (a programming
    error, caught when the checkpoint is taken); decoding an unknown tag raises
    :class:`CheckpointCorrupt` naming the tag.
    """

    def __init__(self, *models: type[BaseModel]) -> None:
        self._by_tag: dict[str, type[Any]] = dict(_BUILTINS)
        self._by_type: dict[type[Any], str] = {t: tag for tag, t in _BUILTINS.items()}
        self._adapters: dict[str, TypeAdapter[Any]] = {}
        for model in models:
            self.register(model)

    def register(self, model: type[BaseModel], tag: str | None = None) -> None:
        """Allow ``model`` in checkpoints under ``tag`` (default: the class name)."""
        tag = tag or model.__name__
        known = self._by_tag.get(tag)
        if known is not None and known is not model:
            raise ValueError(f"type tag {tag!r} is already used by {known.__qualname__}")
        self._by_tag[tag] = model
        self._by_type[model] = tag

    def knows(self, tp: type[Any]) -> bool:
        return tp in self._by_type

    def tag_of(self, tp: type[Any]) -> str:
        try:
            return self._by_type[tp]
        except KeyError:
            raise TypeError(f"{tp.__qualname__} is not registered for checkpoints") from None

    def encode(self, value: Any) -> dict[str, Any]:
        """``{"t": tag, "v": json-ready value}`` for a value of a registered type."""
        tag = self.tag_of(type(value))
        if isinstance(value, BaseModel):
            return {"t": tag, "v": value.model_dump(mode="json")}
        return {"t": tag, "v": value}

    def decode(self, data: Any) -> Any:
        """The value ``data`` describes, validated against its registered type."""
        if not isinstance(data, dict) or set(data) != {"t", "v"}:
            raise CheckpointCorrupt(f"not a tagged value: {str(data)[:80]!r}")
        tag = data["t"]
        tp = self._by_tag.get(tag) if isinstance(tag, str) else None
        if tp is None:
            raise CheckpointCorrupt(f"unknown type tag {tag!r} in checkpoint")
        adapter = self._adapters.get(tag)
        if adapter is None:
            adapter = self._adapters[tag] = TypeAdapter(tp)
        try:
            return adapter.validate_python(data["v"], strict=tp in _BUILTINS.values())
        except ValidationError as exc:
            raise CheckpointCorrupt(f"value tagged {tag!r} does not validate: {exc}") from exc
