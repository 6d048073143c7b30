"""Where a workspace's settings become S3 bytes: one signed, versioned JSON document each.

    <settings prefix><tenant>/settings   {"v": 1, "settings": {...}, "mac": "<HMAC-SHA256>"}

The settings prefix is a sibling of the checkpoint prefix (``weekly-shop/`` →
``weekly-shop-settings/``), not inside it: the sessions' 30-day lifecycle rule would delete the
settings of a workspace that saved them a month ago. Removing the app deletes the document with
the workspace's other data (``bot.steps.uninstall``). Its MAC covers the tenant, the schema version
and the body (key derived from the checkpoint signing key): a document edited in S3, or copied
from another workspace, is refused as tampered and the workspace falls back to the defaults.

Saving never reads-then-writes blindly (the race two admins saving at once run):

    admin A opens the modal   GET  -> ETag e1
    admin B opens the modal   GET  -> ETag e1
    A saves                   PUT If-Match: e1  -> 200, ETag e2
    B saves                   PUT If-Match: e1  -> 412: B is told the settings changed and is
                                                   shown A's values; nothing of A's is lost
    (first save ever: PUT If-None-Match: * , so two first saves cannot both win)

Reading is one GET per lazy run, conditional on the ETag a warm container already holds
(``If-None-Match``: S3 answers 304 Not Modified with no body when nothing changed), so a saved
change holds on the very next click in every container.

Schema versions: ``SCHEMA_VERSION`` is written; an older document is upgraded as it is read
(``UPGRADES``, one function per older version, oldest first); a newer one (written by newer code,
then rolled back) is not used and not overwritten.
"""

from __future__ import annotations

import hashlib
import hmac
import json
import threading
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Literal

from botocore.exceptions import BotoCoreError, ClientError

from workflow.persistence.s3_client import (
    http_status,
    is_conditional_conflict,
    is_missing,
    is_precondition_failed,
)
from workflow.persistence.s3_client import store_error as _store_error
from workflow.persistence.s3_keys import sibling_prefix
from workflow.persistence.store import validate_id

from .workspace_settings import DEFAULT_ORDER_DELAY, WorkspaceSettings

SCHEMA_VERSION = 3  # 2 added order_delay, the undo window; 3 orders, where orders go


def _v1_to_v2(body: dict[str, Any]) -> dict[str, Any]:
    """Saved before the undo window: the default one (2 minutes)."""
    if not isinstance(body, dict) or "order_delay" in body:
        raise ValueError("not a version 1 settings document")
    return {**body, "order_delay": DEFAULT_ORDER_DELAY}


def _v2_to_v3(body: dict[str, Any]) -> dict[str, Any]:
    """Saved before a workspace chose where its orders go: where the deploy sends them."""
    if not isinstance(body, dict) or "orders" in body:
        raise ValueError("not a version 2 settings document")
    return {**body, "orders": None}


# Older schema versions' bodies to the next version's, oldest first. A function here must take
# any body its version wrote and raise ValueError otherwise.
UPGRADES: dict[int, Callable[[dict[str, Any]], dict[str, Any]]] = {1: _v1_to_v2, 2: _v2_to_v3}

Problem = Literal["tampered", "newer"]


class SettingsChanged(Exception):
    """The document changed since it was read (another admin saved first): nothing was saved."""


def settings_prefix(checkpoint_prefix: str) -> str:
    """``weekly-shop/`` → ``weekly-shop-settings/`` (``settings/`` for the bucket's root)."""
    return sibling_prefix(checkpoint_prefix, "settings")


def settings_key(prefix: str, tenant: str) -> str:
    return f"{workspace_folder(prefix, tenant)}settings"


def workspace_folder(prefix: str, tenant: str) -> str:
    """The workspace's folder under the settings prefix (what its removal deletes)."""
    return f"{prefix}{validate_id(tenant, 'tenant ID')}/"


def _mac(key: bytes, tenant: str, version: int, body: Any) -> str:
    data = json.dumps([tenant, version, body], sort_keys=True, separators=(",", ":")).encode()
    return hmac.new(key, data, hashlib.sha256).hexdigest()


def encode(key: bytes, tenant: str, settings: WorkspaceSettings) -> bytes:
    body = settings.to_json()
    mac = _mac(key, tenant, SCHEMA_VERSION, body)
    return json.dumps({"v": SCHEMA_VERSION, "settings": body, "mac": mac}).encode()


def decode(key: bytes, tenant: str, raw: bytes) -> WorkspaceSettings | Problem:
    """The settings in ``raw``; "tampered" if they are not what this app signed for ``tenant``
    (or do not pass their checks), "newer" if a newer schema wrote them."""
    try:
        data = json.loads(raw)
        version, body, mac = data["v"], data["settings"], data["mac"]
        if not isinstance(version, int) or isinstance(version, bool) or version < 1:
            return "tampered"
        if not isinstance(mac, str) or not hmac.compare_digest(
            mac, _mac(key, tenant, version, body)
        ):
            return "tampered"
        if version > SCHEMA_VERSION:
            return "newer"
        for older in range(version, SCHEMA_VERSION):
            body = UPGRADES[older](body)
        return WorkspaceSettings.from_json(body)
    except (ValueError, TypeError, KeyError, AttributeError):
        return "tampered"


@dataclass(frozen=True)
class Loaded:
    """What a read found: the saved settings (None: nothing saved, or not usable), the ETag to
    save over (None: nothing there), and why saved settings are not used, if they are not."""

    saved: WorkspaceSettings | None = None
    etag: str | None = None
    problem: Problem | None = None


class S3WorkspaceSettings:
    """Each workspace's settings document in S3, read through a per-container cache.

    ``read`` makes one GET, conditional on the cached ETag (a 304 costs no body and no
    signature check); ``save`` one conditional PUT. ``StoreError`` for anything else S3 says.
    """

    def __init__(self, bucket: str, prefix: str, s3_client: Any, key: bytes) -> None:
        self.s3 = s3_client
        self.bucket = bucket
        self.prefix = prefix
        self.key = key
        self._mutex = threading.Lock()
        self._cache: dict[str, Loaded] = {}

    def read(self, tenant: str) -> Loaded:
        with self._mutex:
            cached = self._cache.get(tenant)
        args: dict[str, Any] = {"Bucket": self.bucket, "Key": settings_key(self.prefix, tenant)}
        if cached is not None and cached.etag:
            args["IfNoneMatch"] = cached.etag
        try:
            response = self.s3.get_object(**args)
            raw, etag = response["Body"].read(), str(response["ETag"])
        except ClientError as exc:
            if cached is not None and http_status(exc) == 304:
                return cached
            if not is_missing(exc):
                raise _store_error("get workspace settings", exc) from exc
            loaded = Loaded()
        except BotoCoreError as exc:
            raise _store_error("get workspace settings", exc) from exc
        else:
            found = decode(self.key, tenant, raw)
            if isinstance(found, str):
                loaded = Loaded(etag=etag, problem=found)
            else:
                loaded = Loaded(saved=found, etag=etag)
        if loaded == cached:  # (nothing saved, still): the same object, so callers keep theirs
            return cached
        with self._mutex:
            self._cache[tenant] = loaded
        return loaded

    def save(self, tenant: str, settings: WorkspaceSettings, etag: str | None) -> Loaded:
        """Write ``settings`` if the document is still the one ``etag`` names (None: if there
        is none). Raises :class:`SettingsChanged` if another save got there first."""
        condition = {"IfMatch": etag} if etag else {"IfNoneMatch": "*"}
        for attempt in (1, 2):
            try:
                answer = self.s3.put_object(
                    Bucket=self.bucket,
                    Key=settings_key(self.prefix, tenant),
                    Body=encode(self.key, tenant, settings),
                    ContentType="application/json",
                    ServerSideEncryption="AES256",
                    **condition,
                )
                break
            except ClientError as exc:
                if is_precondition_failed(exc) or (etag and is_missing(exc)):
                    raise SettingsChanged(tenant) from exc
                if is_conditional_conflict(exc):  # S3's 409: another conditional write on
                    if attempt == 1:  # the key is in flight; once more, then it won
                        continue
                    raise SettingsChanged(tenant) from exc
                raise _store_error("put workspace settings", exc) from exc
            except BotoCoreError as exc:
                raise _store_error("put workspace settings", exc) from exc
        loaded = Loaded(saved=settings, etag=str(answer["ETag"]))
        with self._mutex:
            self._cache[tenant] = loaded
        return loaded

    def forget(self, tenant: str) -> None:
        """Drop the cached copy (the workspace's folder was deleted: ``bot.steps.uninstall``)."""
        with self._mutex:
            self._cache.pop(tenant, None)
