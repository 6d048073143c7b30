"""What each step is given by the composition root (``bot.runtime``): a narrow object built
from the concerns, never the runtime itself. A step's module names what it needs (``Sessions``,
``HomeTab``, ``Forgetting``, ``LostRuns``, ``Desk``, ``Rules``); this module fills it in."""

from __future__ import annotations

from typing import TYPE_CHECKING

from bot.steps.rules import Rules, closed_text

if TYPE_CHECKING:
    from bot.steps.home import HomeTab
    from bot.steps.lost import LostRuns
    from bot.steps.settings import Desk
    from bot.steps.turn import Sessions
    from bot.steps.uninstall import Forgetting

    from . import Runtime


def rules_of(rt: Runtime) -> Rules:
    c = rt.current
    hold = c.order_delay if rt.schedules.timers is not None else 0
    closed = closed_text(rt.loaded.problem if rt.loaded is not None else None)
    return Rules(
        frozenset(c.approvers), c.no_self_approval, c.rounds, c.approvals_needed, hold, closed
    )


def sessions_of(rt: Runtime) -> Sessions:
    """What every turn of a session needs (``bot.steps.turn``)."""
    from bot.records.timers import BasketTimers
    from bot.steps.turn import Sessions

    records = rt.records
    offline = rt.shopper_factory is None and rt.settings.anthropic_api_key is None
    return Sessions(
        workflow=rt.shop.workflow,
        checkpoints=records.checkpoints,
        lock=records.lock,
        lock_ttl_seconds=rt.settings.lock_ttl_seconds,
        lock_wait_seconds=rt.settings.lock_wait_seconds,
        receipts=records.receipts,
        outbox=rt.slack.outbox,
        history=records.history,
        timers=BasketTimers(rt.schedules.timers),
        orders=rt.orders.desk,
        clock=rt.clock,
        offline=offline,
        drafts=None if offline else records.drafts,  # the offline shopper writes at once
    )


def home_tab_of(rt: Runtime) -> HomeTab:
    """What the Home tab reads and publishes (``bot.steps.home``)."""
    from bot.steps.home import HomeTab

    from .kroger import home_section_of

    return HomeTab(
        settings=rt.settings,
        web=rt.web,
        outbox=rt.slack.outbox,
        history=rt.records.history,
        receipts=rt.records.receipts,
        timers=rt.schedules.timers,
        store=rt.records.store,
        sessions=lambda: rt.sessions,
        current=rt.current,
        loaded=rt.loaded,
        permalink=rt.slack.permalink,
        kroger=home_section_of(rt),
    )


def forgetting_of(rt: Runtime) -> Forgetting:
    """What forgetting a workspace that removed the app needs (``bot.steps.uninstall``)."""
    from bot.steps.uninstall import Forgetting

    records = rt.records
    return Forgetting(
        settings=rt.settings,
        oauth=rt.oauth,
        receipts=records.receipts,
        timers=rt.schedules.timers,
        settings_store=records.settings_store,
        weekly=rt.schedules.weekly,
        workspace_secrets=records.workspace_secrets,
        kroger_accounts=records.kroger_accounts,
        s3=rt.aws.s3,
    )


def lost_runs_of(rt: Runtime) -> LostRuns:
    """What turns a lazy run Lambda gave up on into a message (``bot.steps.lost``)."""
    from bot.steps.lost import LostRuns
    from bot.steps.uninstall import forget_workspace

    s = rt.settings
    return LostRuns(
        rt.slack.outbox,
        s.slack_signing_secret.get_secret_value(),
        rt.records.metadata_key,
        s3=rt.aws.s3(),
        bucket=s.checkpoint_bucket,
        prefix=s.checkpoint_prefix,
        schedule_channel=s.shop_channel,
        schedule_tenant=lambda: rt.settings.shop_team or rt.web.auth_test()["team_id"],
        timers=rt.schedules.timers,
        weekly=rt.schedules.weekly,
        outbox_for=lambda tenant: rt.for_workspace(tenant).slack.outbox,
        forget=lambda team, said_at: forget_workspace(rt.forgetting, team, said_at),
        receipts=rt.records.receipts,
        drafts=rt.records.drafts,
    )


def settings_desk_of(rt: Runtime, ack: bool = False) -> Desk:
    """What opening and saving the settings need (``bot.steps.settings``); ``ack``: with
    the ack path's WebClient and S3 and SSM clients (short timeouts, no retry sleeps)."""
    from bot.steps.settings import Desk

    s, records = rt.settings, rt.records
    deploy_keys = {
        name
        for name, key in (
            ("instacart-api-key", s.instacart_api_key),
            ("webhook-signing-secret", s.order_webhook_secret),
        )
        if key is not None
    }
    return Desk(
        web=rt.slack.ack_web if ack else rt.web,
        store=records.ack_settings_store if ack else records.settings_store,
        defaults=rt.defaults,
        installer=rt.installer_of,
        can_schedule=rt.schedules.weekly is not None,
        clock=rt.clock,
        secrets=records.ack_workspace_secrets if ack else records.workspace_secrets,
        deploy_keys=frozenset(deploy_keys),
        deploy_webhook_url=s.order_webhook_url,
        deploy_keys_serve=s.deploy_keys_serve,
        pinned=s.order_webhook_pinned_hosts,
        carts=s.has_prices and bool(s.workspace_secrets_path and s.kroger_redirect_url),
    )
