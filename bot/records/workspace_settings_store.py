"""Where a workspace's settings become S3 bytes: one signed, versioned JSON document each.

    <settings prefix><tenant>/settings   {"v": 3, "settings": {...}, "mac": "<HMAC-SHA256>",
                                          "generation": 7, "generation_mac": "<HMAC-SHA256>"}

The settings prefix is a sibling of the checkpoint prefix (``weekly-shop/`` →
``weekly-shop-settings/``), not inside it: the sessions' 30-day lifecycle rule would delete the
settings of a workspace that saved them a month ago. Removing the app deletes the document with
the workspace's other data (``bot.steps.uninstall``). Its MAC covers the tenant, the schema version
and the body (key derived from the checkpoint signing key); ``generation_mac`` covers them and the
generation. A document edited in S3, garbled, or copied from another workspace is refused as
"tampered"; one a newer schema wrote, "newer"; an older signed copy put back (a generation below
the one ``bot.records.settings_generations`` recorded, or no document where one was saved),
"rolled-back". None of them is used, and the deploy's defaults do not stand in for them: the
workspace answers no basket until an admin saves again (``bot.steps.rules``: the rules are
closed). The generation sits beside the body, not in it (since version 3): a deploy rolled
back to code from before generations read those documents as it did.

Saving never reads-then-writes blindly (the race two admins saving at once run):

    admin A opens the modal   GET  -> ETag e1
    admin B opens the modal   GET  -> ETag e1
    A saves                   PUT If-Match: e1  -> 200, ETag e2
    B saves                   PUT If-Match: e1  -> 412: B is told the settings changed and is
                                                   shown A's values; nothing of A's is lost
    (first save ever: PUT If-None-Match: * , so two first saves cannot both win)

Reading is one GET per lazy run, conditional on the ETag a warm container already holds
(``If-None-Match``: S3 answers 304 Not Modified with no body when nothing changed), so a saved
change holds on the very next click in every container. With a generations record, a read that
found a new document (or none) also asks it once (``CHECK_EVERY``: at least that often anyway).

A save's generation is the one read before it, plus one, and it is recorded after the PUT:

    admin saves               PUT If-Match: e6 (generation 7) -> 200
                              PutParameter settings-generation = 7
    (that PutParameter fails) the document says 7, the record 6: read as the latest (a higher
                              generation is never a rollback), logged; only a copy of 6 put
                              back would go unseen, until the next save
    two saves at once         one PUT wins (412 for the other, which records nothing)

A switched-off weekly run's kept fields sit beside the body too (``"kept"``), under a MAC of
their own over the body and the generation: older code reads the document as it did (and
forgets them at its next save).

Schema versions (``bot.records.settings_upgrades``): ``SCHEMA_VERSION`` is written; an older
document is upgraded as it is read (``UPGRADES``, one function per older version, oldest
first); a newer one (written by newer code, then rolled back) is not used and not overwritten.
(Over 300 lines: the document's format, its checks and its conditional store go together.)
"""

from __future__ import annotations

import hashlib
import hmac
import json
import logging
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, replace
from typing import Any, Literal

from botocore.exceptions import BotoCoreError, ClientError

from workflow.errors import StoreError
from workflow.persistence.s3_client import (
    http_status,
    is_conditional_conflict,
    is_missing,
    is_precondition_failed,
)
from workflow.persistence.s3_client import store_error as _store_error
from workflow.persistence.s3_keys import sibling_prefix
from workflow.persistence.store import validate_id

from .settings_generations import CHECK_EVERY, Generations
from .settings_upgrades import SCHEMA_VERSION, UPGRADES
from .workspace_settings import KeptRun, WorkspaceSettings

log = logging.getLogger(__name__)

Problem = Literal["tampered", "newer", "rolled-back"]


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


def _mac(key: bytes, tenant: str, version: int, body: Any, *more: Any) -> str:
    data = [tenant, version, body, *more]
    raw = json.dumps(data, sort_keys=True, separators=(",", ":")).encode()
    return hmac.new(key, raw, hashlib.sha256).hexdigest()


def encode(key: bytes, tenant: str, settings: WorkspaceSettings, generation: int = 0) -> bytes:
    body, v = settings.to_json(), SCHEMA_VERSION
    doc = {"v": v, "settings": body, "mac": _mac(key, tenant, v, body), "generation": generation}
    doc["generation_mac"] = _mac(key, tenant, v, body, generation)
    if settings.weekly_kept is not None:  # (beside the body, as the generation is)
        doc["kept"] = kept = settings.weekly_kept.to_json()
        doc["kept_mac"] = _mac(key, tenant, v, body, generation, kept)
    return json.dumps(doc).encode()


def decode(key: bytes, tenant: str, raw: bytes) -> WorkspaceSettings | Problem:
    """The settings in ``raw``; "tampered" if they are not what this app signed for ``tenant``
    (or do not pass their checks), "newer" if a newer schema wrote them."""
    return read_document(key, tenant, raw)[0]


def read_document(key: bytes, tenant: str, raw: bytes) -> tuple[WorkspaceSettings | Problem, int]:
    """:func:`decode`, and the document's signed generation (0: none, or not to be trusted)."""
    try:
        data = json.loads(raw)
        version, body, mac = data["v"], data["settings"], data["mac"]
        if not isinstance(version, int) or isinstance(version, bool) or version < 1:
            return "tampered", 0
        if not isinstance(mac, str) or not hmac.compare_digest(
            mac, _mac(key, tenant, version, body)
        ):
            return "tampered", 0
        if version > SCHEMA_VERSION:  # (its generation is its schema's business)
            return "newer", 0
        generation = data.get("generation", 0)  # (none before generations: 0)
        if "generation" in data and not (
            isinstance(generation, int)
            and not isinstance(generation, bool)
            and generation >= 0
            and isinstance(data.get("generation_mac"), str)
            and hmac.compare_digest(
                data["generation_mac"], _mac(key, tenant, version, body, generation)
            )
        ):
            return "tampered", 0
        kept = data.get("kept")
        if "kept" in data and not (
            isinstance(data.get("kept_mac"), str)
            and hmac.compare_digest(
                data["kept_mac"], _mac(key, tenant, version, body, generation, kept)
            )
        ):
            return "tampered", 0
        for older in range(version, SCHEMA_VERSION):
            body = UPGRADES[older](body)
        settings = WorkspaceSettings.from_json(body)
        if kept is not None:
            settings = replace(settings, weekly_kept=KeptRun.from_json(kept))
        return settings, generation
    except (ValueError, TypeError, KeyError, AttributeError):
        return "tampered", 0


@dataclass(frozen=True)
class Loaded:
    """What a read found: the saved settings (None: nothing saved, or not usable), the ETag to
    save over (None: nothing there), why saved settings are not used, if they are not, and the
    newest generation known (the document's, or the record's when that is higher): a save over
    this read writes the next one."""

    saved: WorkspaceSettings | None = None
    etag: str | None = None
    problem: Problem | None = None
    generation: int = 0


class S3WorkspaceSettings:
    """Each workspace's settings document in S3, read through a per-container cache: ``read``
    is one GET, conditional on the cached ETag (a 304 costs no body and no signature check),
    asking ``generations`` as the module says; ``save`` one conditional PUT, then the record.
    ``StoreError`` for anything else S3 or the record says."""

    def __init__(
        self,
        bucket: str,
        prefix: str,
        s3_client: Any,
        key: bytes,
        generations: Generations | None = None,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.s3 = s3_client
        self.bucket = bucket
        self.prefix = prefix
        self.key = key
        self.generations = generations
        self.clock = clock
        self._mutex = threading.Lock()
        self._cache: dict[str, Loaded] = {}
        self._checked: dict[str, float] = {}  # when each workspace's record was last asked

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
                return self._unchanged(tenant, cached)
            if not is_missing(exc):
                raise _store_error("get workspace settings", exc) from exc
            if cached is not None and cached.etag is None and not self._due(tenant):
                return cached  # (still none, and compared with the record lately)
            loaded = self._compared(tenant, None, 0, None)
        except BotoCoreError as exc:
            raise _store_error("get workspace settings", exc) from exc
        else:
            found, generation = read_document(self.key, tenant, raw)
            loaded = self._compared(tenant, found, generation, etag)
        return self._keep(tenant, loaded, cached)

    def _compared(
        self, tenant: str, found: WorkspaceSettings | Problem | None, generation: int, etag: Any
    ) -> Loaded:
        """What was found, held against the generation recorded: lower is a copy put back."""
        recorded = self._recorded(tenant)
        if isinstance(found, str):
            return Loaded(etag=etag, problem=found, generation=max(generation, recorded))
        if generation < recorded:  # an older copy put back, or none where one was saved
            return Loaded(etag=etag, problem="rolled-back", generation=recorded)
        return Loaded(saved=found, etag=etag, generation=generation)

    def _unchanged(self, tenant: str, cached: Loaded) -> Loaded:
        """A 304: the cached read, compared again with the record once ``CHECK_EVERY`` has
        passed (the very bytes cached here may have been put back over a later save)."""
        if cached.saved is None or not self._due(tenant):
            return cached
        return self._keep(
            tenant, self._compared(tenant, cached.saved, cached.generation, cached.etag), cached
        )

    def _keep(self, tenant: str, loaded: Loaded, cached: Loaded | None) -> Loaded:
        if loaded == cached:  # the same object, so callers keep what they built on it
            return cached
        with self._mutex:
            self._cache[tenant] = loaded
        return loaded

    def _due(self, tenant: str) -> bool:
        if self.generations is None:
            return False
        with self._mutex:
            checked = self._checked.get(tenant)
        return checked is None or self.clock() - checked >= CHECK_EVERY

    def _recorded(self, tenant: str) -> int:
        if self.generations is None:
            return 0
        recorded = self.generations.recorded(tenant)
        with self._mutex:
            self._checked[tenant] = self.clock()
        return recorded

    def save(self, tenant: str, settings: WorkspaceSettings, etag: str | None) -> Loaded:
        """Write ``settings`` if the document is still the one ``etag`` names (None: if there
        is none), one generation above it. Raises :class:`SettingsChanged` if another save got
        there first."""
        with self._mutex:
            replaced = self._cache.get(tenant)
        if replaced is None or replaced.etag != etag:
            replaced = self.read(tenant)  # (the generation of what this save replaces)
            if replaced.etag != etag:
                raise SettingsChanged(tenant)
        generation = replaced.generation + 1
        condition = {"IfMatch": etag} if etag else {"IfNoneMatch": "*"}
        for attempt in (1, 2):
            try:
                answer = self.s3.put_object(
                    Bucket=self.bucket,
                    Key=settings_key(self.prefix, tenant),
                    Body=encode(self.key, tenant, settings, generation),
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
        loaded = Loaded(saved=settings, etag=str(answer["ETag"]), generation=generation)
        with self._mutex:
            self._cache[tenant] = loaded
        if self.generations is not None:
            try:
                self.generations.record(tenant, generation)
            except StoreError as exc:  # saved: the record lags (the module's timeline)
                log.error("the settings' generation could not be recorded: %s", exc)
        return loaded

    def forget(self, tenant: str) -> None:
        """Drop the cached copy and the recorded generation (the workspace's folder was
        deleted: ``bot.steps.uninstall``). Raises ``StoreError`` if the record stays."""
        with self._mutex:
            self._cache.pop(tenant, None)
            self._checked.pop(tenant, None)
        if self.generations is not None:
            self.generations.forget(tenant)
