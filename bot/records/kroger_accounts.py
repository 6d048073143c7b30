"""Each person's connected Kroger account: the refresh token Kroger gave when they connected it
from the Home tab, an SSM Parameter Store ``SecureString`` parameter per person, beside the
workspace's own keys (``bot.records.workspace_secrets``) and under the same KMS key::

    <WORKSPACE_SECRETS_PATH>/<team>/kroger/<user>   e.g. /weekly-shop/prod/workspaces/T0…/kroger/U0…

Why there: the same reasons as the workspace's keys (not in the bucket, readable wherever the
bucket is; not the account-wide ``aws/ssm`` key), and the stack's key policy already lets only
the function's role use the key, only through SSM and only for parameters under the path
(``kms:EncryptionContext:PARAMETER_ARN`` like ``<path>/*``, where ``*`` spans the ``/`` of
``<team>/kroger/<user>``). A token renewed is one ``PutParameter`` that replaces the old one.

A workspace's people are not known in advance, so removing the app lists them:
``GetParametersByPath`` on ``<path>/<team>/kroger`` (not recursive), at most 10 parameters an
answer (its ``MaxResults`` is 1 to 10, and an answer may hold fewer with a ``NextToken``: the
API reference, "GetParametersByPath"), then ``DeleteParameters``, at most 10 names a request.
That listing is authorised against the path asked, not the parameters returned (the user
guide, "How Parameter Store authorizes parameter retrieval"): the role may list
``<path>/*/kroger`` folders and no other (``serverless.yml``). Nothing is decrypted to list.

SSM asks for 30 seconds between deleting a parameter and creating one of the same name (the
API reference, "DeleteParameters"): a person who disconnects and connects again at once may
have the save refused, as :class:`SecretsDown`.

Errors: IDs that are not a workspace's or a Slack user's are ``ValueError`` (before any call);
SSM failing is :class:`SecretsDown`, naming the operation and SSM's error code. A refresh token
never reaches a log line, an error's text or a repr: this class holds none.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable
from datetime import datetime
from typing import Any

from botocore.exceptions import BotoCoreError, ClientError

from bot.records.slack_shapes import SLACK_USER
from bot.records.workspace_secrets import (
    SecretsDown,
    _failed,
    delete_parameters,
    get_parameter,
    put_secure,
)
from workflow.persistence.store import validate_id

log = logging.getLogger(__name__)

FOLDER = "kroger"
PAGE = 10  # GetParametersByPath's largest MaxResults


class KrogerAccounts:
    """One deploy's connected Kroger accounts in SSM, under ``path``
    (``/weekly-shop/<stage>/workspaces``), encrypted with ``kms_key`` (an ARN or ``alias/…``;
    "" is SSM's own ``aws/ssm``, for the sandbox and the tests)."""

    def __init__(
        self, ssm: Any, path: str, kms_key: str = "", clock: Callable[[], float] = time.time
    ) -> None:
        self.ssm, self.path, self.kms_key, self.clock = ssm, path.rstrip("/"), kms_key, clock

    def folder(self, team: str) -> str:
        """Where the workspace's people's tokens are: ``<path>/<team>/kroger``."""
        return f"{self.path}/{validate_id(team, 'tenant_id')}/{FOLDER}"

    def name(self, team: str, user: str) -> str:
        """The person's parameter: ``<path>/<team>/kroger/<user>``, ``user`` a Slack user ID."""
        if not isinstance(user, str) or not SLACK_USER.fullmatch(user):
            raise ValueError("a Kroger account: not a Slack user ID")
        return f"{self.folder(team)}/{user}"

    def save(self, team: str, user: str, refresh_token: str) -> None:
        """Keep ``refresh_token`` as the person's (replacing the one before: a renewed token)."""
        put_secure(
            self.ssm,
            self.name(team, user),
            refresh_token,
            self.kms_key,
            "save a person's Kroger refresh token",
        )

    def read(self, team: str, user: str) -> str | None:
        """The person's refresh token, decrypted; None if they have not connected."""
        found = get_parameter(
            self.ssm, self.name(team, user), True, "read a person's Kroger refresh token"
        )
        return None if found is None else str(found["Value"])

    def connected_at(self, team: str, user: str) -> datetime | None:
        """When the person's token was last saved (connected, or renewed), from the parameter's
        metadata: nothing is decrypted. None if they have not connected."""
        found = get_parameter(
            self.ssm, self.name(team, user), False, "check a person's Kroger account"
        )
        return None if found is None else found.get("LastModifiedDate")

    def token_age(self, team: str, user: str) -> float | None:
        """Seconds since the person's token was last saved (what renewing it before it
        expires goes by); None if they have not connected."""
        at = self.connected_at(team, user)
        return None if at is None else max(0.0, self.clock() - at.timestamp())

    def forget_person(self, team: str, user: str) -> bool:
        """Delete the person's token (they disconnected); whether there was one."""
        name = self.name(team, user)
        return delete_parameters(self.ssm, [name], "delete a person's Kroger account") == 1

    def forget(self, team: str, before: float | None = None) -> int:
        """Delete every person's token in the workspace (only those last saved before the epoch
        second ``before``, if given: a token saved under a new installation stays); how many."""
        names = [
            name
            for name, at in self._listed(team)
            if before is None or (at is not None and at.timestamp() < before)
        ]
        deleted = delete_parameters(self.ssm, names, "delete the workspace's Kroger accounts")
        if names:
            log.info("workspace %s: %d Kroger accounts deleted", team, deleted)
        return deleted

    def _listed(self, team: str) -> list[tuple[str, datetime | None]]:
        """(name, last saved) of each parameter directly under the workspace's folder, every
        page of ``GetParametersByPath`` read before anything is deleted."""
        folder, found, token = self.folder(team), [], ""
        while True:
            more = {"NextToken": token} if token else {}
            try:
                page = self.ssm.get_parameters_by_path(
                    Path=folder, Recursive=False, WithDecryption=False, MaxResults=PAGE, **more
                )
            except (ClientError, BotoCoreError) as exc:
                raise _failed("list the workspace's Kroger accounts", exc) from exc
            for parameter in page.get("Parameters") or []:
                name = parameter.get("Name")
                if isinstance(name, str) and name.startswith(f"{folder}/"):
                    found.append((name, parameter.get("LastModifiedDate")))
            token = page.get("NextToken") or ""
            if not token:
                return found


__all__ = ["KrogerAccounts", "SecretsDown"]
