"""The Lambda entry point: ``bot/handler.handler``.

It only translates. API Gateway HTTP API (payload 2.0) events and Bolt's lazy self-invocations go
to Bolt's ``SlackRequestHandler`` (guarded: a body Bolt cannot parse gets 400; a lazy run that
failed raises: ``bot.listeners.lambda_adapter``); an EventBridge
scheduled event starts the weekly shop in ``SHOP_CHANNEL`` as if ``/shop SHOP_REQUEST`` had been
typed there, one session per rule and scheduled time however often it is delivered; a
workspace's weekly run (a signed EventBridge Scheduler payload, ``bot.records.weekly``) starts
its shop in its channel, one session per workspace and scheduled time; a basket's
timer (an EventBridge Scheduler payload, signed) goes to ``bot.steps.reminders``; an SQS batch
from the lost-lazy-runs queue goes to ``bot.steps.lost``; a browser sent back by Kroger
(``GET /kroger/oauth_redirect``) goes to ``bot.steps.kroger_connect``, and one following a
Home tab's Connect link (``GET /kroger/connect``) to ``bot.steps.kroger_confirm``. Settings
(the deploy's secrets read from SSM: ``bot.stage_secrets``), clients and the Bolt app are built
once per cold start; a missing setting fails then, naming the variable.
"""

# ruff: noqa: E402
from __future__ import annotations

import gc
import logging
import os
from typing import Any

# A cold start allocates a few hundred thousand objects that live as long as the process, and the
# collector would walk them again and again (~0.1 s before the first response): it is off until
# the first invocation is done, then those objects are frozen out of its way (``_settle``).
gc.disable()
# No pydantic plugins are used; without this, the first pydantic model (the model SDK's: the bot
# and the workflow have none) scans every installed package's entry points for them (~15 ms).
os.environ.setdefault("PYDANTIC_DISABLE_PLUGINS", "__all__")
# (so the imports below come after it: ruff E402 is off for this file)

from slack_bolt.adapter.aws_lambda import SlackRequestHandler

from bot.listeners.app import build_app
from bot.listeners.lambda_adapter import GuardedRequestHandler
from bot.records.timers import is_timer
from bot.records.weekly import is_weekly
from bot.slack.delivery import Where
from bot.slack.payloads import session_id_for

from .logs import configure_logging, log_context, mark_cold_start
from .metrics import flush
from .runtime import Runtime
from .settings import Settings
from .stage_secrets import with_stage_secrets

log = logging.getLogger(__name__)


_runtime: Runtime | None = None
_slack: SlackRequestHandler | None = None


def cold_start(runtime: Runtime | None = None) -> tuple[Runtime, SlackRequestHandler]:
    """Build (once) what every invocation of this process shares; tests pass their own."""
    global _runtime, _slack
    if runtime is not None or _runtime is None:
        configure_logging()
        _runtime = runtime or Runtime.from_settings(
            Settings.from_env(with_stage_secrets(os.environ))
        )
        secret = _runtime.settings.slack_signing_secret.get_secret_value()
        _slack = GuardedRequestHandler(build_app(_runtime), signing_secret=secret)
    if _slack is None:  # unreachable: built together with _runtime
        raise RuntimeError("cold start did not build the Slack handler")
    return _runtime, _slack


def is_scheduled(event: dict[str, Any]) -> bool:
    return event.get("source") == "aws.events" and event.get("detail-type") == "Scheduled Event"


def is_sqs(event: dict[str, Any]) -> bool:
    records = event.get("Records")
    return isinstance(records, list) and all(
        isinstance(r, dict) and r.get("eventSource") == "aws:sqs" for r in records
    )


def scheduled_start(rt: Runtime, event: dict[str, Any]) -> dict[str, Any]:
    import asyncio

    from bot.steps.start import start_session
    from workflow.shop.basket import ShopRequest

    settings = rt.settings
    if not settings.shop_channel or not settings.shop_request:
        log.error("the schedule needs SHOP_CHANNEL and SHOP_REQUEST; nothing started")
        return {"started": False}
    # The workspace the schedule is for: SHOP_TEAM with many workspaces, else the bot token's.
    tenant = settings.shop_team or str(rt.web.auth_test()["team_id"])
    rt = rt.configured(tenant)
    if rt.loaded is not None and (rt.loaded.saved is not None or rt.loaded.problem):
        # The workspace saved its own settings: its weekly run (or none) replaces this one.
        log.info("the deploy's weekly run is not this workspace's: it saved its own settings")
        return {"started": False}
    # EventBridge delivers at least once, a duplicate with a new event ID: key the session on what
    # is stable, the rule and the scheduled time.
    rule = ",".join(str(r) for r in event.get("resources") or [])
    session_id = session_id_for("schedule", tenant, rule, str(event.get("time")))
    where = Where(tenant, session_id, settings.shop_channel)
    request = ShopRequest(text=settings.shop_request, household=rt.current.household)
    asyncio.run(start_session(rt.sessions, where, request))
    return {"started": True, "session": session_id}


def _settle() -> None:
    """After the first invocation: what the cold start built is frozen (never collected, never
    walked again), and the collector runs as usual from here on."""
    if not gc.isenabled():
        gc.freeze()
        gc.enable()


def fire_timer(rt: Runtime, event: dict[str, Any]) -> dict[str, Any]:
    """A basket's reminder or expiry, as Scheduler delivers it. A payload that does not verify
    is dropped (logged, not retried); a busy session raises, so Lambda retries the timer."""
    import asyncio

    from bot.records.timers import BadTimer, Timer, from_payload
    from bot.steps.reminders import fire, wait_for_settings

    timers = rt.schedules.timers
    if timers is None:
        log.error("a timer arrived, but TIMER_GROUP, TIMER_TARGET_ARN or TIMER_ROLE_ARN is unset")
        return {"fired": False}
    try:
        timer = from_payload(event, timers.key)
    except BadTimer as exc:
        log.warning("timer refused: %s", exc)
        return {"fired": False}

    def first_reminder(t: Timer) -> bool:
        return rt.records.receipts.first_reminder(t.tenant, t.session, t.request, t.n)

    from bot.slack.installs import NotInstalled

    with log_context(tenant=timer.tenant, session=timer.session):
        try:
            here = rt.configured(timer.tenant)
        except NotInstalled:  # uninstalled since: its baskets are gone with it
            log.warning("timer dropped: the workspace has no installation")
            return {"fired": False}
        if here.rules.closed:  # settings no one can read: nothing reminded, expired or ordered
            return {"fired": False, "held": wait_for_settings(timers, timer)}
        early = asyncio.run(fire(here.sessions, timers, here.rules, timer, first_reminder))
    if early:
        return {"fired": False, "early_by": early}
    return {"fired": True, "kind": timer.kind}


def fire_weekly(rt: Runtime, event: dict[str, Any]) -> dict[str, Any]:
    """A workspace's weekly run, as Scheduler delivers it: basket 1 of its standing request in
    its channel. A payload that does not verify, or whose scheduled time is not a recent one,
    and a workspace that removed the app are dropped (logged, not retried); a busy or failing
    start raises, so Lambda retries it. Every delivery of one firing has the same scheduled
    time, so the same session: the second finds it started and posts nothing."""
    import asyncio

    from bot.records.weekly import BadWeeklyPayload, from_payload
    from bot.slack.installs import NotInstalled
    from bot.steps.start import start_session
    from workflow.shop.basket import ShopRequest

    weekly = rt.schedules.weekly
    if weekly is None:
        log.error("a weekly run arrived, but TIMER_GROUP, TIMER_TARGET_ARN or TIMER_ROLE_ARN unset")
        return {"started": False}
    try:
        firing = from_payload(event, weekly.key, now=rt.clock())
    except BadWeeklyPayload as exc:
        log.warning("weekly run refused: %s", exc)
        return {"started": False}
    session_id = session_id_for("weekly", firing.team, str(firing.scheduled_at))
    with log_context(tenant=firing.team, session=session_id):
        try:
            here = rt.configured(firing.team)
        except NotInstalled:  # removed since (its schedule goes with it): nothing to start
            log.warning("weekly run dropped: the workspace has no installation")
            return {"started": False}
        if here.rules.closed:  # settings no one can read: no basket, said; the schedule stays
            here.slack.outbox.post(firing.run.channel, here.rules.closed)
            return {"started": False}
        saved = here.loaded.saved if here.loaded is not None else None
        if saved is None or saved.weekly != firing.run:
            # Settings changed since it was scheduled (and the schedule was not, yet): the
            # saved settings decide; the schedule is made to follow them.
            log.warning("weekly run dropped: the workspace's settings no longer ask for it")
            _follow_settings(weekly, firing.team, saved)
            return {"started": False}
        where = Where(firing.team, session_id, firing.run.channel)
        request = ShopRequest(text=firing.run.request, household=here.current.household)
        asyncio.run(start_session(here.sessions, where, request))
    return {"started": True, "session": session_id}


def _follow_settings(weekly: Any, team: str, saved: Any) -> None:
    """Make the workspace's weekly schedule what its saved settings say (none, if none)."""
    from bot.records.weekly import WeeklyScheduleError

    try:
        weekly.arrange(team, saved.weekly if saved is not None else None)
    except WeeklyScheduleError as exc:
        log.error("the weekly schedule could not follow the settings: %s", exc)


KROGER_REDIRECT = "/kroger/oauth_redirect"  # bot.steps.kroger_connect.REDIRECT_PATH
KROGER_CONNECT = "/kroger/connect"  # bot.steps.kroger_connect.CONNECT_PATH


def kroger_page(rt: Runtime, event: dict[str, Any]) -> dict[str, Any]:
    """A browser's ``GET`` of a Kroger page: the Connect link's confirmation, or Kroger's
    redirect back after a person connects their account."""
    from bot.runtime.kroger import connecting_of
    from bot.steps.kroger_confirm import confirm_page
    from bot.steps.kroger_connect import redirect_page

    method = ((event.get("requestContext") or {}).get("http") or {}).get("method")
    if method != "GET":
        return {"statusCode": 405, "headers": {"Allow": "GET"}, "body": ""}
    if event.get("rawPath") == KROGER_CONNECT:
        return confirm_page(connecting_of(rt), event)
    return redirect_page(connecting_of(rt), event)


def handler(event: dict[str, Any], context: Any) -> dict[str, Any]:
    """Lambda's entry; the lines of an invocation that builds the runtime say ``cold_start``,
    and what it counted is written at its end (``bot.metrics``)."""
    try:
        with mark_cold_start(_runtime is None):
            return _handle(event, context)
    finally:
        flush(getattr(context, "function_name", None))
        _settle()


def _handle(event: dict[str, Any], context: Any) -> dict[str, Any]:
    with log_context(lambda_request_id=getattr(context, "aws_request_id", None)):
        rt, slack = cold_start()
        if is_scheduled(event):
            return scheduled_start(rt, event)
        if is_weekly(event):
            return fire_weekly(rt, event)
        if is_timer(event):
            return fire_timer(rt, event)
        if is_sqs(event):  # the lost-lazy-runs queue: what Lambda gave up on
            return rt.lost_runs.handle(event, str(getattr(context, "function_name", "")))
        if event.get("rawPath") in (KROGER_REDIRECT, KROGER_CONNECT):  # a browser: no Slack
            return kroger_page(rt, event)
        response: dict[str, Any] = slack.handle(event, context)  # type: ignore[no-untyped-call]
        return response
