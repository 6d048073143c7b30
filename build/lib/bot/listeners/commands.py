"""``/shop``: acked with "Writing your basket…" (or why not), started in a lazy run
(``bot.steps.start``)."""

from __future__ import annotations

from typing import Any

from slack_bolt import Ack, App

from bot.runtime import Runtime
from bot.slack.payloads import MAX_REQUEST_LENGTH, read_shop, request_text

USAGE = "Tell me the week's dinners, e.g. `/shop pasta Monday, fish Friday; we have rice`."
TOO_LONG = f"That's more than I can read: keep the week under {MAX_REQUEST_LENGTH} characters."
WRITING = "Writing your basket…"
INCOMPLETE = "I couldn't read that request. Try /shop again."


def listen(app: App, rt: Runtime) -> None:
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
            from bot.steps.start import start_command

            start_command(rt.for_workspace(shop.where.tenant).sessions, shop)

    app.command("/shop")(ack=ack_shop, lazy=[run_shop])
