"""The change modal's submission: validated and acked (an empty change is refused in the
modal), then answered in a lazy run as the click it is (``bot.steps.clicks``)."""

from __future__ import annotations

from typing import Any

from slack_bolt import Ack, App

from bot.runtime import Runtime
from bot.slack.modal import CHANGE_BLOCK, CHANGE_MODAL
from bot.slack.payloads import Click, read_change

from .actions import run_click


def listen(app: App, rt: Runtime) -> None:
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
