"""Where a workspace that removed the app is forgotten: everything of it, nothing of another's.

``app_uninstalled`` (the app was removed) and ``tokens_revoked`` with a bot token (the same, as
Slack also says it) delete, for that workspace only:

    its installation and bot   (``bot.installs``: Bolt's S3 installation store, and the cache)
    its waiting baskets' timers (two ``DeleteSchedule`` each, named from their receipts: no
                                 schedule of any other workspace is ever listed or touched)
    <prefix><team>/...          sessions, checkpoints, locks, receipts, reminder markers
    <history prefix><team>/...  its outcome records

Objects are listed under the workspace's own prefixes and removed with ``DeleteObjects``, 1,000
at a time. A delivery that runs twice (Slack's retries are acked and dropped, Lambda's retry of a
lazy run is not) finds less to delete, and ends the same.
"""

from __future__ import annotations

import logging
from typing import TYPE_CHECKING, Any

from botocore.exceptions import BotoCoreError, ClientError

from workflow.errors import StoreError
from workflow.s3_client import store_error
from workflow.s3_keys import S3Keys

from .history import history_prefix

if TYPE_CHECKING:
    from .runtime import Runtime

log = logging.getLogger(__name__)


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


def delete_under(s3: Any, bucket: str, prefix: str) -> int:
    """Every object under ``prefix`` deleted; how many."""
    deleted = 0
    try:
        pages = s3.get_paginator("list_objects_v2").paginate(Bucket=bucket, Prefix=prefix)
        for page in pages:
            keys = [{"Key": obj["Key"]} for obj in page.get("Contents", [])]
            if keys:
                done = s3.delete_objects(Bucket=bucket, Delete={"Objects": keys, "Quiet": True})
                if done.get("Errors"):  # Quiet: only what failed is listed, and nothing raised
                    failed = done["Errors"][0]
                    raise StoreError(f"delete {failed.get('Key')}: {failed.get('Code')}")
                deleted += len(keys)
    except (ClientError, BotoCoreError) as exc:
        raise store_error("delete the workspace's objects", exc) from exc
    return deleted


def forget_workspace(rt: Runtime, team_id: str, said_at: float | None = None) -> dict[str, int]:
    """Delete everything of workspace ``team_id`` (see the module docstring); counts. With
    ``said_at`` (the event's time), nothing is deleted if the workspace installed the app again
    after it (a late retry of the removal must not remove the new installation)."""
    s = rt.settings
    if rt.oauth is not None and said_at is not None:
        found = rt.oauth[0].settings.installation_store.find_installation(
            enterprise_id=None, team_id=team_id
        )
        # (event_time is whole seconds; an install's time has a fraction)
        if found is not None and float(found.installed_at) >= said_at + 1:
            log.info("workspace %s installed again since it removed the app: kept", team_id)
            return {"timers": 0, "objects": 0, "outcomes": 0}
    keys = S3Keys(s.checkpoint_prefix)
    timers = rt.timers
    disarmed = 0
    if timers is not None:
        from .timers import TimerError

        for session, waiting in rt.receipts.waiting(team_id, ()):
            try:
                timers.disarm(team_id, session, waiting.request_id)
                disarmed += 1
            except TimerError as exc:  # it fires, finds no session, and does nothing
                log.error("could not delete a timer of the removed workspace: %s", exc)
    s3 = rt.s3()
    objects = delete_under(s3, s.checkpoint_bucket, keys.tenant(team_id))
    outcomes = f"{history_prefix(s.checkpoint_prefix)}{keys.tenant(team_id)[len(keys.prefix) :]}"
    history = delete_under(s3, s.checkpoint_bucket, outcomes)
    if rt.oauth is not None:
        flow, by_workspace = rt.oauth
        store = flow.settings.installation_store
        store.delete_installation(enterprise_id=None, team_id=team_id)
        store.delete_bot(enterprise_id=None, team_id=team_id)
        by_workspace.forget(None, team_id)
    counts = {"timers": disarmed, "objects": objects, "outcomes": history}
    log.info("workspace %s forgotten: %s", team_id, counts)
    return counts
