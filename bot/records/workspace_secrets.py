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
Get/Put/Delete parameters under the path, list one folder kind (``GetParametersByPath`` on
``<path>/<team>/kroger`` only: a workspace's people are not known in advance,
``bot.records.kroger_accounts``) and nothing else in SSM (no ``DescribeParameters``; a
workspace's own keys are never listed, their names are known). A parameter is also one request
to replace, with no read-modify-write against other workspaces' keys.

Write-only: the Settings modal takes a key and never shows it again (:meth:`saved_at` tells it
that one is saved, from the parameter's metadata, without decrypting); the value is read
(:meth:`read`, decrypted) only where an order is placed. Values never reach a log line or an
error's text. Removing the app deletes them (:meth:`forget`).

The few SSM calls (put a SecureString, get one, delete names ten at a time) are functions here,
shared with each person's Kroger refresh token (``bot.records.kroger_accounts``); each SSM
failure is :class:`SecretsDown`, naming the operation and SSM's error code, never a value.
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


def put_secure(ssm: Any, name: str, value: str, kms_key: str, what: str) -> None:
    """Put ``value`` as the SecureString ``name`` (replacing it), under ``kms_key`` if set."""
    if not value or len(value.encode()) > MAX_VALUE:
        raise ValueError(f"{what}: a value of 1 to {MAX_VALUE} bytes")
    extra = {"KeyId": kms_key} if kms_key else {}
    try:
        ssm.put_parameter(
            Name=name, Value=value, Type="SecureString", Overwrite=True, Tier="Standard", **extra
        )
    except (ClientError, BotoCoreError) as exc:
        raise _failed(what, exc) from exc


def get_parameter(ssm: Any, name: str, decrypt: bool, what: str) -> dict[str, Any] | None:
    """The parameter ``name`` as SSM answers it (its value decrypted only with ``decrypt``);
    None if there is none."""
    try:
        answer = ssm.get_parameter(Name=name, WithDecryption=decrypt)
    except ClientError as exc:
        if exc.response.get("Error", {}).get("Code") == "ParameterNotFound":
            return None
        raise _failed(what, exc) from exc
    except BotoCoreError as exc:
        raise _failed(what, exc) from exc
    found = answer.get("Parameter")
    if not isinstance(found, dict) or not isinstance(found.get("Value"), str):
        raise SecretsDown(f"{what}: an answer without a value")
    return found


def delete_parameters(ssm: Any, names: list[str], what: str) -> int:
    """Delete ``names``, ten a request (``DeleteParameters`` takes 1 to 10 names); how many
    SSM deleted (a name already gone is not counted)."""
    deleted = 0
    for start in range(0, len(names), 10):
        try:
            done = ssm.delete_parameters(Names=names[start : start + 10])
        except (ClientError, BotoCoreError) as exc:
            raise _failed(what, exc) from exc
        deleted += len(done.get("DeletedParameters") or [])
    return deleted


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
        put_secure(
            self.ssm, self.name(team, key), value, self.kms_key, f"save the workspace's {key}"
        )

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
        return delete_parameters(self.ssm, names, "delete the workspace's keys")

    def _get(self, team: str, key: KeyName, decrypt: bool) -> dict[str, Any] | None:
        return get_parameter(self.ssm, self.name(team, key), decrypt, f"read the workspace's {key}")
