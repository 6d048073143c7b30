"""The app removed from a workspace (``app_uninstalled``, or ``tokens_revoked`` naming the bot's
token): acked at once, and everything of that workspace forgotten in a lazy run
(``bot.steps.uninstall``). Bolt checks the signature and passes these without a token.

Slack's retries of an event (``X-Slack-Retry-Num``) are handled like the first delivery, not
dropped: Slack retries only what got no 200 in time, perhaps because handing it off failed, and
every lazy run here is safe to repeat (a removal, a Home tab). Slack sends no retries of commands
and clicks."""

from __future__ import annotations

from typing import Any

from slack_bolt import Ack, App

from bot.runtime import Runtime


def ack_now(ack: Ack) -> None:
    ack()


def listen(app: App, rt: Runtime) -> None:
    def run_removed(body: dict[str, Any]) -> None:
        from bot.steps.uninstall import forget_workspace, removal_of

        removed = removal_of(body)
        if removed is not None:
            forget_workspace(rt.forgetting, *removed)

    app.event("app_uninstalled")(ack=ack_now, lazy=[run_removed])
    app.event("tokens_revoked")(ack=ack_now, lazy=[run_removed])
