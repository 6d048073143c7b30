"""Where a workspace that removed the app is forgotten: everything of it, nothing of another's.

``app_uninstalled`` (the app was removed) and ``tokens_revoked`` with a bot token (the same, as
Slack also says it) delete, for that workspace only:

    its installation and bot   (``bot.slack.installs``: Bolt's S3 installation store, and the cache)
    its waiting baskets' timers (two ``DeleteSchedule`` each, named from their receipts: no
                                 schedule of any other workspace is ever listed or touched)
    its weekly run              (``weekly-<team>``, ``bot.records.weekly``; a failure to delete
                                 it fails the removal, retried: left, it would fire every week)
    <prefix><team>/...          sessions, checkpoints, locks, receipts, reminder markers
    <history prefix><team>/...  its outcome records
    <settings prefix><team>/... its settings (``bot.records.workspace_settings_store``)
    <orders prefix><team>/...   its order records (``bot.records.orders``)
    its keys                    its Instacart API key and webhook signing secret, SSM parameters
                                under WORKSPACE_SECRETS_PATH (``bot.records.workspace_secrets``),
                                and its settings' generation there (``…settings_generations``)
    its people's Kroger tokens  each connected person's refresh token, SSM parameters under
                                <WORKSPACE_SECRETS_PATH>/<team>/kroger/ (``…kroger_accounts``)

Objects are listed under the workspace's own prefixes and removed with ``DeleteObjects``, 1,000
at a time. A delivery that runs twice (Slack's retry of the event, Lambda's retry of its lazy run,
the lost-runs queue) finds less to delete, and ends the same. A late one, arriving after the
workspace installed the app again, keeps that installation and what was written since, and
deletes only what is older than the removal (objects last written before it, timers of baskets
posted before it): the new installation never shows the old one's baskets or history.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from botocore.exceptions import BotoCoreError, ClientError

from bot.records.history import history_prefix
from bot.records.orders import orders_prefix
from bot.records.workspace_settings_store import settings_prefix, workspace_folder
from workflow.errors import StoreError
from workflow.persistence.s3_client import store_error
from workflow.persistence.s3_keys import S3Keys

if TYPE_CHECKING:
    from bot.records.kroger_accounts import KrogerAccounts
    from bot.records.receipts import Receipts
    from bot.records.timers import Timers
    from bot.records.weekly import WeeklySchedules
    from bot.records.workspace_secrets import WorkspaceSecrets
    from bot.records.workspace_settings_store import S3WorkspaceSettings
    from bot.settings import Settings
    from bot.slack.installs import ByWorkspace

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class Forgetting:
    """What forgetting a workspace needs, and no more: ``bot.runtime`` builds it (so that this
    module does not import the runtime, which imports the lost-runs queue, which imports this)."""

    settings: Settings
    oauth: tuple[Any, ByWorkspace] | None
    receipts: Receipts
    timers: Timers | None
    settings_store: S3WorkspaceSettings
    weekly: WeeklySchedules | None
    workspace_secrets: WorkspaceSecrets | None
    kroger_accounts: KrogerAccounts | None
    s3: Callable[[], Any]


def removal_of(body: Any) -> tuple[str, float | None] | None:
    """(team, event time) of an Events API ``app_uninstalled``, or a ``tokens_revoked`` that
    names the bot's token (only user tokens: the bot still serves the workspace); else None."""
    if not isinstance(body, dict):
        return None
    event, team, at = body.get("event"), body.get("team_id"), body.get("event_time")
    if not isinstance(event, dict) or not isinstance(team, str) or not team:
        return None
    tokens = event.get("tokens")
    bot = isinstance(tokens, dict) and bool(tokens.get("bot"))
    if event.get("type") != "app_uninstalled" and not (
        event.get("type") == "tokens_revoked" and bot
    ):
        return None
    return team, float(at) if isinstance(at, int | float) else None


def delete_under(s3: Any, bucket: str, prefix: str, before: float | None = None) -> int:
    """Every object under ``prefix`` deleted (only those last written before the epoch second
    ``before``, if given); how many."""
    deleted = 0
    try:
        pages = s3.get_paginator("list_objects_v2").paginate(Bucket=bucket, Prefix=prefix)
        for page in pages:
            keys = [
                {"Key": obj["Key"]}
                for obj in page.get("Contents", [])
                if before is None or obj["LastModified"].timestamp() < before
            ]
            if keys:
                done = s3.delete_objects(Bucket=bucket, Delete={"Objects": keys, "Quiet": True})
                if done.get("Errors"):  # Quiet: only what failed is listed, and nothing raised
                    failed = done["Errors"][0]
                    raise StoreError(f"delete {failed.get('Key')}: {failed.get('Code')}")
                deleted += len(keys)
    except (ClientError, BotoCoreError) as exc:
        raise store_error("delete the workspace's objects", exc) from exc
    return deleted


def forget_workspace(rt: Forgetting, team_id: str, said_at: float | None = None) -> dict[str, int]:
    """Delete everything of workspace ``team_id`` (see the module docstring); counts. With
    ``said_at`` (the event's time), a workspace that installed the app again after it keeps
    that installation and what was written since: only what is older than the removal goes."""
    s = rt.settings
    since = reinstalled_since(rt, team_id, said_at)
    before = None if since is None else said_at
    if before is not None:
        log.info("workspace %s installed again since it removed the app: kept", team_id)
        before += 1  # event_time is whole seconds; what was written in its second goes too
    keys = S3Keys(s.checkpoint_prefix)
    disarmed = _disarm_timers(rt, team_id, before)
    weekly = rt.weekly
    # (with ``before``: a weekly run saved by the new installation is kept)
    unscheduled = weekly.delete(team_id, written_before=before) if weekly is not None else False
    s3 = rt.s3()
    objects = delete_under(s3, s.checkpoint_bucket, keys.tenant(team_id), before)
    outcomes = f"{history_prefix(s.checkpoint_prefix)}{keys.tenant(team_id)[len(keys.prefix) :]}"
    history = delete_under(s3, s.checkpoint_bucket, outcomes, before)
    order_records = (
        f"{orders_prefix(s.checkpoint_prefix)}{keys.tenant(team_id)[len(keys.prefix) :]}"
    )
    orders = delete_under(s3, s.checkpoint_bucket, order_records, before)
    folder = workspace_folder(settings_prefix(s.checkpoint_prefix), team_id)
    settings = delete_under(s3, s.checkpoint_bucket, folder, before)
    rt.settings_store.forget(team_id)
    secrets = rt.workspace_secrets
    keys_deleted = secrets.forget(team_id, before) if secrets is not None else 0
    accounts = rt.kroger_accounts
    kroger = accounts.forget(team_id, before) if accounts is not None else 0
    if rt.oauth is not None and since is None:
        flow, by_workspace = rt.oauth
        store = flow.settings.installation_store
        store.delete_installation(enterprise_id=None, team_id=team_id)
        store.delete_bot(enterprise_id=None, team_id=team_id)
        by_workspace.forget(None, team_id)
    counts = {
        "timers": disarmed,
        "weekly": int(unscheduled),
        "objects": objects,
        "outcomes": history,
        "orders": orders,
        "settings": settings,
        "keys": keys_deleted,
        "kroger_accounts": kroger,
    }
    log.info("workspace %s forgotten: %s", team_id, counts)
    return counts


def reinstalled_since(rt: Forgetting, team_id: str, said_at: float | None) -> float | None:
    """When the workspace installed the app again after a removal said at ``said_at``, or
    None (not installed since, one workspace only, or no time said)."""
    if rt.oauth is None or said_at is None:
        return None
    found = rt.oauth[0].settings.installation_store.find_installation(
        enterprise_id=None, team_id=team_id
    )
    # (event_time is whole seconds; an install's time has a fraction)
    if found is not None and float(found.installed_at) >= said_at + 1:
        return float(found.installed_at)
    return None


def _disarm_timers(rt: Forgetting, team_id: str, before: float | None) -> int:
    """The timers of the workspace's waiting baskets (posted before ``before``, if given)."""
    timers = rt.timers
    if timers is None:
        return 0
    from bot.records.timers import TimerError

    disarmed = 0
    for session, waiting in rt.receipts.waiting(team_id, ()):
        if before is not None and waiting.posted_at >= before:
            continue
        try:
            timers.disarm(team_id, session, waiting.request_id)
            disarmed += 1
        except TimerError as exc:  # it fires, finds no session, and does nothing
            log.error("could not delete a timer of the removed workspace: %s", exc)
    return disarmed
