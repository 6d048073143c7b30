"""The explicit list of types that may cross a checkpoint, each with its schema version.

A checkpoint stores messages, request data and state as ``{"t": tag, "v": value}``. Decoding looks
the tag up here and validates the value with the registered class: nothing is imported by name,
nothing is evaluated, and an unknown tag is an error that names it.

A registered class is a plain class with ``to_json`` and ``from_json``
(``workflow.persistence.values``: what the weekly shop's values are, so that no click imports
pydantic), or a pydantic model, written with ``model_dump(mode="json")`` and read with
``model_validate``; pydantic itself is never imported here.

A model's tag carries its schema version, ``"Basket@2"``. Changing a model's fields is a normal
change: register the new version with an upgrade from each older one (a function from the old
value's JSON to the next version's, kept beside the model), and values written as any earlier
version are upgraded as they are read. A tag without a version (checkpoint format 1) is version
1; a version above the registered one is :class:`CheckpointFromNewerVersion`.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

from workflow.errors import CheckpointCorrupt, CheckpointFromNewerVersion, IncompatibleCheckpoint

_BUILTINS: dict[str, type[Any]] = {"str": str, "int": int, "float": float, "bool": bool}
Upgrade = Callable[[Any], Any]
Encode = Callable[[Any], Any]
Decode = Callable[[Any], Any]


def _codec(model: type[Any]) -> tuple[Encode, Decode]:
    """How values of ``model`` become JSON-ready data and back (``workflow.persistence.values``)."""
    if callable(getattr(model, "to_json", None)) and callable(getattr(model, "from_json", None)):
        return model.to_json, model.from_json
    if callable(getattr(model, "model_dump", None)) and callable(
        getattr(model, "model_validate", None)
    ):  # a pydantic model
        return (lambda value: value.model_dump(mode="json")), model.model_validate
    raise TypeError(
        f"{model.__qualname__} cannot cross a checkpoint: it has no to_json/from_json "
        "and is not a pydantic model"
    )


class TypeRegistry:
    """Maps type tags to the types allowed in checkpoints.

    ``str``, ``int``, ``float`` and ``bool`` are always allowed; other classes (plain classes
    with ``to_json``/``from_json``, or pydantic models) are added with :meth:`register`.
    Encoding a value of an unregistered type raises ``TypeError`` (a programming error, caught
    when the checkpoint is taken); decoding an unknown tag raises :class:`CheckpointCorrupt`
    naming the tag, and a value its class refuses (``ValueError`` or ``TypeError`` from
    ``from_json``, a pydantic ``ValidationError``) is :class:`CheckpointCorrupt` naming it too.
    """

    def __init__(self, *models: type[Any]) -> None:
        self._by_tag: dict[str, type[Any]] = dict(_BUILTINS)
        self._by_type: dict[type[Any], str] = {t: tag for tag, t in _BUILTINS.items()}
        self._versions: dict[str, int] = {}
        self._upgrades: dict[str, Mapping[int, Upgrade]] = {}
        self._encoders: dict[type[Any], Encode] = {}
        self._decoders: dict[str, Decode] = {}
        for model in models:
            self.register(model)

    def register(
        self,
        model: type[Any],
        tag: str | None = None,
        *,
        version: int = 1,
        upgrades: Mapping[int, Upgrade] | None = None,
    ) -> None:
        """Allow ``model`` in checkpoints under ``tag`` (default: the class name), as schema
        ``version``; ``upgrades[n]`` turns a value of version n into version n + 1."""
        tag = tag or model.__name__
        encode, decode = _codec(model)
        known = self._by_tag.get(tag)
        if known is not None and known is not model:
            raise ValueError(f"type tag {tag!r} is already used by {known.__qualname__}")
        missing = [n for n in range(1, version) if n not in (upgrades or {})]
        if missing:
            raise ValueError(f"{tag}@{version} has no upgrade from version {missing[0]}")
        self._by_tag[tag] = model
        self._by_type[model] = tag
        self._versions[tag] = version
        self._upgrades[tag] = dict(upgrades or {})
        self._encoders[model] = encode
        self._decoders[tag] = decode

    def knows(self, tp: type[Any]) -> bool:
        return tp in self._by_type

    def tag_of(self, tp: type[Any]) -> str:
        try:
            return self._by_type[tp]
        except KeyError:
            raise TypeError(f"{tp.__qualname__} is not registered for checkpoints") from None

    def versioned_tag(self, tp: type[Any]) -> str:
        """The tag a value of ``tp`` is written with: ``Name@version`` for a model."""
        tag = self.tag_of(tp)
        return f"{tag}@{self._versions[tag]}" if tag in self._versions else tag

    def encode(self, value: Any) -> dict[str, Any]:
        """``{"t": tag, "v": json-ready value}`` for a value of a registered type."""
        tag = self.versioned_tag(type(value))
        encode = self._encoders.get(type(value))
        return {"t": tag, "v": value if encode is None else encode(value)}

    def decode(self, data: Any) -> Any:
        """The value ``data`` describes, upgraded to its current schema and validated."""
        if not isinstance(data, dict) or set(data) != {"t", "v"}:
            raise CheckpointCorrupt(f"not a tagged value: {str(data)[:80]!r}")
        tag, version = _split(data["t"])
        tp = self._by_tag.get(tag)
        if tp is None:
            raise CheckpointCorrupt(f"unknown type tag {data['t']!r} in checkpoint")
        if tp in _BUILTINS.values():
            if (
                version is not None
                or not isinstance(data["v"], tp)
                or isinstance(data["v"], bool) != (tp is bool)
            ):
                raise CheckpointCorrupt(f"value tagged {tag!r} is not a {tp.__name__}")
            return data["v"]
        value = self._upgraded(tag, 1 if version is None else version, data["v"])
        try:
            return self._decoders[tag](value)
        except (ValueError, TypeError) as exc:  # pydantic's ValidationError is a ValueError
            raise CheckpointCorrupt(f"value tagged {data['t']!r} does not validate: {exc}") from exc

    def _upgraded(self, tag: str, version: int, value: Any) -> Any:
        current = self._versions[tag]
        if version > current:
            raise CheckpointFromNewerVersion(
                f"{tag}@{version} is newer than the {tag}@{current} this code knows"
            )
        for n in range(version, current):
            upgrade = self._upgrades[tag].get(n)
            if upgrade is None:
                raise IncompatibleCheckpoint(f"no upgrade from {tag}@{n} to {tag}@{n + 1}")
            try:
                value = upgrade(value)
            except Exception as exc:  # an upgrade is the app's code, run on bytes read back
                raise CheckpointCorrupt(f"{tag}@{n} could not be upgraded: {exc!r}") from exc
        return value


def _split(tag: Any) -> tuple[str, int | None]:
    """``"Basket@2"`` -> ("Basket", 2); ``"Basket"`` -> ("Basket", None)."""
    if not isinstance(tag, str):
        return "", None
    name, at, version = tag.partition("@")
    if not at:
        return name, None
    if not version.isdigit() or version.startswith("0"):
        return "", None
    return name, int(version)
