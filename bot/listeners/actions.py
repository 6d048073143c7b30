"""The basket's buttons: Approve and Reject ack at once and answer in a lazy run
(``bot.steps.clicks``); Change… opens its modal in the ack (the trigger ID lives about three
seconds and works once); Edit items opens "Reading the basket…" in the ack and fills it in in a
lazy run (``bot.steps.edit``); Start again starts a new session (``bot.steps.start``). Undo on
the Home tab is the held basket's Undo, pressed from there (``bot.steps.home.undo_from_home``):
the same turn, and the tab published again with what became of it. The feedback buttons under
every basket ("Good basket" / "Not good") ack at once and are kept in a lazy run
(``bot.steps.feedback``): no lock, no turn, one record beside the basket's outcome."""

from __future__ import annotations

import logging
from collections.abc import Callable
from typing import Any

from slack_bolt import Ack, App

from bot.runtime import Runtime
from bot.slack.blocks import (
    APPROVE,
    CHANGE,
    EDIT,
    OPEN_ORDER,
    REJECT,
    RETRY_ORDER,
    START_AGAIN,
    UNDO,
)
from bot.slack.edit_form import edit_view_id, loading_edit_modal, said_modal
from bot.slack.feedback_buttons import FEEDBACK
from bot.slack.home_view import HOME_UNDO, failed_view
from bot.slack.modal import change_modal, modal_metadata
from bot.slack.payloads import GONE, Click, Kind, click_from_action, session_id_for
from workflow.errors import StoreError

log = logging.getLogger(__name__)

NO_MODAL = "The change form didn't open. Try again."
NO_EDIT_FORM = "The Edit items form didn't open. Try again."


def run_click(rt: Runtime, click: Click) -> None:
    """A lazy listener's work: the click's turn of its session (``bot.steps.clicks``)."""
    import asyncio

    from bot.slack.outcome import STORE_DOWN
    from bot.steps.clicks import answer_click

    try:
        here = rt.configured(click.tenant)  # who may answer, as the workspace says now
    except StoreError as exc:  # as a turn that cannot reach S3: said in the thread, nothing changed
        log.warning("the workspace's settings could not be read: %s", exc, exc_info=exc)
        rt.for_workspace(click.tenant).slack.outbox.post(
            click.channel, STORE_DOWN, click.message_ts
        )
        return
    asyncio.run(answer_click(here.sessions, here.rules, click))


def ack_now(ack: Ack) -> None:
    ack()


def undo_from_home(rt: Runtime, body: dict[str, Any]) -> None:
    """A lazy run's work: a held basket's Undo pressed on the Home tab, answered as the
    basket's own Undo (one turn of its session), then the tab again, saying what became of it."""
    import asyncio
    import dataclasses

    from bot.steps.clicks import answer_click
    from bot.steps.home import UNREADABLE, Told, after_undo, held_click, publish_home

    (action, *_) = body.get("actions") or [{}]
    said = [(body.get("team") or {}).get("id"), (body.get("user") or {}).get("id")]
    said.append(action.get("value"))
    if not all(isinstance(p, str) and p for p in said):
        log.warning("malformed Undo click on the Home tab ignored")
        return
    tenant, who, value = (str(p) for p in said)
    trigger = body.get("trigger_id") or action.get("action_ts")  # the same in every retry
    delivery = session_id_for("interaction", trigger) if isinstance(trigger, str) else ""
    try:
        here = rt.configured(tenant)  # who may answer, as the workspace says now
    except StoreError as exc:
        log.warning("the workspace's settings could not be read: %s", exc, exc_info=exc)
        rt.for_workspace(tenant).web.views_publish(user_id=who, view=failed_view(UNREADABLE))
        return
    tab = here.home_tab
    click = held_click(tab, tenant, who, value, delivery)
    if isinstance(click, str):
        publish_home(tab, tenant, who, notice=click)
        return
    told = Told(here.sessions.outbox, who)
    asyncio.run(answer_click(dataclasses.replace(here.sessions, outbox=told), here.rules, click))
    publish_home(tab, tenant, who, notice=after_undo(tab, click, told))


def feedback_pressed(rt: Runtime, body: dict[str, Any]) -> None:
    """A lazy run's work: one press of a basket's feedback buttons (``bot.steps.feedback``)."""
    from bot.records.feedback import feedback_beside
    from bot.steps.feedback import FeedbackDesk, Pressed, record_feedback

    click = click_from_action(body, "approve")  # who and where, read as for any click
    (action, *_) = body.get("actions") or [{}]
    value = action.get("value") if isinstance(action, dict) else None
    if click is None:
        log.warning("malformed feedback press ignored")
        return
    here = rt.for_workspace(click.tenant)
    history = rt.records.history
    desk = FeedbackDesk(rt.records.receipts, history, feedback_beside(history), here.slack.outbox)
    pressed = Pressed(click.tenant, click.user, click.channel, click.message_ts, str(value or ""))
    record_feedback(desk, pressed, here.slack.outbox.clock())


def listen(app: App, rt: Runtime) -> None:
    def lazy_click(kind: Kind) -> Callable[[dict[str, Any]], None]:
        def run(body: dict[str, Any]) -> None:
            click = click_from_action(body, kind)
            if click is None:
                log.warning("malformed %s click ignored", kind)
            else:
                run_click(rt, click)

        run.__name__ = f"run_{kind}"
        return run

    def lazy_step(kind: Kind, what: str) -> Callable[[dict[str, Any]], None]:
        """A button that is a step of its own (not an answer): Start again, Retry."""

        def run(body: dict[str, Any]) -> None:
            click = click_from_action(body, kind)
            if click is None:
                log.warning("malformed %s click ignored", what)
                return
            import asyncio

            from bot.steps.retry import retry_order
            from bot.steps.start import start_again

            step = start_again if kind == "again" else retry_order
            here = rt.configured(click.tenant)
            asyncio.run(step(here.sessions, here.rules, click))

        run.__name__ = f"run_{kind}"
        return run

    app.action(START_AGAIN)(ack=ack_now, lazy=[lazy_step("again", "Start again")])
    app.action(RETRY_ORDER)(ack=ack_now, lazy=[lazy_step("retry", "Retry")])
    app.action(APPROVE)(ack=ack_now, lazy=[lazy_click("approve")])
    app.action(REJECT)(ack=ack_now, lazy=[lazy_click("reject")])
    app.action(UNDO)(ack=ack_now, lazy=[lazy_click("undo")])
    app.action(OPEN_ORDER)(ack_now)  # a link button: the browser opens the list

    def run_feedback(body: dict[str, Any]) -> None:
        feedback_pressed(rt, body)

    app.action(FEEDBACK)(ack=ack_now, lazy=[run_feedback])

    def run_home_undo(body: dict[str, Any]) -> None:
        undo_from_home(rt, body)

    app.action(HOME_UNDO)(ack=ack_now, lazy=[run_home_undo])

    def open_edit_form(ack: Ack, body: dict[str, Any]) -> None:
        """The modal opens in the ack, saying it reads the basket (the ack reads no S3): the
        lazy run fills it in, by the ``external_id`` the trigger gives it."""
        ack()
        click = click_from_action(body, "edit")
        trigger = body.get("trigger_id")
        if click is None or not isinstance(trigger, str) or not trigger:
            log.warning("malformed Edit items click ignored")
            return
        here = rt.for_workspace(click.tenant)
        try:
            here.slack.ack_web.views_open(
                trigger_id=trigger, view=loading_edit_modal(edit_view_id(trigger))
            )
        except Exception as exc:  # noqa: BLE001 - any failure: say so, never crash the ack
            log.error("views.open failed: %s", exc)
            here.slack.ack_outbox.tell(click.channel, click.user, NO_EDIT_FORM)

    def fill_edit_form(body: dict[str, Any]) -> None:
        click = click_from_action(body, "edit")
        trigger = body.get("trigger_id")
        if click is None or not isinstance(trigger, str) or not trigger:
            return
        from bot.slack.outcome import STORE_DOWN
        from bot.steps.edit import fill_in, show_edit_form

        external_id = edit_view_id(trigger)
        try:
            here = rt.configured(click.tenant)  # who may answer, as the workspace says now
        except StoreError as exc:  # as a turn that cannot reach S3: said (in the modal)
            log.warning("the workspace's settings could not be read: %s", exc, exc_info=exc)
            view = said_modal(external_id, STORE_DOWN)
            fill_in(rt.for_workspace(click.tenant).web, external_id, view)
            return
        show_edit_form(
            here.sessions, here.rules, here.records.metadata_key, here.web, click, external_id
        )

    app.action(EDIT)(ack=open_edit_form, lazy=[fill_edit_form])

    @app.action(CHANGE)
    def open_change_modal(ack: Ack, body: dict[str, Any]) -> None:
        """The modal opens in the ack (the trigger works once, for about three seconds). Who
        may answer is the workspace's settings, which the ack path does not read (no S3
        there): the submission is refused in its lazy run (``bot.steps.clicks``)."""
        ack()
        click = click_from_action(body, "change")
        if click is None:
            log.warning("malformed change click ignored")
            return
        here = rt.for_workspace(click.tenant)
        if not click.ref.session_id:
            here.slack.ack_outbox.tell(click.channel, click.user, GONE)
            return
        metadata = modal_metadata(
            here.records.metadata_key, click.tenant, click.ref, click.channel, click.message_ts
        )
        try:
            here.slack.ack_web.views_open(
                trigger_id=body.get("trigger_id"), view=change_modal(metadata)
            )
        except Exception as exc:  # noqa: BLE001 - any failure: say so, never crash the ack
            log.error("views.open failed: %s", exc)
            here.slack.ack_outbox.tell(click.channel, click.user, NO_MODAL)
