"""The Lambda entry point: ``bot/handler.handler``.

It only translates. API Gateway HTTP API (payload 2.0) events and Bolt's lazy self-invocations go
to Bolt's ``SlackRequestHandler`` (guarded: a body Bolt cannot parse gets 400); an EventBridge
scheduled event starts the weekly shop in ``SHOP_CHANNEL`` as if ``/shop SHOP_REQUEST`` had been
typed there, one session per rule and scheduled time however often it is delivered; a basket's
timer (an EventBridge Scheduler payload, signed) goes to ``bot.reminders``; an SQS batch
from the lost-lazy-runs queue goes to ``bot.lost``. Settings,
clients and the Bolt app are built once per cold start; a missing setting fails then, naming the
variable.
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
from slack_bolt.adapter.aws_lambda.handler import to_bolt_request

from .app import build_app
from .logs import configure_logging, log_context
from .outbox import Where
from .payloads import session_id_for
from .runtime import Runtime
from .settings import Settings
from .timers import is_timer

log = logging.getLogger(__name__)


class GuardedRequestHandler(SlackRequestHandler):
    """Bolt's Lambda adapter, answering 400 to a body it cannot even parse.

    ``to_bolt_request`` parses the body before anything checks its signature, and raises on
    bytes that are not UTF-8, a ``payload`` that is not JSON or not an object, and other shapes;
    unguarded, anyone can make the function fail (API Gateway answers 500).
    """

    def handle(self, event: dict[str, Any], context: Any) -> dict[str, Any]:
        try:
            to_bolt_request(event)
        except Exception as exc:  # noqa: BLE001 - whatever the parser raised, the body is bad
            log.warning("unparseable Slack request refused: %s", type(exc).__name__)
            return {"statusCode": 400, "body": "", "headers": {}}
        response: dict[str, Any] = super().handle(event, context)  # type: ignore[no-untyped-call]
        return response


_runtime: Runtime | None = None
_slack: SlackRequestHandler | None = None


def cold_start(runtime: Runtime | None = None) -> tuple[Runtime, SlackRequestHandler]:
    """Build (once) what every invocation of this process shares; tests pass their own."""
    global _runtime, _slack
    if runtime is not None or _runtime is None:
        configure_logging()
        _runtime = runtime or Runtime.from_settings(Settings.from_env())
        _slack = GuardedRequestHandler(build_app(_runtime))
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

    from workflow.shop.basket import ShopRequest

    from .start import start_session

    settings = rt.settings
    if not settings.shop_channel or not settings.shop_request:
        log.error("the schedule needs SHOP_CHANNEL and SHOP_REQUEST; nothing started")
        return {"started": False}
    # The workspace the schedule is for: SHOP_TEAM with many workspaces, else the bot token's.
    tenant = settings.shop_team or str(rt.web.auth_test()["team_id"])
    rt = rt.for_workspace(tenant)
    # EventBridge delivers at least once, a duplicate with a new event ID: key the session on what
    # is stable, the rule and the scheduled time.
    rule = ",".join(str(r) for r in event.get("resources") or [])
    session_id = session_id_for("schedule", tenant, rule, str(event.get("time")))
    where = Where(tenant, session_id, settings.shop_channel)
    asyncio.run(start_session(rt.sessions, where, ShopRequest(text=settings.shop_request)))
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

    from .reminders import fire
    from .timers import BadTimer, Timer, from_payload

    timers = rt.timers
    if timers is None:
        log.error("a timer arrived, but TIMER_GROUP, TIMER_TARGET_ARN or TIMER_ROLE_ARN is unset")
        return {"fired": False}
    try:
        timer = from_payload(event, timers.key)
    except BadTimer as exc:
        log.warning("timer refused: %s", exc)
        return {"fired": False}

    def first_reminder(t: Timer) -> bool:
        return rt.receipts.first_reminder(t.tenant, t.session, t.request, t.n)

    from .installs import NotInstalled

    with log_context(tenant=timer.tenant, session=timer.session):
        try:
            here = rt.for_workspace(timer.tenant)
        except NotInstalled:  # uninstalled since: its baskets are gone with it
            log.warning("timer dropped: the workspace has no installation")
            return {"fired": False}
        asyncio.run(fire(here.sessions, timers, here.rules, timer, first_reminder))
    return {"fired": True, "kind": timer.kind}


def handler(event: dict[str, Any], context: Any) -> dict[str, Any]:
    try:
        return _handle(event, context)
    finally:
        _settle()


def _handle(event: dict[str, Any], context: Any) -> dict[str, Any]:
    with log_context(lambda_request_id=getattr(context, "aws_request_id", None)):
        rt, slack = cold_start()
        if is_scheduled(event):
            return scheduled_start(rt, event)
        if is_timer(event):
            return fire_timer(rt, event)
        if is_sqs(event):  # the lost-lazy-runs queue: what Lambda gave up on
            return rt.lost_runs.handle(event, str(getattr(context, "function_name", "")))
        response: dict[str, Any] = slack.handle(event, context)  # type: ignore[no-untyped-call]
        return response
