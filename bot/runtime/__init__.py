"""The composition root: what every listener needs, wired once per cold start from Settings.

Each concern builds its own clients, in its own module; this one wires them and nothing else:

    clients.py      the AWS clients a cold start shares (S3, Scheduler, SSM), made on first use
    records.py      the stores and records: checkpoints, the session lock, receipts, outcome and
                    order records, each workspace's settings document and write-only keys
    slack_side.py   one workspace's Slack side: its WebClients, outboxes, links; the installs
    schedules.py    the schedules: a basket's timers, each workspace's weekly run
    orders.py       the orders: where a workspace's approved baskets go, each once
    shop.py         the shopper and the workflow versions it runs in
    given.py        what each step is given, built from those: Sessions, HomeTab, Forgetting,
                    LostRuns, Desk, Rules

A :class:`Runtime` is one workspace's view (:meth:`Runtime.for_workspace`: its bot token; with
:meth:`Runtime.configured`, its own saved settings); the clients and the records are shared by
every view. Steps are given what they use (``Sessions``, ``HomeTab``, ``Forgetting``,
``LostRuns``, ``Desk``, ``Rules``), never the runtime. Nothing here touches the network when it
is built, and an ack path (the settings, the Web clients, the rules) loads neither the workflow
engine, the stores nor the shopper: each is imported by the property that builds it.
"""

from __future__ import annotations

import functools
import time
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING, Any

from slack_sdk import WebClient

from bot.settings import Secret, Settings
from bot.slack.client import Renew, make_web_client
from bot.steps.rules import Rules

from . import given
from .clients import AwsClients
from .orders import Orders
from .records import Records
from .schedules import Schedules
from .shop import Shop
from .slack_side import Installs, SlackSide, installer_of, installs_of

if TYPE_CHECKING:
    from bot.records.order_choice import OrderChoice
    from bot.records.timers import Plan
    from bot.records.workspace_settings import WorkspaceSettings
    from bot.records.workspace_settings_store import Loaded
    from bot.steps.home import HomeTab
    from bot.steps.lost import LostRuns
    from bot.steps.settings import Desk
    from bot.steps.turn import Sessions
    from bot.steps.uninstall import Forgetting
    from workflow.shop.shopper import Shopper

__all__ = ["Runtime"]


@dataclass
class Runtime:
    settings: Settings
    web: WebClient
    aws: AwsClients = field(default_factory=AwsClients)
    shopper_factory: Callable[[], Shopper] | None = None
    clock: Callable[[], float] = time.time
    # A workspace's own settings (``configured``): None means the deploy's, from the environment.
    loaded: Loaded | None = field(default=None, repr=False)
    _records: Records | None = field(default=None, repr=False)
    _renew: Renew | None = field(default=None, repr=False)  # a workspace's: its token again
    _workspaces: dict[tuple[str, str], Runtime] = field(default_factory=dict, repr=False)
    _configured: dict[int, Runtime] = field(default_factory=dict, repr=False)

    @classmethod
    def from_settings(cls, settings: Settings, **clients: Any) -> Runtime:
        """``clients``: ``web``, ``s3_client``, ``scheduler_client``, ``ssm_client`` (else made
        on first use), ``shopper_factory``, ``clock``."""
        web = clients.pop("web", None) or make_web_client(settings)
        aws = AwsClients(
            *(clients.pop(n, None) for n in ("s3_client", "scheduler_client", "ssm_client"))
        )
        return cls(settings=settings, web=web, aws=aws, **clients)

    # -- which workspace, with which settings ------------------------------------------

    @functools.cached_property
    def oauth(self) -> Installs | None:
        return installs_of(self.settings)

    def for_workspace(self, team_id: str) -> Runtime:
        """This runtime as the workspace ``team_id`` sees it: its own bot token (itself, with
        one workspace). Raises :class:`~bot.slack.installs.NotInstalled` for a workspace without an
        installation. The clients and the records are shared. Its WebClients follow the
        workspace's token once when Slack refuses theirs (``bot.slack.client``); the token read
        then is the cache's, so the next call here builds a runtime with it."""
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
                _records=self.records,
                _renew=renew,
                _workspaces={},
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
        loaded = here.records.settings_store.read(team_id)
        if here.loaded is loaded:
            return here
        found = here._configured.get(id(loaded))
        if found is None or found.loaded is not loaded:
            found = replace(here, loaded=loaded, _workspaces={}, _configured={})
            here._configured = {id(loaded): found}  # the newest read only
        return found

    def installer_of(self, team_id: str) -> str | None:
        return installer_of(self.oauth, team_id)

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

    # -- the concerns, each built by its own module ------------------------------------

    @property
    def records(self) -> Records:
        if self._records is None:
            self._records = Records(self.settings, self.aws, self.clock)
        return self._records

    @functools.cached_property
    def slack(self) -> SlackSide:
        return SlackSide(self.settings, self.web, self._rounds, self._renew, self.clock)

    def _rounds(self) -> int:
        return self.current.rounds

    @functools.cached_property
    def schedules(self) -> Schedules:
        return Schedules(self.settings, self.aws, self.records.lasting_key, self._plan, self.clock)

    def _plan(self) -> Plan:
        from bot.records.timers import Plan

        c = self.current
        return Plan(c.remind_after, c.max_reminders, c.expire_after)

    @functools.cached_property
    def orders(self) -> Orders:
        return Orders(
            self.settings,
            self.web,
            self._order_choice(),
            lambda: self.records.order_records,
            lambda: self.records.workspace_secrets,
            self.clock,
            lambda: self.records.kroger_accounts,
        )

    def _order_choice(self) -> OrderChoice:
        """Where this workspace's orders go: its settings' choice, else the deploy's."""
        chosen = self.current.orders or self.defaults.orders
        if chosen is None:  # unreachable: the defaults always say
            raise RuntimeError("the deploy's defaults name no destination")
        return chosen

    @functools.cached_property
    def shop(self) -> Shop:
        c = self.current
        return Shop(self.settings, c.rounds, self.shopper_factory, c.store, c.budget_cents)

    # -- what the steps are given (built in given.py) ----------------------------------

    @functools.cached_property
    def rules(self) -> Rules:
        return given.rules_of(self)

    @functools.cached_property
    def sessions(self) -> Sessions:
        return given.sessions_of(self)

    @functools.cached_property
    def home_tab(self) -> HomeTab:
        return given.home_tab_of(self)

    @functools.cached_property
    def forgetting(self) -> Forgetting:
        return given.forgetting_of(self)

    @functools.cached_property
    def lost_runs(self) -> LostRuns:
        return given.lost_runs_of(self)

    def settings_desk(self, ack: bool = False) -> Desk:
        return given.settings_desk_of(self, ack)
