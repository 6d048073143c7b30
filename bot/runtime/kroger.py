"""What connecting a person's Kroger account is given (``bot.steps.kroger_connect``), built from
a runtime: None unless the deploy has a Kroger app (``KROGER_CLIENT_ID`` and secret), a place
for the people's tokens (``WORKSPACE_SECRETS_PATH``) and the redirect URL registered with the
app (``KROGER_REDIRECT_URL``). A deploy without them imports nothing of Kroger's here: the
Home tab's lazy run and an approve's pay for no HTTP client they do not use.

The confirmation page's names (:func:`_names`) are asked of Slack with the workspace's own bot
token: ``users.info`` (scope ``users:read``, which the manifest has) and ``auth.test`` (no
scope; its ``team`` is the workspace's name). A failure leaves that name out (the page shows
the ID) and logs Slack's error code or the exception's class (``bot.slack.people``), never the
request or a token."""

from __future__ import annotations

import dataclasses
import functools
import logging
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from bot.slack.blocks import Block
    from bot.steps.kroger_connect import Connecting

    from . import Runtime

log = logging.getLogger(__name__)

NAMES_SECONDS = 5.0


def connecting_of(rt: Runtime) -> Connecting | None:
    """The workspace-independent part: the same for every workspace of the deploy."""
    s = rt.settings
    accounts = rt.records.kroger_accounts if s.has_prices else None
    if accounts is None or not s.kroger_redirect_url:
        return None
    from bot.orders.kroger import KrogerConfig
    from bot.orders.kroger_cart import KrogerCart
    from bot.orders.kroger_connect import KrogerStates
    from bot.slack.installs import STATES, install_prefix
    from bot.steps.kroger_connect import Connecting

    config = KrogerConfig.of(s)
    if config is None:
        return None
    # KROGER_API_URL is read with a trailing "/" (bot.settings_env), and the authorize link is
    # that URL and the path pasted together: one "/" between them, or the page is not found.
    config = dataclasses.replace(config, base_url=config.base_url.rstrip("/"))
    return Connecting(
        states=KrogerStates(s.slack_signing_secret.get_secret_value(), clock=rt.clock),
        cart=KrogerCart(config, clock=rt.clock),
        redirect_url=s.kroger_redirect_url,
        accounts=accounts,
        s3=rt.aws.s3,
        bucket=s.checkpoint_bucket,
        states_prefix=install_prefix(s.checkpoint_prefix) + STATES,
        installed=functools.partial(_installed, rt),
        republish=functools.partial(_republish, rt),
        names=functools.partial(_names, rt),
    )


def home_section_of(rt: Runtime) -> functools.partial[list[Block]] | None:
    """The Home tab's "Kroger cart" rows for (team, user); None without connecting."""
    connecting = connecting_of(rt)
    if connecting is None:
        return None
    from bot.steps.kroger_connect import home_section

    return functools.partial(home_section, connecting)


def _installed(rt: Runtime, team: str) -> bool:
    from bot.slack.installs import NotInstalled

    try:
        rt.for_workspace(team)
    except NotInstalled:
        return False
    return True


def _republish(rt: Runtime, team: str, user: str) -> None:
    from bot.steps.home import publish_home

    publish_home(rt.configured(team).home_tab, team, user)


def _names(rt: Runtime, team: str, user: str) -> tuple[str | None, str | None]:
    """(the person's name, the workspace's name) as Slack says them, asked in parallel within
    ``NAMES_SECONDS`` (a browser waits, and API Gateway gives up at 30 s); None for each it
    can't say in time."""
    from bot.slack.people import Deadline, answers_within
    from bot.steps.kroger_confirm import person_name

    try:
        web = rt.for_workspace(team).web
    except Exception as exc:  # noqa: BLE001 - any failure: the page names the IDs instead
        log.warning("no Slack client for a Kroger connection's workspace: %s", _said(exc))
        return None, None

    def person() -> str | None:
        return person_name(web.users_info(user=user)["user"])

    def workspace() -> str | None:
        name = web.auth_test().get("team")
        return name.strip() if isinstance(name, str) and name.strip() else None

    said = answers_within(Deadline(NAMES_SECONDS), {"person": person, "workspace": workspace})
    return said.get("person"), said.get("workspace")


def _said(exc: Exception) -> Any:
    """Slack's error code for a refused call, else the exception's class: nothing more."""
    from slack_sdk.errors import SlackApiError

    if isinstance(exc, SlackApiError):
        return exc.response.get("error")
    return type(exc).__name__
