"""The newest generation of each workspace's settings document, kept where the document is not.

Every save writes the document with a generation one above the last (signed with it:
``bot.records.workspace_settings_store``), then records that generation here::

    <WORKSPACE_SECRETS_PATH>/<team>/settings-generation      an SSM String parameter, e.g. "7"

A document read back with a lower generation than the one recorded is an older copy put back
(a backup restored, an object version brought back, bytes copied in by hand): its signature is
good, its rules are not the workspace's any more. Someone who can write to the bucket cannot
write here: the function's role alone may put parameters under that path (``serverless.yml``),
so the document cannot carry its own proof of being the latest.

What it costs: the store asks only when the document it reads changed (a new ETag, or gone),
and at least every ``CHECK_EVERY`` seconds per workspace and container otherwise, never on the
warm clicks between; a save writes it once, after the document. Without
``WORKSPACE_SECRETS_PATH`` nothing is recorded and nothing is compared (docs/in-slack.md, Settings).

Errors: SSM failing is :class:`GenerationsDown` (a ``StoreError``, like S3 being down); a
parameter that is not a whole number reads as 0 (so the document decides).
"""

from __future__ import annotations

import threading
from typing import Any, Protocol

from botocore.exceptions import BotoCoreError, ClientError

from workflow.errors import StoreError
from workflow.persistence.store import validate_id

NAME = "settings-generation"
CHECK_EVERY = 300.0  # seconds a warm container trusts what it last compared


class GenerationsDown(StoreError):
    """SSM could not be reached or refused: which operation, and its error code."""


class Generations(Protocol):
    """Where the newest generation of each workspace's settings is kept."""

    def recorded(self, team: str) -> int:
        """The newest generation saved for ``team`` (0: none)."""
        ...

    def record(self, team: str, generation: int) -> None: ...

    def forget(self, team: str) -> None:
        """The workspace removed the app: nothing is recorded for it any more."""
        ...


class SsmGenerations:
    """One SSM String parameter per workspace, under the deploy's workspace path."""

    def __init__(self, ssm: Any, path: str) -> None:
        self.ssm, self.path = ssm, path.rstrip("/")

    def name(self, team: str) -> str:
        return f"{self.path}/{validate_id(team, 'tenant_id')}/{NAME}"

    def recorded(self, team: str) -> int:
        try:
            answer = self.ssm.get_parameter(Name=self.name(team))
        except ClientError as exc:
            if exc.response.get("Error", {}).get("Code") == "ParameterNotFound":
                return 0
            raise _down("read", exc) from exc
        except BotoCoreError as exc:
            raise _down("read", exc) from exc
        value = (answer.get("Parameter") or {}).get("Value")
        return int(value) if isinstance(value, str) and value.isdigit() else 0

    def record(self, team: str, generation: int) -> None:
        try:
            self.ssm.put_parameter(
                Name=self.name(team),
                Value=str(generation),
                Type="String",
                Overwrite=True,
                Tier="Standard",
            )
        except (ClientError, BotoCoreError) as exc:
            raise _down("record", exc) from exc

    def forget(self, team: str) -> None:
        try:
            self.ssm.delete_parameters(Names=[self.name(team)])
        except (ClientError, BotoCoreError) as exc:
            raise _down("forget", exc) from exc


class InMemoryGenerations:
    """The same in a dict: for the tests and a sandbox without SSM."""

    def __init__(self) -> None:
        self._mutex = threading.Lock()
        self._kept: dict[str, int] = {}

    def recorded(self, team: str) -> int:
        with self._mutex:
            return self._kept.get(team, 0)

    def record(self, team: str, generation: int) -> None:
        with self._mutex:
            self._kept[team] = generation

    def forget(self, team: str) -> None:
        with self._mutex:
            self._kept.pop(team, None)


def generations_of(ssm: Any, path: str) -> SsmGenerations | None:
    """The deploy's record (``WORKSPACE_SECRETS_PATH``), or None when it keeps none."""
    return SsmGenerations(ssm, path) if path else None


def _down(what: str, exc: ClientError | BotoCoreError) -> GenerationsDown:
    code = exc.response.get("Error", {}).get("Code") if isinstance(exc, ClientError) else None
    return GenerationsDown(f"SSM {what} settings generation: {code or type(exc).__name__}")
