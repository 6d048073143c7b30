"""What every listener needs, built once per cold start from Settings: clients are injected.

Nothing here touches the network when it is built: the S3 client is made on first use (the ack
path never needs it), and the Claude shopper imports the anthropic SDK only when it writes. The
workflow engine, the stores and the shopper are imported by the properties that build them, so
an ack path (which uses only the settings, the Web clients and the rules) never loads them.
"""

from __future__ import annotations

import functools
import hashlib
import hmac
import logging
import time
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING, Any

from slack_sdk import WebClient

from bot.slack.client import Renew, RenewingWebClient, make_web_client
from bot.slack.outbox import Outbox
from bot.steps.rules import Rules, closed_text

from .settings import Secret, Settings

if TYPE_CHECKING:
    from bot.orders.place import OrderDesk
    from bot.records.history import History
    from bot.records.order_choice import OrderChoice
    from bot.records.receipts import Receipts
    from bot.records.timers import Timers
    from bot.records.weekly import WeeklySchedules
    from bot.records.workspace_secrets import WorkspaceSecrets
    from bot.records.workspace_settings import WorkspaceSettings
    from bot.records.workspace_settings_store import Loaded, S3WorkspaceSettings
    from bot.slack.installs import ByWorkspace
    from bot.steps.lost import LostRuns
    from bot.steps.settings import Desk
    from bot.steps.turn import Sessions
    from workflow.engine.versions import WorkflowVersions
    from workflow.persistence.lock import SessionLock
    from workflow.persistence.session import SessionCheckpoints
    from workflow.persistence.signing import CheckpointSigner
    from workflow.persistence.store import CheckpointStore
    from workflow.shop.shopper import Shopper


class _LazyClient:
    """A boto3 client made on its first call (a cold start that never needs it never pays)."""

    def __init__(self, service: str, config: Any = None) -> None:
        self.service = service
        self.config = config
        self._client: Any = None

    def __getattr__(self, name: str) -> Any:
        if self._client is None:
            import boto3
            from botocore.config import Config

            config = self.config or Config(retries={"mode": "standard", "max_attempts": 5})
            self._client = boto3.client(self.service, config=config)
        return getattr(self._client, name)


log = logging.getLogger(__name__)


@dataclass
class Runtime:
    settings: Settings
    web: WebClient
    s3_client: Any = None
    scheduler_client: Any = None
    ssm_client: Any = None
    shopper_factory: Callable[[], Shopper] | None = None
    clock: Callable[[], float] = time.time
    _store: CheckpointStore | None = field(default=None, repr=False)
    _lock: SessionLock | None = field(default=None, repr=False)
    _workspaces: dict[tuple[str, str], Runtime] = field(default_factory=dict, repr=False)
    _renew: Renew | None = field(default=None, repr=False)  # a workspace's: its token again
    # A workspace's own settings (``configured``): None means the deploy's, from the environment.
    loaded: Loaded | None = field(default=None, repr=False)
    _settings_store: S3WorkspaceSettings | None = field(default=None, repr=False)
    _configured: dict[int, Runtime] = field(default_factory=dict, repr=False)

    @classmethod
    def from_settings(cls, settings: Settings, **clients: Any) -> Runtime:
        web = clients.pop("web", None) or make_web_client(settings)
        return cls(settings=settings, web=web, **clients)

    @functools.cached_property
    def oauth(self) -> tuple[Any, ByWorkspace] | None:
        """Many workspaces: Bolt's OAuth flow and the authorize reading its installations
        (``bot.slack.installs``); None with one workspace and SLACK_BOT_TOKEN."""
        if not self.settings.multi_workspace:
            return None
        from bot.slack.installs import oauth_of

        return oauth_of(self.settings)

    def for_workspace(self, team_id: str) -> Runtime:
        """This runtime as the workspace ``team_id`` sees it: its own bot token (itself, with
        one workspace). Raises :class:`~bot.slack.installs.NotInstalled` for a workspace without an
        installation. The S3 client, the store and the lock are shared. Its WebClients follow
        the workspace's token once when Slack refuses theirs (``bot.slack.client``); the token
        read then is the cache's, so the next call here builds a runtime with it."""
        oauth = self.oauth
        if oauth is None:
            return self
        from bot.slack.installs import NotInstalled

        bot = oauth[1].bot(None, team_id)
        if bot is None:
            raise NotInstalled(team_id)
        key = (team_id, bot.bot_token)
        found = self._workspaces.get(key)
        if found is None:
            settings = self.settings.replace(slack_bot_token=Secret(bot.bot_token))
            renew = functools.partial(oauth[1].renewed, team_id)
            found = replace(
                self,
                settings=settings,
                web=make_web_client(settings, renew),
                s3_client=self._s3(),
                scheduler_client=self._scheduler,
                ssm_client=self._ssm,
                _store=self.store,
                _lock=self.lock,
                _workspaces={},
                _renew=renew,
                _settings_store=self.settings_store,
                _configured={},
            )
            self._workspaces = {k: v for k, v in self._workspaces.items() if k[0] != team_id}
            self._workspaces[key] = found
        return found

    def configured(self, team_id: str) -> Runtime:
        """:meth:`for_workspace`, with the workspace's own settings: one S3 request (a GET
        conditional on the ETag this container holds, ``bot.records.workspace_settings_store``),
        so a change saved in any container holds on the next lazy run here. Never in an ack
        path."""
        here = self.for_workspace(team_id)
        loaded = here.settings_store.read(team_id)
        if here.loaded is loaded:
            return here
        found = here._configured.get(id(loaded))
        if found is None or found.loaded is not loaded:
            found = replace(here, loaded=loaded, _workspaces={}, _configured={})
            here._configured = {id(loaded): found}  # the newest read only
        return found

    @property
    def settings_store(self) -> S3WorkspaceSettings:
        """Every workspace's settings document, read through this container's cache."""
        if self._settings_store is None:
            from bot.records.settings_generations import generations_of
            from bot.records.workspace_settings_store import S3WorkspaceSettings, settings_prefix

            s = self.settings
            self._settings_store = S3WorkspaceSettings(
                s.checkpoint_bucket,
                settings_prefix(s.checkpoint_prefix),
                self._s3(),
                self._lasting_key(b"weekly-shop settings v1"),
                generations_of(self._ssm, s.workspace_secrets_path),  # (rollbacks: its module)
            )
        return self._settings_store

    def settings_desk(self, ack: bool = False) -> Desk:
        """What opening and saving the settings need (``bot.steps.settings``); ``ack``: with
        the ack path's WebClient (short timeout, no retry sleeps)."""
        from bot.steps.settings import Desk

        s = self.settings
        deploy_keys = {
            name
            for name, key in (
                ("instacart-api-key", s.instacart_api_key),
                ("webhook-signing-secret", s.order_webhook_secret),
            )
            if key is not None
        }
        return Desk(
            web=self.ack_web if ack else self.web,
            store=self.ack_settings_store if ack else self.settings_store,
            defaults=self.defaults,
            installer=self.installer_of,
            can_schedule=self.weekly_schedules is not None,
            clock=self.clock,
            secrets=self.ack_workspace_secrets if ack else self.workspace_secrets,
            deploy_keys=frozenset(deploy_keys),
            deploy_webhook_url=s.order_webhook_url,
            deploy_keys_serve=s.deploy_keys_serve,
            pinned=s.order_webhook_pinned_hosts,
        )

    def installer_of(self, team_id: str) -> str | None:
        """Who added the app to ``team_id`` (its installation's user), None with one workspace."""
        if self.oauth is None:
            return None
        store = self.oauth[0].settings.installation_store
        found = store.find_installation(enterprise_id=None, team_id=team_id)
        return str(found.user_id) if found is not None and found.user_id else None

    @functools.cached_property
    def ack_settings_store(self) -> S3WorkspaceSettings:
        """The settings as the save's ack reads and writes them: its own S3 client, one attempt
        and short timeouts (``ACK_S3_CONFIG``), so a slow S3 is said within Slack's 3 s."""
        from bot.records.settings_generations import generations_of
        from bot.records.workspace_settings_store import S3WorkspaceSettings
        from workflow.persistence.s3_client import ACK_S3_CONFIG, make_s3_client

        store, ssm = self.settings_store, _LazyClient("ssm", ACK_S3_CONFIG)
        return S3WorkspaceSettings(
            store.bucket,
            store.prefix,
            make_s3_client(ACK_S3_CONFIG),
            store.key,
            generations_of(ssm, self.settings.workspace_secrets_path),
        )

    @functools.cached_property
    def defaults(self) -> WorkspaceSettings:
        """The settings of a workspace that saved none: the deploy's environment."""
        from bot.records.order_choice import OrderChoice
        from bot.records.workspace_settings import WorkspaceSettings

        s = self.settings
        return WorkspaceSettings(
            approvers=tuple(sorted(s.approver_ids)),
            no_self_approval=s.no_self_approval,
            approvals_needed=s.approvals_needed,
            rounds=s.max_rounds,
            remind_after=s.remind_after,
            max_reminders=s.max_reminders,
            expire_after=s.expire_after,
            order_delay=s.order_delay,
            orders=OrderChoice(
                destination=s.order_destination,
                instacart_server=s.instacart_server,
                webhook_url=s.order_webhook_url,
            ),
        )

    @property
    def current(self) -> WorkspaceSettings:
        """The settings this runtime works with: the workspace's saved ones, else the
        defaults. Saved ones that cannot be read (``loaded.problem``) show the defaults too, but
        close the rules: nobody may answer a basket (``bot.steps.rules``)."""
        saved = self.loaded.saved if self.loaded is not None else None
        return saved if saved is not None else self.defaults

    @functools.cached_property
    def signer(self) -> CheckpointSigner:
        from workflow.persistence.signing import CheckpointSigner

        key = self.settings.checkpoint_signing_key
        if key is not None:
            return CheckpointSigner(key.get_secret_value().encode())
        return CheckpointSigner.derived(self.settings.slack_signing_secret.get_secret_value())

    @functools.cached_property
    def metadata_key(self) -> bytes:
        """The key of the change modal's metadata MAC, derived from the signing secret."""
        secret = self.settings.slack_signing_secret.get_secret_value().encode()
        return hmac.new(secret, b"weekly-shop modal metadata v1", hashlib.sha256).digest()

    def s3(self) -> Any:
        """The bot's S3 client (made on first use), for what reads or deletes by prefix."""
        return self._s3()

    def _s3(self) -> Any:
        if self.s3_client is None:
            from workflow.persistence.s3_client import make_s3_client

            self.s3_client = make_s3_client()
        return self.s3_client

    @property
    def store(self) -> CheckpointStore:
        if self._store is None:
            from workflow.persistence.s3_store import S3CheckpointStore
            from workflow.shop.records import SHOP_RECORDS

            s = self.settings
            self._store = S3CheckpointStore(
                s.checkpoint_bucket, s.checkpoint_prefix, self._s3(), codec=SHOP_RECORDS
            )
        return self._store

    @property
    def lock(self) -> SessionLock:
        if self._lock is None:
            from workflow.persistence.s3_lock import S3SessionLock

            s = self.settings
            self._lock = S3SessionLock(
                s.checkpoint_bucket, s.checkpoint_prefix, self._s3(), clock=self.clock
            )
        return self._lock

    @functools.cached_property
    def receipts(self) -> Receipts:
        """Which checkpoint the channel shows, per session (see ``bot.records.receipts``)."""
        from bot.records.receipts import S3Receipts

        s = self.settings
        return S3Receipts(s.checkpoint_bucket, s.checkpoint_prefix, self._s3())

    def _lasting_key(self, label: bytes) -> bytes:
        """A key for what outlives a request (a timer armed days ago, an outcome kept for a
        year): from the checkpoint key where there is one, so that rotating the Slack signing
        secret strands none of it."""
        s = self.settings
        root = s.checkpoint_signing_key or s.slack_signing_secret
        return hmac.new(root.get_secret_value().encode(), label, hashlib.sha256).digest()

    @functools.cached_property
    def history(self) -> History:
        """Each ended session's outcome, kept under its own prefix (``bot.records.history``)."""
        from bot.records.history import S3History, history_prefix

        s = self.settings
        return S3History(
            s.checkpoint_bucket,
            history_prefix(s.checkpoint_prefix),
            self._s3(),
            self._lasting_key(b"weekly-shop history v1"),
        )

    @functools.cached_property
    def timers(self) -> Timers | None:
        """A waiting basket's reminders and expiry on EventBridge Scheduler
        (``bot.records.timers``), when TIMER_GROUP, TIMER_TARGET_ARN and TIMER_ROLE_ARN say where;
        its client is made on first use."""
        s = self.settings
        if not s.has_timers:
            return None
        from bot.records.timers import Plan, Timers

        return Timers(
            self._scheduler,
            group=s.timer_group,
            target_arn=s.timer_target_arn,
            role_arn=s.timer_role_arn,
            key=self._lasting_key(b"weekly-shop timer v1"),
            plan=Plan(
                self.current.remind_after, self.current.max_reminders, self.current.expire_after
            ),
            clock=self.clock,
        )

    @functools.cached_property
    def weekly_schedules(self) -> WeeklySchedules | None:
        """Each workspace's weekly run, one recurring Scheduler schedule in the timers' group
        (``bot.records.weekly``); None without TIMER_GROUP, TIMER_TARGET_ARN and TIMER_ROLE_ARN."""
        s = self.settings
        if not s.has_timers:
            return None
        from bot.records.weekly import WeeklySchedules

        return WeeklySchedules(
            self._scheduler,
            group=s.timer_group,
            target_arn=s.timer_target_arn,
            role_arn=s.timer_role_arn,
            key=self._lasting_key(b"weekly-shop weekly run v1"),
        )

    @property
    def _scheduler(self) -> Any:
        """The Scheduler client the timers and the weekly runs of every workspace share, made
        on its first call."""
        if self.scheduler_client is None:
            self.scheduler_client = _LazyClient("scheduler")
        return self.scheduler_client

    @functools.cached_property
    def outbox(self) -> Outbox:
        """What the bot posts where, through the WebClient with slack_sdk's retries."""
        return Outbox(self.web, self.current.rounds, self.clock)

    @functools.cached_property
    def ack_outbox(self) -> Outbox:
        """The outbox of the ack path: no retry sleeps inside Slack's 3 seconds."""
        return Outbox(self.ack_web, self.current.rounds, self.clock)

    @functools.cached_property
    def rules(self) -> Rules:
        c = self.current
        hold = c.order_delay if self.timers is not None else 0
        closed = closed_text(self.loaded.problem if self.loaded is not None else None)
        return Rules(
            frozenset(c.approvers), c.no_self_approval, c.rounds, c.approvals_needed, hold, closed
        )

    @functools.cached_property
    def lost_runs(self) -> LostRuns:
        """What turns a lazy run Lambda gave up on into a message (``bot.steps.lost``)."""
        from bot.steps.lost import LostRuns
        from bot.steps.uninstall import forget_workspace

        s = self.settings
        return LostRuns(
            self.outbox,
            s.slack_signing_secret.get_secret_value(),
            self.metadata_key,
            s3=self._s3(),
            bucket=s.checkpoint_bucket,
            prefix=s.checkpoint_prefix,
            schedule_channel=s.shop_channel,
            schedule_tenant=lambda: self.settings.shop_team or self.web.auth_test()["team_id"],
            timers=self.timers,
            weekly=self.weekly_schedules,
            outbox_for=lambda tenant: self.for_workspace(tenant).outbox,
            forget=lambda team, said_at: forget_workspace(self, team, said_at),
        )

    @functools.cached_property
    def sessions(self) -> Sessions:
        """What every turn of a session needs (``bot.steps.turn``); makes the S3 client."""
        from bot.records.timers import BasketTimers
        from bot.steps.turn import Sessions

        return Sessions(
            workflow=self.workflow,
            checkpoints=self.checkpoints,
            lock=self.lock,
            lock_ttl_seconds=self.settings.lock_ttl_seconds,
            lock_wait_seconds=self.settings.lock_wait_seconds,
            receipts=self.receipts,
            outbox=self.outbox,
            history=self.history,
            timers=BasketTimers(self.timers),
            orders=self.order_desk,
        )

    @functools.cached_property
    def order_desk(self) -> OrderDesk:
        """Where this workspace's approved baskets go, each once (``bot.orders``): a canvas
        checklist in the basket's channel, made with this workspace's token, or the
        household's signed webhook (``ORDER_DESTINATION``)."""
        from bot.orders.place import OrderDesk
        from bot.records.orders import S3Orders, orders_prefix

        s = self.settings
        records = S3Orders(
            s.checkpoint_bucket,
            orders_prefix(s.checkpoint_prefix),
            self._s3(),
            self._lasting_key(b"weekly-shop orders v1"),
        )
        from bot.orders.destinations import destination_of

        destination = destination_of(self.order_choice, s, self.web, self.workspace_secrets)
        return OrderDesk(records, destination, self.clock)

    @property
    def order_choice(self) -> OrderChoice:
        """Where this workspace's orders go: its settings' choice, else the deploy's."""
        saved = self.current.orders
        if saved is not None:
            return saved
        assert self.defaults.orders is not None  # (the defaults always say)
        return self.defaults.orders

    @functools.cached_property
    def workspace_secrets(self) -> WorkspaceSecrets | None:
        """Every workspace's write-only keys (``bot.records.workspace_secrets``), when
        WORKSPACE_SECRETS_PATH says where; its SSM client is made on first use."""
        return self._secrets(self._ssm)

    @functools.cached_property
    def ack_workspace_secrets(self) -> WorkspaceSecrets | None:
        """The same, as a settings save's ack stores a key: one attempt, short timeouts (its
        client made only if the save needs SSM)."""
        from workflow.persistence.s3_client import ACK_S3_CONFIG

        return self._secrets(_LazyClient("ssm", ACK_S3_CONFIG))

    def _secrets(self, ssm: Any) -> WorkspaceSecrets | None:
        s = self.settings
        if not s.workspace_secrets_path:
            return None
        from bot.records.workspace_secrets import WorkspaceSecrets

        return WorkspaceSecrets(ssm, s.workspace_secrets_path, s.workspace_secrets_key)

    @property
    def _ssm(self) -> Any:
        if self.ssm_client is None:
            self.ssm_client = _LazyClient("ssm")
        return self.ssm_client

    @functools.cached_property
    def workspace_url(self) -> str:
        """``https://<workspace>.slack.com/`` (one ``auth.test`` per cold start), for links."""
        try:
            return str(self.web.auth_test()["url"])
        except Exception as exc:  # noqa: BLE001 - links then open Slack's own page
            log.error("auth.test failed: %s", exc)
            return "https://slack.com/"

    def permalink(self, channel: str, ts: str) -> str:
        """A message's link, as Slack writes them (``…/archives/<channel>/p<ts without .>``)."""
        return f"{self.workspace_url.rstrip('/')}/archives/{channel}/p{ts.replace('.', '')}"

    @functools.cached_property
    def ack_web(self) -> WebClient:
        """The WebClient for calls made before the ack (``views.open``, a refusal): a short
        timeout and no retry sleeps, since Slack's 3 seconds include them."""
        return RenewingWebClient(
            renew=self._renew,
            token=self.settings.slack_bot_token.get_secret_value(),
            base_url=self.settings.slack_api_url,
            timeout=2,
            retry_handlers=[],
        )

    def shopper(self) -> Shopper:
        from workflow.shop.offline import OfflineShopper
        from workflow.shop.shopper import ClaudeShopper

        if self.shopper_factory is not None:
            return self.shopper_factory()
        key = self.settings.anthropic_api_key
        if key is None:
            return OfflineShopper()
        return ClaudeShopper(
            model=self.settings.anthropic_model,
            api_key=key.get_secret_value(),
            timeout=self.settings.anthropic_timeout_seconds,
        )

    def workflow(self) -> WorkflowVersions:
        """Every version of the shop's graph this code resumes (``workflow.shop.graph``)."""
        from workflow.shop import graph

        return graph.shop_versions(self.shopper(), self.current.rounds)

    def checkpoints(self, tenant_id: str, session_id: str) -> SessionCheckpoints:
        from workflow.persistence.session import SessionCheckpoints

        return SessionCheckpoints(self.store, self.signer, tenant_id, session_id)
