"""The app's Home tab (``bot.steps.home``): ``app_home_opened`` and the tab's buttons (Show
items, Hide items, Repeat this order, the Kroger cart's Disconnect) are acked at once, read and
published in a lazy run; so is a ZIP code's search in the Settings modal the tab opens. Bolt
answers Slack's ``url_verification`` itself, after checking its signature."""

from __future__ import annotations

import hashlib
import logging
from typing import Any

from slack_bolt import Ack, App

from bot.runtime import Runtime
from bot.slack.home_view import HIDE_ITEMS, OPEN, REPEAT, SHOW_ITEMS
from bot.slack.kroger_section import KROGER_CONNECT, KROGER_DISCONNECT
from bot.slack.settings_ids import OPEN_SETTINGS, STORE_ZIP, loading_modal

from .settings_desk import settings_desk, store_picker

log = logging.getLogger(__name__)


def ack_now(ack: Ack) -> None:
    ack()


def home_click(body: dict[str, Any]) -> tuple[str, str, str, str] | None:
    """(tenant, user, value, action_ts) of a Home tab button, or None."""
    team, user = body.get("team") or {}, body.get("user") or {}
    (action, *_) = body.get("actions") or [{}]
    tenant, who = team.get("id"), user.get("id")
    value, at = action.get("value"), action.get("action_ts")
    if all(isinstance(p, str) and p for p in (tenant, who, value, at)):
        return str(tenant), str(who), str(value), str(at)
    return None


def settings_view_id(trigger_id: str) -> str:
    """The Settings modal's ``external_id`` (unique per workspace) from the trigger that opened
    it: the lazy run of the same click updates the modal by it, without its view ID."""
    return "settings-" + hashlib.sha256(trigger_id.encode()).hexdigest()[:32]


def listen(app: App, rt: Runtime) -> None:
    def run_home(body: dict[str, Any]) -> None:
        event = body.get("event") or {}
        if event.get("tab") == "home" and isinstance(event.get("user"), str):
            from bot.steps.home import publish_home

            team = str(body.get("team_id"))
            publish_home(rt.configured(team).home_tab, team, event["user"])

    def run_toggle(body: dict[str, Any]) -> None:
        click = home_click(body)
        if click is not None:
            from bot.steps.home import publish_home

            (action, *_) = body["actions"]
            expanded = click[2] if action.get("action_id") == SHOW_ITEMS else None
            publish_home(rt.configured(click[0]).home_tab, click[0], click[1], expanded=expanded)

    def run_repeat(body: dict[str, Any]) -> None:
        click = home_click(body)
        if click is None:
            log.warning("malformed Repeat this order click ignored")
            return
        from bot.steps.home import publish_home, repeat_order

        tenant, user, name, _ = click
        here = rt.configured(tenant)
        tab = here.home_tab
        publish_home(tab, tenant, user, notice=repeat_order(tab, tenant, user, name))

    def open_settings(ack: Ack, body: dict[str, Any]) -> None:
        """The modal opens in the ack (the trigger works once, for about three seconds), saying
        it reads the settings; the lazy run, which reads them, fills it in."""
        ack()
        click = home_click(body)
        trigger = body.get("trigger_id")
        if click is None or not isinstance(trigger, str):
            log.warning("malformed Settings click ignored")
            return
        try:
            rt.for_workspace(click[0]).slack.ack_web.views_open(
                trigger_id=trigger, view=loading_modal(settings_view_id(trigger))
            )
        except Exception as exc:  # noqa: BLE001 - any failure: the lazy run finds no modal
            log.error("views.open failed: %s", exc)

    def show_settings(body: dict[str, Any]) -> None:
        click = home_click(body)
        trigger = body.get("trigger_id")
        if click is None or not isinstance(trigger, str):
            return
        from bot.steps.settings import show_settings

        tenant, user = click[0], click[1]
        desk = settings_desk(rt.configured(tenant))
        show_settings(desk, tenant, user, settings_view_id(trigger))

    def run_store_search(body: dict[str, Any]) -> None:
        """A ZIP code typed into the Settings modal and Enter pressed: its stores, in the
        modal (``bot.steps.settings_store``)."""
        team = body.get("team") or {}
        tenant = team.get("id") if isinstance(team, dict) else None
        if not isinstance(tenant, str) or not tenant:
            log.warning("malformed store search ignored")
            return
        from bot.steps.settings_store import find_stores

        here = rt.configured(tenant)
        picker = store_picker(here)
        if picker is not None:
            find_stores(picker, here.web, tenant, here.current, body)

    def run_disconnect(body: dict[str, Any]) -> None:
        """Disconnect in the Home tab's Kroger cart: the person's token deleted, the tab
        published again saying so (``bot.steps.kroger_connect``)."""
        click = home_click(body)
        if click is None:
            log.warning("malformed Disconnect click ignored")
            return
        from bot.runtime.kroger import connecting_of
        from bot.steps.home import publish_home
        from bot.steps.kroger_connect import disconnect

        tenant, user = click[0], click[1]
        here = rt.configured(tenant)
        connecting = connecting_of(here)
        if connecting is None:  # the deploy connects no Kroger accounts (any more)
            return
        publish_home(here.home_tab, tenant, user, notice=disconnect(connecting, tenant, user))

    app.event("app_home_opened")(ack=ack_now, lazy=[run_home])
    app.action(OPEN_SETTINGS)(ack=open_settings, lazy=[show_settings])
    app.action(SHOW_ITEMS)(ack=ack_now, lazy=[run_toggle])
    app.action(HIDE_ITEMS)(ack=ack_now, lazy=[run_toggle])
    app.action(REPEAT)(ack=ack_now, lazy=[run_repeat])
    app.action({"block_id": STORE_ZIP})(ack=ack_now, lazy=[run_store_search])
    app.action(OPEN)(ack_now)  # a link button: the browser opens the link
    app.action(KROGER_CONNECT)(ack_now)  # …and so is Connect: Kroger's page opens
    app.action(KROGER_DISCONNECT)(ack=ack_now, lazy=[run_disconnect])
