"""What builds the stores and records, once per cold start, shared by every workspace (each is
keyed by tenant): the checkpoint store, the session lock and the signer; the receipts, outcome
and order records; each workspace's settings document and write-only keys; each person's
Kroger refresh token; and the keys that sign what outlives a request. Nothing is built, and no
client made, until first asked for."""

from __future__ import annotations

import functools
import hashlib
import hmac
import time
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from bot.settings import Settings

from .clients import AwsClients, LazyClient

if TYPE_CHECKING:
    from bot.records.drafts import S3Drafts
    from bot.records.history import History
    from bot.records.kroger_accounts import KrogerAccounts
    from bot.records.orders import S3Orders
    from bot.records.receipts import Receipts
    from bot.records.workspace_secrets import WorkspaceSecrets
    from bot.records.workspace_settings_store import S3WorkspaceSettings
    from workflow.persistence.lock import SessionLock
    from workflow.persistence.session import SessionCheckpoints
    from workflow.persistence.signing import CheckpointSigner
    from workflow.persistence.store import CheckpointStore


class Records:
    """The bot's S3 (and SSM) side, from the deploy's settings and the shared clients."""

    def __init__(
        self, settings: Settings, aws: AwsClients, clock: Callable[[], float] = time.time
    ) -> None:
        self.settings = settings
        self.aws = aws
        self.clock = clock

    def lasting_key(self, label: bytes) -> bytes:
        """A key for what outlives a request (a timer armed days ago, an outcome kept for a
        year): from the checkpoint key where there is one, so that rotating the Slack signing
        secret strands none of it."""
        s = self.settings
        root = s.checkpoint_signing_key or s.slack_signing_secret
        return hmac.new(root.get_secret_value().encode(), label, hashlib.sha256).digest()

    @functools.cached_property
    def metadata_key(self) -> bytes:
        """The key of the modals' metadata MAC, derived from the signing secret."""
        secret = self.settings.slack_signing_secret.get_secret_value().encode()
        return hmac.new(secret, b"weekly-shop modal metadata v1", hashlib.sha256).digest()

    @functools.cached_property
    def signer(self) -> CheckpointSigner:
        from workflow.persistence.signing import CheckpointSigner

        key = self.settings.checkpoint_signing_key
        if key is not None:
            return CheckpointSigner(key.get_secret_value().encode())
        return CheckpointSigner.derived(self.settings.slack_signing_secret.get_secret_value())

    @functools.cached_property
    def store(self) -> CheckpointStore:
        from workflow.persistence.s3_store import S3CheckpointStore
        from workflow.shop.records import SHOP_RECORDS

        s = self.settings
        return S3CheckpointStore(
            s.checkpoint_bucket, s.checkpoint_prefix, self.aws.s3(), codec=SHOP_RECORDS
        )

    @functools.cached_property
    def lock(self) -> SessionLock:
        from workflow.persistence.s3_lock import S3SessionLock

        s = self.settings
        return S3SessionLock(
            s.checkpoint_bucket,
            s.checkpoint_prefix,
            self.aws.s3(),
            clock=self.clock,
            retry_after=s.lock_retry_after_seconds,
        )

    def checkpoints(self, tenant_id: str, session_id: str) -> SessionCheckpoints:
        from workflow.persistence.session import SessionCheckpoints

        return SessionCheckpoints(self.store, self.signer, tenant_id, session_id)

    @functools.cached_property
    def receipts(self) -> Receipts:
        """Which checkpoint the channel shows, per session (see ``bot.records.receipts``)."""
        from bot.records.receipts import S3Receipts

        s = self.settings
        return S3Receipts(s.checkpoint_bucket, s.checkpoint_prefix, self.aws.s3())

    @functools.cached_property
    def drafts(self) -> S3Drafts:
        """Which message shows a /shop's basket 1 while it is written (``bot.records.drafts``)."""
        from bot.records.drafts import S3Drafts

        s = self.settings
        return S3Drafts(s.checkpoint_bucket, s.checkpoint_prefix, self.aws.s3())

    @functools.cached_property
    def history(self) -> History:
        """Each ended session's outcome, kept under its own prefix (``bot.records.history``)."""
        from bot.records.history import S3History, history_prefix

        s = self.settings
        return S3History(
            s.checkpoint_bucket,
            history_prefix(s.checkpoint_prefix),
            self.aws.s3(),
            self.lasting_key(b"weekly-shop history v1"),
        )

    @functools.cached_property
    def order_records(self) -> S3Orders:
        """One signed record per approved basket's order (``bot.records.orders``)."""
        from bot.records.orders import S3Orders, orders_prefix

        s = self.settings
        return S3Orders(
            s.checkpoint_bucket,
            orders_prefix(s.checkpoint_prefix),
            self.aws.s3(),
            self.lasting_key(b"weekly-shop orders v1"),
        )

    @functools.cached_property
    def settings_store(self) -> S3WorkspaceSettings:
        """Every workspace's settings document, read through this container's cache."""
        from bot.records.settings_generations import generations_of
        from bot.records.workspace_settings_store import S3WorkspaceSettings, settings_prefix

        s = self.settings
        return S3WorkspaceSettings(
            s.checkpoint_bucket,
            settings_prefix(s.checkpoint_prefix),
            self.aws.s3(),
            self.lasting_key(b"weekly-shop settings v1"),
            generations_of(self.aws.ssm, s.workspace_secrets_path),  # (rollbacks: its module)
        )

    @functools.cached_property
    def ack_settings_store(self) -> S3WorkspaceSettings:
        """The settings as the save's ack reads and writes them: its own S3 client, one attempt
        and short timeouts (``ACK_S3_CONFIG``), so a slow S3 is said within Slack's 3 s."""
        from bot.records.settings_generations import generations_of
        from bot.records.workspace_settings_store import S3WorkspaceSettings
        from workflow.persistence.s3_client import ACK_S3_CONFIG, make_s3_client

        store, ssm = self.settings_store, LazyClient("ssm", ACK_S3_CONFIG)
        return S3WorkspaceSettings(
            store.bucket,
            store.prefix,
            make_s3_client(ACK_S3_CONFIG),
            store.key,
            generations_of(ssm, self.settings.workspace_secrets_path),
        )

    @functools.cached_property
    def workspace_secrets(self) -> WorkspaceSecrets | None:
        """Every workspace's write-only keys (``bot.records.workspace_secrets``), when
        WORKSPACE_SECRETS_PATH says where; its SSM client is made on first use."""
        return self._secrets(self.aws.ssm)

    @functools.cached_property
    def ack_workspace_secrets(self) -> WorkspaceSecrets | None:
        """The same, as a settings save's ack stores a key: one attempt, short timeouts (its
        client made only if the save needs SSM)."""
        from workflow.persistence.s3_client import ACK_S3_CONFIG

        return self._secrets(LazyClient("ssm", ACK_S3_CONFIG))

    @functools.cached_property
    def kroger_accounts(self) -> KrogerAccounts | None:
        """Each person's connected Kroger account (``bot.records.kroger_accounts``): beside
        the workspaces' keys, under the same path and KMS key; None without
        WORKSPACE_SECRETS_PATH. Its SSM client is made on first use."""
        s = self.settings
        if not s.workspace_secrets_path:
            return None
        from bot.records.kroger_accounts import KrogerAccounts

        return KrogerAccounts(
            self.aws.ssm, s.workspace_secrets_path, s.workspace_secrets_key, clock=self.clock
        )

    def _secrets(self, ssm: Any) -> WorkspaceSecrets | None:
        s = self.settings
        if not s.workspace_secrets_path:
            return None
        from bot.records.workspace_secrets import WorkspaceSecrets

        return WorkspaceSecrets(ssm, s.workspace_secrets_path, s.workspace_secrets_key)
