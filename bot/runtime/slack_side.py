"""What builds the Slack side of one workspace's view: its WebClients (the lazy runs', with
slack_sdk's retries; the ack's, with none inside Slack's 3 seconds), the outboxes that post
through them, and the workspace's links. With many workspaces, Bolt's OAuth flow and the
installations it reads are built once for all (:func:`installs_of`)."""

from __future__ import annotations

import functools
import logging
import time
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from slack_sdk import WebClient

from bot.settings import Settings
from bot.slack.client import Renew, RenewingWebClient
from bot.slack.outbox import Outbox

if TYPE_CHECKING:
    from bot.slack.installs import ByWorkspace

log = logging.getLogger(__name__)

Installs = tuple[Any, "ByWorkspace"]  # Bolt's OAuth flow, and the authorize reading installations


def installs_of(settings: Settings) -> Installs | None:
    """Many workspaces: Bolt's OAuth flow and the authorize reading its installations
    (``bot.slack.installs``); None with one workspace and SLACK_BOT_TOKEN."""
    if not settings.multi_workspace:
        return None
    from bot.slack.installs import oauth_of

    return oauth_of(settings)


def installer_of(installs: Installs | None, team_id: str) -> str | None:
    """Who added the app to ``team_id`` (its installation's user), None with one workspace."""
    if installs is None:
        return None
    store = installs[0].settings.installation_store
    found = store.find_installation(enterprise_id=None, team_id=team_id)
    return str(found.user_id) if found is not None and found.user_id else None


class SlackSide:
    """One workspace's WebClients, outboxes and links. ``web`` carries its bot token;
    ``renew`` reads that token again when Slack refuses it (``bot.slack.client``); ``rounds``
    is asked only when an outbox is built (the ack path's WebClient needs no settings read)."""

    def __init__(
        self,
        settings: Settings,
        web: WebClient,
        rounds: Callable[[], int],
        renew: Renew | None = None,
        clock: Callable[[], float] = time.time,
    ) -> None:
        self.settings, self.web, self.rounds, self.renew, self.clock = (
            settings,
            web,
            rounds,
            renew,
            clock,
        )

    @functools.cached_property
    def ack_web(self) -> WebClient:
        """The WebClient for calls made before the ack (``views.open``, a refusal): a short
        timeout and no retry sleeps, since Slack's 3 seconds include them."""
        return RenewingWebClient(
            renew=self.renew,
            token=self.settings.slack_bot_token.get_secret_value(),
            base_url=self.settings.slack_api_url,
            timeout=2,
            retry_handlers=[],
        )

    @functools.cached_property
    def outbox(self) -> Outbox:
        """What the bot posts where, through the WebClient with slack_sdk's retries."""
        return Outbox(self.web, self.rounds(), self.clock)

    @functools.cached_property
    def ack_outbox(self) -> Outbox:
        """The outbox of the ack path: no retry sleeps inside Slack's 3 seconds."""
        return Outbox(self.ack_web, self.rounds(), self.clock)

    @functools.cached_property
    def workspace_url(self) -> str:
        """``https://<workspace>.slack.com/`` (one ``auth.test`` per cold start), for links."""
        try:
            return str(self.web.auth_test()["url"])
        except Exception as exc:  # noqa: BLE001 - links then open Slack's own page
            log.error("auth.test failed: %s", exc)
            return "https://slack.com/"

    def permalink(self, channel: str, ts: str) -> str:
        """A message's link, as Slack writes them (``…/archives/<channel>/p<ts without .>``)."""
        return f"{self.workspace_url.rstrip('/')}/archives/{channel}/p{ts.replace('.', '')}"
