"""``/shop``: acked with "Writing your basket…" (or why not), started in a lazy run
(``bot.steps.start``)."""

from __future__ import annotations

import logging
from typing import Any

from slack_bolt import Ack, App

from bot.runtime import Runtime
from bot.slack.payloads import MAX_REQUEST_LENGTH, read_shop, request_text
from workflow.errors import StoreError

log = logging.getLogger(__name__)

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
        if shop is None:
            return
        from bot.steps.start import TRY_AGAIN, start_command

        try:
            here = rt.configured(shop.where.tenant)  # the workspace's rounds, its household
        except StoreError as exc:  # as a start that cannot reach S3: said, nothing started
            log.warning("the workspace's settings could not be read: %s", exc, exc_info=exc)
            rt.for_workspace(shop.where.tenant).slack.outbox.post(shop.where.channel, TRY_AGAIN)
            return
        closed = here.rules.closed  # settings no one can read: no basket nobody could approve
        if closed and shop.where.reply_url:  # (and no model call): said as the ack was
            here.slack.outbox.reply(shop.where.reply_url, closed)
        elif closed:
            here.slack.outbox.tell(shop.where.channel, shop.user, closed)
        else:
            start_command(here.sessions, shop, here.current.household)

    app.command("/shop")(ack=ack_shop, lazy=[run_shop])
