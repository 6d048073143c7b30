"""The bot's WebClient: slack_sdk's, which follows its workspace's token once when Slack says
the one it holds is dead.

A warm container keeps each workspace's installed bot for five minutes (``bot.slack.installs``). If
the app is removed and installed again meanwhile, through another container, Slack revokes the old
token and this container's next call is refused, after the basket it was posting had already
cost a model call. Slack refuses a dead token with HTTP 200 and ``{"ok": false, "error": …}``
(every Web API answer carries ``ok``, and ``error`` on failure: slackhq/slack-api-docs
``index_web.md``; ``invalid_auth``: "the provided token is invalid", ``token_revoked``: "…or
the app has been removed", ``account_inactive``: "a deleted user or workspace when using a bot
token": https://api.slack.com/methods/auth.revoke and every method's error table). On one of
those the client asks ``renew`` for the workspace's token once (the installation read again,
``ByWorkspace.renewed``) and, if that is another token, sends the same call once more with it;
otherwise, or if that fails too, the original refusal is raised, as before.

Not a slack_sdk ``RetryHandler``: a handler does see the response body, but the retry sends the
same urllib ``Request`` again (``BaseClient._perform_urllib_http_request`` keeps ``req`` and
hands each handler a copy, ``HttpRequest.from_urllib_http_request``, with a headers dict of its
own), so a handler cannot change the next attempt's ``Authorization``.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from typing import Any

from slack_sdk import WebClient
from slack_sdk.errors import SlackApiError
from slack_sdk.http_retry.builtin_handlers import (
    ConnectionErrorRetryHandler,
    RateLimitErrorRetryHandler,
)
from slack_sdk.web import SlackResponse

from bot.metrics import count
from bot.settings import Settings

log = logging.getLogger(__name__)

# What Slack answers for a token that no longer works (revoked, app removed, workspace gone).
DEAD_TOKEN = frozenset({"invalid_auth", "token_revoked", "account_inactive"})

# The workspace's current token, given the one Slack refused; None when there is none other.
Renew = Callable[[str | None], str | None]


class RenewingWebClient(WebClient):
    """slack_sdk's WebClient; with ``renew``, a call refused for its token is sent once more
    with the token ``renew`` finds, if that is another one (never more than once a call)."""

    def __init__(self, *, renew: Renew | None = None, **options: Any) -> None:
        super().__init__(**options)
        self.renew = renew

    def api_call(self, api_method: str, **kwargs: Any) -> SlackResponse:
        sent = self.token  # as sent: another thread may renew the client meanwhile
        try:
            return super().api_call(api_method, **kwargs)
        except SlackApiError as exc:
            fresh = self._renewed(exc, sent)
            if fresh is None:
                raise
        self.token = fresh  # later calls of this client use it too, with no re-read
        return super().api_call(api_method, **kwargs)

    def _renewed(self, refused: SlackApiError, sent: str | None) -> str | None:
        error = refused.response.get("error")
        if self.renew is None or error not in DEAD_TOKEN:
            return None
        if self.token != sent:  # renewed by another call since this one was sent: use that
            return self.token
        fresh = self.renew(sent)
        if not fresh or fresh == sent:
            return None
        log.warning("Slack refused the bot token (%s); trying once with the installed one", error)
        return fresh


class _CountedConnectionRetries(ConnectionErrorRetryHandler):
    """slack_sdk's handler; each retry it makes is counted (``SlackRetries``)."""

    def prepare_for_next_attempt(self, **kwargs: Any) -> None:
        count("SlackRetries")
        super().prepare_for_next_attempt(**kwargs)


class _CountedRateLimitRetries(RateLimitErrorRetryHandler):
    """slack_sdk's handler; each retry it makes is counted (``SlackRetries``)."""

    def prepare_for_next_attempt(self, **kwargs: Any) -> None:
        count("SlackRetries")
        super().prepare_for_next_attempt(**kwargs)


def make_web_client(settings: Settings, renew: Renew | None = None) -> WebClient:
    """The real WebClient, at ``SLACK_API_URL``, with slack_sdk's own retry handlers (each
    retry counted); with ``renew``, one that follows the workspace's token once when Slack
    refuses it."""
    return RenewingWebClient(
        renew=renew,
        token=settings.slack_bot_token.get_secret_value(),
        base_url=settings.slack_api_url,
        timeout=10,
        retry_handlers=[
            _CountedConnectionRetries(max_retry_count=2),
            _CountedRateLimitRetries(max_retry_count=2),
        ],
    )
