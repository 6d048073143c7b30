"""Who a request is from: with one workspace, SLACK_BOT_TOKEN for every request (no
``auth.test`` round trip on the ack path); with many, Bolt's OAuth flow serves the install page
and Slack's redirect (``bot.slack.installs``), and each request is authorised with its
workspace's token."""

from __future__ import annotations

from typing import Any

from slack_bolt.authorization import AuthorizeResult

from bot.runtime import Runtime

NOT_INSTALLED = (
    "Weekly shop isn't installed in this workspace (or was removed): someone who may add apps "
    "can install it again with Add to Slack."
)


def auth_options(rt: Runtime) -> dict[str, Any]:
    """The keyword arguments of Bolt's ``App`` that say how a request is authorised."""
    if rt.oauth is not None:
        flow, by_workspace = rt.oauth
        return {
            "authorize": by_workspace,
            "oauth_flow": flow,
            "user_facing_authorize_error_message": NOT_INSTALLED,
        }
    token = rt.settings.slack_bot_token.get_secret_value()

    def authorize(enterprise_id: str | None, team_id: str | None, **_: Any) -> AuthorizeResult:
        return AuthorizeResult(enterprise_id=enterprise_id, team_id=team_id, bot_token=token)

    return {"authorize": authorize}
