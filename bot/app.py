"""The Bolt app: the ack path of every Slack request, and which lazy listener does the work.

Acks do no model call and no S3 request: ``/shop`` acks "Writing your basket…", Approve and
Reject ack at once, Change… opens its modal (the trigger ID lives about three seconds and works
once, so ``views.open`` belongs here), and a submitted change is validated and acked. The work
then runs in a lazy listener, which on Lambda is a fresh asynchronous invocation of this function.
:class:`ShopApp` refuses, with 400, signed payloads Bolt would crash on (see ``payloads``).

Only the lazy listeners import the workflow (``start``, ``clicks``, and with them the engine and
asyncio; writing a basket also the model SDK, and with it pydantic): a cold start that only acks
never loads them, and its import time is a large part of Slack's 3 seconds at a small Lambda's CPU
share (``bench/coldstart.py``).
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from typing import Any

from slack_bolt import Ack, App, BoltRequest, BoltResponse
from slack_bolt.authorization import AuthorizeResult
from slack_sdk import WebClient

from .blocks import APPROVE, CHANGE, REJECT, START_AGAIN
from .home_view import HIDE_ITEMS, OPEN, REPEAT, SHOW_ITEMS
from .modal import CHANGE_BLOCK, CHANGE_MODAL, change_modal, modal_metadata
from .payloads import (
    GONE,
    MAX_REQUEST_LENGTH,
    Click,
    Kind,
    click_from_action,
    is_signed,
    payload_problem,
    read_change,
    read_shop,
    reparse_form,
    request_text,
)
from .runtime import Runtime

log = logging.getLogger(__name__)

USAGE = "Tell me the week's dinners, e.g. `/shop pasta Monday, fish Friday; we have rice`."
TOO_LONG = f"That's more than I can read: keep the week under {MAX_REQUEST_LENGTH} characters."
WRITING = "Writing your basket…"
NO_MODAL = "The change form didn't open. Try again."
INCOMPLETE = "I couldn't read that request. Try /shop again."
NOT_INSTALLED = (
    "Weekly shop isn't installed in this workspace (or was removed): someone who may add apps "
    "can install it again with Add to Slack."
)


def run_click(rt: Runtime, click: Click) -> None:
    """A lazy listener's work: the click's turn of its session (``bot.clicks``)."""
    import asyncio

    from .clicks import answer_click

    rt = rt.for_workspace(click.tenant)
    asyncio.run(answer_click(rt.sessions, rt.rules, click))


class ShopApp(App):
    """Bolt's App, refusing what it would crash on before routing it."""

    def dispatch(self, req: BoltRequest) -> BoltResponse:
        reparse_form(req)
        problem = payload_problem(req.body)
        if problem is None:
            return super().dispatch(req)
        if not is_signed(req, self._signing_secret):
            return BoltResponse(status=401, body={"error": "invalid request"})
        log.warning("malformed Slack payload refused: %s", problem)
        return BoltResponse(status=400, body={"error": "malformed payload"})


def build_app(rt: Runtime) -> App:
    """One Bolt app per cold start, with ``process_before_response`` for Lambda. Many
    workspaces: Bolt's OAuth flow serves the install pages, and each request is authorised with
    its workspace's token (``bot.installs``); one workspace: SLACK_BOT_TOKEN, for every request."""
    token = rt.settings.slack_bot_token.get_secret_value()

    def authorize(enterprise_id: str | None, team_id: str | None, **_: Any) -> AuthorizeResult:
        # One workspace, one bot token: no auth.test round trip on the ack path.
        return AuthorizeResult(enterprise_id=enterprise_id, team_id=team_id, bot_token=token)

    auth: dict[str, Any] = {"authorize": authorize}
    if rt.oauth is not None:
        flow, by_workspace = rt.oauth
        auth = {
            "authorize": by_workspace,
            "oauth_flow": flow,
            "user_facing_authorize_error_message": NOT_INSTALLED,
        }

    bolt_logger = logging.getLogger("slack_bolt")
    quiet = bolt_logger.level
    # Bolt reads SLACK_BOT_TOKEN from the environment by itself and then warns that the client
    # we give wins; that is what we want (the token comes through `authorize`), so hush it.
    bolt_logger.setLevel(logging.ERROR)
    try:
        app = ShopApp(
            # Named, so Bolt does not name it from inspect.stack(), which stats the source file
            # of every loaded module: ~45 ms of a cold start.
            name="weekly-shop",
            signing_secret=rt.settings.slack_signing_secret.get_secret_value(),
            client=WebClient(base_url=rt.settings.slack_api_url, timeout=10),
            process_before_response=True,
            logger=bolt_logger,
            **auth,
        )
    finally:
        bolt_logger.setLevel(quiet)

    # Slack's retries of an event (``X-Slack-Retry-Num``) are handled like the first delivery,
    # not dropped: Slack retries only what got no 200 in time, perhaps because handing it off
    # failed, and every lazy run here is safe to repeat (a removal, a Home tab, a turn under
    # its session's lock). Slack sends no retries of commands and clicks.

    def ack_shop(ack: Ack, command: dict[str, Any]) -> None:
        raw = command.get("text")
        if isinstance(raw, str) and len(raw.strip()) > MAX_REQUEST_LENGTH:
            ack(TOO_LONG)
        elif not request_text(command):
            ack(USAGE)
        elif read_shop(command) is None:
            ack(INCOMPLETE)
        else:
            ack(WRITING)

    def run_shop(command: dict[str, Any]) -> None:
        shop = read_shop(command)
        if shop is not None:
            from .start import start_command

            start_command(rt.for_workspace(shop.where.tenant).sessions, shop)

    app.command("/shop")(ack=ack_shop, lazy=[run_shop])

    def ack_now(ack: Ack) -> None:
        ack()

    def lazy_click(kind: Kind) -> Callable[[dict[str, Any]], None]:
        def run(body: dict[str, Any]) -> None:
            click = click_from_action(body, kind)
            if click is None:
                log.warning("malformed %s click ignored", kind)
            else:
                run_click(rt, click)

        run.__name__ = f"run_{kind}"
        return run

    def run_again(body: dict[str, Any]) -> None:
        click = click_from_action(body, "again")
        if click is None:
            log.warning("malformed Start again click ignored")
            return
        import asyncio

        from .start import start_again

        here = rt.for_workspace(click.tenant)
        asyncio.run(start_again(here.sessions, here.rules, click))

    app.action(START_AGAIN)(ack=ack_now, lazy=[run_again])
    app.action(APPROVE)(ack=ack_now, lazy=[lazy_click("approve")])
    app.action(REJECT)(ack=ack_now, lazy=[lazy_click("reject")])

    @app.action(CHANGE)
    def open_change_modal(ack: Ack, body: dict[str, Any]) -> None:
        ack()
        click = click_from_action(body, "change")
        if click is None:
            log.warning("malformed change click ignored")
            return
        here = rt.for_workspace(click.tenant)
        refusal = here.rules.may_answer(click.user) or (None if click.ref.session_id else GONE)
        if refusal:
            here.ack_outbox.tell(click.channel, click.user, refusal)
            return
        metadata = modal_metadata(
            here.metadata_key, click.tenant, click.ref, click.channel, click.message_ts
        )
        try:
            here.ack_web.views_open(trigger_id=body.get("trigger_id"), view=change_modal(metadata))
        except Exception as exc:  # noqa: BLE001 - any failure: say so, never crash the ack
            log.error("views.open failed: %s", exc)
            here.ack_outbox.tell(click.channel, click.user, NO_MODAL)

    def ack_change(ack: Ack, body: dict[str, Any]) -> None:
        change = read_change(rt.metadata_key, body)
        if isinstance(change, str):
            ack(response_action="errors", errors={CHANGE_BLOCK: change})
            return
        ack()

    def run_change(body: dict[str, Any]) -> None:
        change = read_change(rt.metadata_key, body)
        if isinstance(change, Click):
            run_click(rt, change)

    app.view(CHANGE_MODAL)(ack=ack_change, lazy=[run_change])
    home_listeners(app, rt, ack_now)
    removal_listeners(app, rt, ack_now)
    return app


def home_listeners(app: App, rt: Runtime, ack_now: Callable[[Ack], None]) -> None:
    """The Home tab (``bot.home``): acked at once, read and published in a lazy run. Bolt
    answers Slack's ``url_verification`` itself, after checking its signature."""

    def run_home(body: dict[str, Any]) -> None:
        event = body.get("event") or {}
        if event.get("tab") == "home" and isinstance(event.get("user"), str):
            from .home import publish_home

            team = str(body.get("team_id"))
            publish_home(rt.for_workspace(team), team, event["user"])

    app.event("app_home_opened")(ack=ack_now, lazy=[run_home])

    def home_click(body: dict[str, Any]) -> tuple[str, str, str, str] | None:
        """(tenant, user, value, action_ts) of a Home tab button, or None."""
        team, user = body.get("team") or {}, body.get("user") or {}
        (action, *_) = body.get("actions") or [{}]
        tenant, who = team.get("id"), user.get("id")
        value, at = action.get("value"), action.get("action_ts")
        if all(isinstance(p, str) and p for p in (tenant, who, value, at)):
            return str(tenant), str(who), str(value), str(at)
        return None

    def run_toggle(body: dict[str, Any]) -> None:
        click = home_click(body)
        if click is not None:
            from .home import publish_home
            from .home_view import SHOW_ITEMS

            (action, *_) = body["actions"]
            expanded = click[2] if action.get("action_id") == SHOW_ITEMS else None
            publish_home(rt.for_workspace(click[0]), click[0], click[1], expanded=expanded)

    def run_repeat(body: dict[str, Any]) -> None:
        click = home_click(body)
        if click is None:
            log.warning("malformed Repeat this order click ignored")
            return
        from .home import publish_home, repeat_order

        tenant, user, name, _ = click
        here = rt.for_workspace(tenant)
        publish_home(here, tenant, user, notice=repeat_order(here, tenant, user, name))

    app.action(SHOW_ITEMS)(ack=ack_now, lazy=[run_toggle])
    app.action(HIDE_ITEMS)(ack=ack_now, lazy=[run_toggle])
    app.action(REPEAT)(ack=ack_now, lazy=[run_repeat])
    app.action(OPEN)(ack_now)  # a link button: the browser opens the link


def removal_listeners(app: App, rt: Runtime, ack_now: Callable[[Ack], None]) -> None:
    """The app removed from a workspace (or its bot token revoked): everything of it goes
    (``bot.uninstall``). Bolt checks the signature and passes these without a token."""

    def run_removed(body: dict[str, Any]) -> None:
        from .uninstall import forget_workspace, removal_of

        removed = removal_of(body)
        if removed is not None:
            forget_workspace(rt, *removed)

    app.event("app_uninstalled")(ack=ack_now, lazy=[run_removed])
    app.event("tokens_revoked")(ack=ack_now, lazy=[run_removed])
