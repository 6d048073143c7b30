"""A workspace's write-only keys (its Instacart API key, its webhook's signing secret): SSM
Parameter Store ``SecureString`` parameters, one per workspace and key, under the deploy's path::

    <WORKSPACE_SECRETS_PATH>/<team>/instacart-api-key        e.g. /weekly-shop/prod/workspaces/…
    <WORKSPACE_SECRETS_PATH>/<team>/webhook-signing-secret

Why SSM and not the bucket: everything else the function writes is in the bucket, readable by
anyone who can read the bucket (a backup, an audit role, a support session); a key there, even
SSE-KMS, would be readable wherever the bucket is. A parameter is encrypted under the stack's own
KMS key (``WORKSPACE_SECRETS_KEY``, ``serverless.yml``), whose key policy lets only the
function's role encrypt and decrypt, and only through SSM for parameters under this path; not the
account-wide ``aws/ssm`` key, which every principal of the account may decrypt with. The role may
Get/Put/Delete parameters under the path and nothing else in SSM (no ``DescribeParameters``, no
``GetParametersByPath``: a workspace's name is always known). A parameter is also one request to
replace, with no read-modify-write against other workspaces' keys.

Write-only: the Settings modal takes a key and never shows it again (:meth:`saved_at` tells it
that one is saved, from the parameter's metadata, without decrypting); the value is read
(:meth:`read`, decrypted) only where an order is placed. Values never reach a log line or an
error's text. Removing the app deletes them (:meth:`forget`).
"""

from __future__ import annotations

import logging
from datetime import datetime
from typing import Any, Literal

from botocore.exceptions import BotoCoreError, ClientError

from workflow.errors import StoreError
from workflow.persistence.store import validate_id

log = logging.getLogger(__name__)

KeyName = Literal["instacart-api-key", "webhook-signing-secret"]
KEY_NAMES: tuple[KeyName, ...] = ("instacart-api-key", "webhook-signing-secret")
MAX_VALUE = 4096  # a Standard parameter's value: at most 4 KB


class SecretsDown(StoreError):
    """SSM could not be reached or refused; says which operation, never a value."""


def _failed(what: str, exc: Exception) -> SecretsDown:
    code = exc.response.get("Error", {}).get("Code") if isinstance(exc, ClientError) else None
    return SecretsDown(f"{what}: {code or type(exc).__name__}")


class WorkspaceSecrets:
    """One deploy's workspace keys in SSM, under ``path`` (``/weekly-shop/<stage>/workspaces``),
    encrypted with ``kms_key`` (an ARN or ``alias/…``; "" is SSM's own ``aws/ssm``, for the
    sandbox and the tests)."""

    def __init__(self, ssm: Any, path: str, kms_key: str = "") -> None:
        self.ssm, self.path, self.kms_key = ssm, path.rstrip("/"), kms_key

    def name(self, team: str, key: KeyName) -> str:
        return f"{self.path}/{validate_id(team, 'tenant_id')}/{key}"

    def save(self, team: str, key: KeyName, value: str) -> None:
        """Store ``value`` as the workspace's ``key`` (replacing one saved before)."""
        if not value or len(value.encode()) > MAX_VALUE:
            raise ValueError(f"a key of 1 to {MAX_VALUE} bytes")
        extra = {"KeyId": self.kms_key} if self.kms_key else {}
        try:
            self.ssm.put_parameter(
                Name=self.name(team, key),
                Value=value,
                Type="SecureString",
                Overwrite=True,
                Tier="Standard",
                **extra,
            )
        except (ClientError, BotoCoreError) as exc:
            raise _failed(f"save the workspace's {key}", exc) from exc

    def read(self, team: str, key: KeyName) -> str | None:
        """The workspace's ``key``, decrypted; None if it saved none."""
        found = self._get(team, key, decrypt=True)
        return None if found is None else str(found["Value"])

    def saved_at(self, team: str, key: KeyName) -> datetime | None:
        """When the workspace's ``key`` was saved (metadata only: nothing is decrypted); None
        if it saved none."""
        found = self._get(team, key, decrypt=False)
        return None if found is None else found.get("LastModifiedDate")

    def saved(self, team: str) -> dict[str, datetime | None]:
        """Which keys the workspace saved, when."""
        return {key: self.saved_at(team, key) for key in KEY_NAMES}

    def forget(self, team: str, before: float | None = None) -> int:
        """Delete the workspace's keys (only those last saved before the epoch second
        ``before``, if given: a key saved by a new installation stays); how many."""
        names = []
        for key in KEY_NAMES:
            at = self.saved_at(team, key)
            if at is not None and (before is None or at.timestamp() < before):
                names.append(self.name(team, key))
        if not names:
            return 0
        try:
            done = self.ssm.delete_parameters(Names=names)
        except (ClientError, BotoCoreError) as exc:
            raise _failed("delete the workspace's keys", exc) from exc
        return len(done.get("DeletedParameters") or [])

    def _get(self, team: str, key: KeyName, decrypt: bool) -> dict[str, Any] | None:
        try:
            answer = self.ssm.get_parameter(Name=self.name(team, key), WithDecryption=decrypt)
        except ClientError as exc:
            if exc.response.get("Error", {}).get("Code") == "ParameterNotFound":
                return None
            raise _failed(f"read the workspace's {key}", exc) from exc
        except BotoCoreError as exc:
            raise _failed(f"read the workspace's {key}", exc) from exc
        found = answer.get("Parameter")
        if not isinstance(found, dict) or not isinstance(found.get("Value"), str):
            raise SecretsDown(f"read the workspace's {key}: an answer without a value")
        return found
