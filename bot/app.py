"""The Bolt app: the ack path of every Slack request, and which lazy listener does the work.

Acks do no model call and no S3 request: ``/shop`` acks "Writing your basket…", Approve and
Reject ack at once, Change… opens its modal (the trigger ID lives about three seconds and works
once, so ``views.open`` belongs here), and a submitted change is validated and acked. The work
then runs in a lazy listener, which on Lambda is a fresh asynchronous invocation of this function.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable
from typing import Any

from slack_bolt import Ack, App, BoltRequest, BoltResponse
from slack_bolt.authorization import AuthorizeResult
from slack_sdk import WebClient

from .blocks import (
    APPROVE,
    CHANGE,
    CHANGE_BLOCK,
    CHANGE_INPUT,
    CHANGE_MODAL,
    MAX_CHANGE_LENGTH,
    REJECT,
    Ref,
    change_modal,
)
from .clicks import GONE, Click, Kind, answer_click, may_answer
from .post import Where, tell
from .runtime import Runtime, session_id_for
from .start import start_session

log = logging.getLogger(__name__)

USAGE = "Tell me the week's dinners, e.g. `/shop pasta Monday, fish Friday; we have rice`."
MAX_REQUEST_LENGTH = 3000


def _team(body: dict[str, Any]) -> str:
    team = body.get("team") or {}
    return str(team.get("id") or body.get("team_id") or (body.get("user") or {}).get("team_id"))


def click_from_action(body: dict[str, Any], kind: Kind) -> Click | None:
    """The click in a ``block_actions`` payload, or None if it is not a well-formed one."""
    actions = body.get("actions") or [{}]
    container = body.get("container") or {}
    ref = Ref.from_value(actions[0].get("value"))
    user = (body.get("user") or {}).get("id")
    channel = (body.get("channel") or {}).get("id") or container.get("channel_id")
    ts = container.get("message_ts") or (body.get("message") or {}).get("ts")
    if not (ref and user and channel and ts):
        return None
    return Click(_team(body), str(user), str(channel), str(ts), ref, kind)


def click_from_view(body: dict[str, Any]) -> Click | None:
    """The change asked for in a ``view_submission`` payload, or None if it is malformed."""
    view = body.get("view") or {}
    ref = Ref.from_value(view.get("private_metadata"))
    meta = Ref.metadata(view.get("private_metadata"))
    values = ((view.get("state") or {}).get("values") or {}).get(CHANGE_BLOCK) or {}
    text = str((values.get(CHANGE_INPUT) or {}).get("value") or "").strip()
    user = (body.get("user") or {}).get("id")
    if not (ref and meta and user and text) or len(text) > MAX_CHANGE_LENGTH:
        return None
    channel, ts = meta
    return Click(_team(body), str(user), channel, ts, ref, "change", text)


def build_app(rt: Runtime) -> App:
    """One Bolt app per cold start, with ``process_before_response`` for Lambda."""
    token = rt.settings.slack_bot_token.get_secret_value()

    def authorize(enterprise_id: str | None, team_id: str | None, **_: Any) -> AuthorizeResult:
        # One workspace, one bot token: no auth.test round trip on the ack path.
        return AuthorizeResult(enterprise_id=enterprise_id, team_id=team_id, bot_token=token)

    bolt_logger = logging.getLogger("slack_bolt")
    quiet = bolt_logger.level
    # Bolt reads SLACK_BOT_TOKEN from the environment by itself and then warns that the client
    # we give wins; that is what we want (the token comes through `authorize`), so hush it.
    bolt_logger.setLevel(logging.ERROR)
    try:
        app = App(
            signing_secret=rt.settings.slack_signing_secret.get_secret_value(),
            authorize=authorize,
            client=WebClient(base_url=rt.settings.slack_api_url, timeout=10),
            process_before_response=True,
            logger=bolt_logger,
        )
    finally:
        bolt_logger.setLevel(quiet)

    @app.middleware
    def ignore_slack_retries(req: BoltRequest, resp: BoltResponse, next: Callable[[], Any]) -> Any:
        # Slack retries a delivery it thinks timed out; the first one is already being handled.
        if req.headers.get("x-slack-retry-num") and not req.headers.get("x-slack-bolt-lazy-only"):
            return BoltResponse(status=200, body="")
        return next()

    def ack_shop(ack: Ack, command: dict[str, Any]) -> None:
        text = str(command.get("text") or "").strip()
        if not text or len(text) > MAX_REQUEST_LENGTH:
            ack(USAGE)
            return
        ack("Writing your basket…")

    def run_shop(command: dict[str, Any]) -> None:
        text = str(command.get("text") or "").strip()
        if not text or len(text) > MAX_REQUEST_LENGTH:
            return
        tenant = str(command["team_id"])
        where = Where(
            tenant=tenant,
            session_id=session_id_for(tenant, str(command["trigger_id"])),
            channel=str(command["channel_id"]),
            requested_by=str(command["user_id"]),
        )
        asyncio.run(start_session(rt, where, text))

    app.command("/shop")(ack=ack_shop, lazy=[run_shop])

    def ack_now(ack: Ack) -> None:
        ack()

    def lazy_click(kind: Kind) -> Callable[[dict[str, Any]], None]:
        def run(body: dict[str, Any]) -> None:
            click = click_from_action(body, kind)
            if click is None:
                log.warning("malformed %s click ignored", kind)
                return
            asyncio.run(answer_click(rt, click))

        run.__name__ = f"run_{kind}"
        return run

    app.action(APPROVE)(ack=ack_now, lazy=[lazy_click("approve")])
    app.action(REJECT)(ack=ack_now, lazy=[lazy_click("reject")])

    @app.action(CHANGE)
    def open_change_modal(ack: Ack, body: dict[str, Any]) -> None:
        ack()
        click = click_from_action(body, "change")
        if click is None:
            log.warning("malformed change click ignored")
            return
        refusal = may_answer(rt, click.user)
        if refusal:
            tell(rt, click.channel, click.user, refusal)
            return
        trigger = body.get("trigger_id")
        view = change_modal(click.ref, click.channel, click.message_ts)
        try:
            rt.web.views_open(trigger_id=trigger, view=view)
        except Exception as exc:  # noqa: BLE001 - any failure: say so, never crash the ack
            log.error("views.open failed: %s", exc)
            tell(rt, click.channel, click.user, "The change form didn't open. Try again.")

    def ack_change(ack: Ack, body: dict[str, Any]) -> None:
        if click_from_view(body) is None:
            ack(response_action="errors", errors={CHANGE_BLOCK: GONE})
            return
        ack()

    def run_change(body: dict[str, Any]) -> None:
        click = click_from_view(body)
        if click is not None:
            asyncio.run(answer_click(rt, click))

    app.view(CHANGE_MODAL)(ack=ack_change, lazy=[run_change])
    return app
