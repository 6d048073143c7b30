"""The change and Edit items modals' submissions: validated and acked (an empty change, a
quantity that is no number, an edit that empties the basket are refused in the modal), then
answered in a lazy run as the click each is (``bot.steps.clicks``); and the Settings modal's."""

from __future__ import annotations

from typing import Any

from slack_bolt import Ack, App, BoltContext

from bot.runtime import Runtime
from bot.slack.edit_form import EDIT_MODAL
from bot.slack.modal import CHANGE_BLOCK, CHANGE_MODAL
from bot.slack.payloads import Click, read_change, read_edit
from bot.slack.settings_ids import SETTINGS_MODAL

from .actions import run_click
from .settings_desk import settings_desk


def listen(app: App, rt: Runtime) -> None:
    def ack_change(ack: Ack, body: dict[str, Any]) -> None:
        change = read_change(rt.records.metadata_key, body)
        if isinstance(change, str):
            ack(response_action="errors", errors={CHANGE_BLOCK: change})
            return
        ack()

    def run_change(body: dict[str, Any]) -> None:
        change = read_change(rt.records.metadata_key, body)
        if isinstance(change, Click):
            run_click(rt, change)

    app.view(CHANGE_MODAL)(ack=ack_change, lazy=[run_change])

    def ack_edit(ack: Ack, body: dict[str, Any]) -> None:
        edit = read_edit(rt.records.metadata_key, body)
        if isinstance(edit, dict):
            ack(response_action="errors", errors=edit)
            return
        ack()

    def run_edit(body: dict[str, Any]) -> None:
        edit = read_edit(rt.records.metadata_key, body)
        if isinstance(edit, Click):
            run_click(rt, edit)

    def a_valid_edit(body: dict[str, Any]) -> bool:
        return isinstance(read_edit(rt.records.metadata_key, body), Click)

    # An edit answered in the modal (a quantity that is no number, an emptied basket, metadata
    # the bot did not write) runs no lazy run: Bolt runs a listener's lazy functions whatever
    # its ack said, and there is nothing to do.
    app.view(EDIT_MODAL, matchers=[a_valid_edit])(ack=ack_edit, lazy=[run_edit])
    app.view(EDIT_MODAL)(ack_edit)

    def ack_settings(ack: Ack, body: dict[str, Any], context: BoltContext) -> None:
        """Answered in the modal itself: saved (it closes), or why not (``bot.steps.settings``).
        The keys typed are stored here, in the ack, and the lazy run gets the submission
        without them (``bot.listeners.keyless``, where Bolt starts it)."""
        from bot.steps.settings import save_settings

        tenant, user = settings_submitter(body)
        if not tenant or not user:
            ack(response_action="errors", errors={"approvers": "This form could not be read."})
            return
        desk = settings_desk(rt.for_workspace(tenant), ack=True)
        answer = save_settings(desk, tenant, user, body.get("view"))
        if answer is None:
            ack()
        else:
            ack(**answer)

    def settle_settings(body: dict[str, Any]) -> None:
        """After the ack: the weekly run's schedule as saved, and the saver's Home tab, which
        shows the new settings at once, whatever the save carried."""
        from bot.steps.home import publish_home
        from bot.steps.settings import settle

        tenant, user = settings_submitter(body)
        if tenant and user:
            here = rt.configured(tenant)
            settle(here.settings_desk(), tenant, here.schedules.weekly)
            publish_home(here.home_tab, tenant, user)

    app.view(SETTINGS_MODAL)(ack=ack_settings, lazy=[settle_settings])


def settings_submitter(body: dict[str, Any]) -> tuple[str, str]:
    """(team, user) of a view submission ("" for what is missing)."""
    team, user = body.get("team") or {}, body.get("user") or {}
    tenant = team.get("id") if isinstance(team, dict) else None
    who = user.get("id") if isinstance(user, dict) else None
    return (tenant if isinstance(tenant, str) else ""), (who if isinstance(who, str) else "")
