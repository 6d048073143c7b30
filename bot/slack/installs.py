"""Many workspaces: Slack's OAuth flow on Lambda, and the bot token of each workspace.

With ``SLACK_CLIENT_ID`` and ``SLACK_CLIENT_SECRET`` set, the app is installed per workspace
("Add to Slack") with bolt-python's Lambda OAuth flow (``LambdaS3OAuthFlow``), its S3
installation store and a signed, single-use state store (``bot.slack.oauth_states``), in the
checkpoint bucket under a prefix of their own:

    <install prefix><client id>/<enterprise>-<team>/...   AmazonS3InstallationStore's objects
    <install prefix>states/used/<nonce>                   one empty marker per OAuth state
                                                          redeemed (``bot.slack.oauth_states``)

A state is signed, not stored: ``GET /slack/install`` writes nothing, and only a state this app
issued, redeemed within ten minutes, writes its marker (a day's lifecycle rule removes them).

The prefix (``weekly-shop-installs/``) is a sibling of the checkpoint prefix, not inside it: the
sessions' 30-day lifecycle rule must not delete an installation. Neither store takes a prefix, so
each gets an S3 client of its own whose every request is moved under it (a botocore
``before-parameter-build`` handler): the stores are Bolt's as shipped.

Every request is authorised with the token of the workspace it comes from (:class:`ByWorkspace`),
found in the installation store and kept per warm container for ``TTL_SECONDS``: a cold start
costs one S3 GET, a warm one none. A workspace with no installation gets no token, ever another
workspace's. Org-wide (Enterprise Grid) installs are refused with a page that says so. A token
Slack refuses (the app removed, and perhaps installed again through another container within
those five minutes) is read again once (:meth:`ByWorkspace.renewed`, ``bot.slack.client``).
"""

from __future__ import annotations

import logging
import threading
import time
from typing import TYPE_CHECKING, Any

from slack_bolt.authorization import AuthorizeResult
from slack_bolt.authorization.authorize import Authorize
from slack_bolt.context import BoltContext
from slack_bolt.response import BoltResponse

if TYPE_CHECKING:
    from bot.settings import Settings

log = logging.getLogger(__name__)

TTL_SECONDS = 300.0
MISSING_TTL_SECONDS = 10.0  # "not installed" is believed this long: an install shows at once
STATES = "states/"
INSTALL_PATH = "/slack/install"
REDIRECT_PATH = "/slack/oauth_redirect"
# What the bot needs (the manifest's scopes, and nothing more).
SCOPES = [
    "commands",
    "chat:write",
    "channels:read",
    "groups:read",
    "im:read",
    "mpim:read",
    "users:read",  # users.info: the Settings modal (bot.steps.settings)
    "canvases:write",  # the order's shopping list (bot.orders.canvas)
    "files:read",  # ...found again after a crash (bot.orders.place)
]
INSTALLED = "Weekly shop is installed"  # the result page's heading
NEXT_STEPS = (
    "In a channel, type <code>/invite @weekly-shop</code>, then <code>/shop</code> and the "
    "week's dinners."
)
NO_ORG_INSTALLS = (
    "Weekly shop is installed one workspace at a time: an organization-wide install is not "
    "supported. Install it from each workspace instead."
)


class NotInstalled(LookupError):
    """A request or a timer for a workspace the app is not installed in."""


def install_prefix(checkpoint_prefix: str) -> str:
    """``weekly-shop/`` → ``weekly-shop-installs/`` (``installs/`` for the bucket's root)."""
    from workflow.persistence.s3_keys import sibling_prefix

    return sibling_prefix(checkpoint_prefix, "installs")


def by_workspace_store(**options: Any) -> Any:
    """Bolt's ``AmazonS3InstallationStore``, with two changes. A workspace's installation is kept
    and found by its team ID alone (``none-<team>``), also for a workspace inside an Enterprise
    Grid org, whose requests name the org as well: one workspace, one installation, wherever
    the request comes from (org-wide installs are refused). And reading the bot raises on an S3
    failure instead of answering "not installed" (``StoreError``: a retry may work)."""
    import json

    from botocore.exceptions import BotoCoreError, ClientError
    from slack_sdk.oauth.installation_store import Bot
    from slack_sdk.oauth.installation_store.amazon_s3 import AmazonS3InstallationStore

    from workflow.persistence.s3_client import is_missing, store_error

    class ByWorkspaceStore(AmazonS3InstallationStore):
        def save(self, installation: Any) -> None:
            if installation.team_id and not installation.is_enterprise_install:
                installation.enterprise_id = None
            super().save(installation)

        def save_bot(self, bot: Any) -> None:
            if bot.team_id and not bot.is_enterprise_install:
                bot.enterprise_id = None
            super().save_bot(bot)

        def find_bot(self, *, enterprise_id: Any, team_id: Any, **kw: Any) -> Any:
            if not team_id:
                return super().find_bot(enterprise_id=enterprise_id, team_id=team_id, **kw)
            key = f"{self.client_id}/none-{team_id}/bot-latest"
            try:
                found = self.s3_client.get_object(Bucket=self.bucket_name, Key=key)
                return Bot(**json.loads(found["Body"].read().decode("utf-8")))
            except ClientError as exc:
                if is_missing(exc):
                    return None
                raise store_error("get installation", exc) from exc
            except BotoCoreError as exc:
                raise store_error("get installation", exc) from exc

        def find_installation(self, *, enterprise_id: Any, team_id: Any, **kw: Any) -> Any:
            e_id = None if team_id else enterprise_id
            return super().find_installation(enterprise_id=e_id, team_id=team_id, **kw)

        def delete_bot(self, *, enterprise_id: Any, team_id: Any) -> None:
            e_id = None if team_id else enterprise_id
            super().delete_bot(enterprise_id=e_id, team_id=team_id)

        def delete_installation(self, *, enterprise_id: Any, team_id: Any, **kw: Any) -> None:
            e_id = None if team_id else enterprise_id
            super().delete_installation(enterprise_id=e_id, team_id=team_id, **kw)

    return ByWorkspaceStore(**options)


def prefixed(s3: Any, prefix: str) -> Any:
    """``s3`` with every ``Key`` and ``Prefix`` it is given moved under ``prefix`` (a key it
    listed, given back, is already there)."""

    def move(params: dict[str, Any], **_: Any) -> None:
        for name in ("Key", "Prefix"):
            value = params.get(name)
            if isinstance(value, str) and not value.startswith(prefix):
                params[name] = prefix + value

    s3.meta.events.register("before-parameter-build.s3", move)
    return s3


class ByWorkspace(Authorize):
    """Bolt's authorize: the bot token of the request's workspace, from the installation store,
    cached for ``ttl`` seconds (no ``auth.test``: the installation holds the bot's IDs)."""

    def __init__(self, store: Any, ttl: float = TTL_SECONDS, clock: Any = time.monotonic) -> None:
        self.store = store
        self.ttl = ttl
        self.clock = clock
        self._mutex = threading.Lock()
        self._found: dict[tuple[str | None, str | None], tuple[float, Any]] = {}

    def bot(self, enterprise_id: str | None, team_id: str | None) -> Any:
        """The workspace's installed bot (``slack_sdk`` ``Bot``), or None."""
        key = (None, team_id or None)  # a workspace is found by its team alone
        now = self.clock()
        with self._mutex:
            cached = self._found.get(key)
        if cached is not None and now - cached[0] < (
            self.ttl if cached[1] else MISSING_TTL_SECONDS
        ):
            return cached[1]
        bot = self.store.find_bot(enterprise_id=None, team_id=key[1])  # StoreError: S3 failed
        if bot is not None and (bot.is_enterprise_install or bot.team_id != team_id):
            bot = None  # never an org-wide token, never another workspace's
        with self._mutex:
            self._found[key] = (now, bot)
        return bot

    def forget(self, enterprise_id: str | None, team_id: str | None) -> None:
        with self._mutex:
            self._found.pop((None, team_id or None), None)

    def renewed(self, team_id: str, refused: str | None) -> str | None:
        """The workspace's bot token after Slack refused ``refused`` (the app was removed, and
        perhaps installed again through another container): the cached bot is dropped if it
        still holds that token and the installation read again, once; a newer token already
        cached, or a "not installed" believed a few seconds more, costs no read. None when
        there is no installation, or it could not be read (then the refusal stands)."""
        from workflow.errors import StoreError

        key = (None, team_id or None)
        with self._mutex:
            cached = self._found.get(key)
            if cached is not None and cached[1] is not None and cached[1].bot_token == refused:
                del self._found[key]
        try:
            bot = self.bot(None, team_id)
        except StoreError as exc:
            log.warning("workspace %s: its installation could not be read again: %s", team_id, exc)
            return None
        return bot.bot_token if bot is not None else None

    def __call__(
        self,
        *,
        context: BoltContext,
        enterprise_id: str | None,
        team_id: str | None,
        user_id: str | None,
        actor_enterprise_id: str | None = None,
        actor_team_id: str | None = None,
        actor_user_id: str | None = None,
    ) -> AuthorizeResult | None:
        bot = self.bot(enterprise_id, team_id)
        if bot is None:  # expected: Slack still sends a removed app's last events; Bolt says 401
            log.info("no installation for workspace %s", team_id)
            return None
        return AuthorizeResult(
            enterprise_id=bot.enterprise_id,
            team_id=bot.team_id,
            bot_token=bot.bot_token,
            bot_id=bot.bot_id,
            bot_user_id=bot.bot_user_id,
            bot_scopes=bot.bot_scopes,
        )


def oauth_of(settings: Settings) -> tuple[Any, ByWorkspace]:
    """The OAuth flow and authorize of ``settings`` (many workspaces: both credentials set)."""
    from slack_sdk import WebClient

    from workflow.persistence.s3_client import make_s3_client

    if settings.slack_client_secret is None:
        raise ValueError("many workspaces need SLACK_CLIENT_SECRET")
    return oauth_flow(
        client_id=settings.slack_client_id,
        client_secret=settings.slack_client_secret.get_secret_value(),
        bucket=settings.checkpoint_bucket,
        prefix=install_prefix(settings.checkpoint_prefix),
        make_s3=make_s3_client,
        web_client=WebClient(base_url=settings.slack_api_url, timeout=10),
    )


def oauth_flow(
    *,
    client_id: str,
    client_secret: str,
    bucket: str,
    prefix: str,
    make_s3: Any,
    web_client: Any = None,
) -> tuple[Any, ByWorkspace]:
    """Bolt's Lambda OAuth flow with its S3 stores under ``prefix``, and the authorize that
    reads the same installations."""
    from slack_bolt.adapter.aws_lambda.lambda_s3_oauth_flow import LambdaS3OAuthFlow
    from slack_bolt.oauth.callback_options import CallbackOptions, FailureArgs, SuccessArgs
    from slack_bolt.oauth.oauth_settings import OAuthSettings

    from .oauth_states import SingleUseStateStore

    installations = by_workspace_store(
        s3_client=prefixed(make_s3(), prefix),
        bucket_name=bucket,
        client_id=client_id,
        historical_data_enabled=False,
    )
    states = SingleUseStateStore(
        client_secret=client_secret,
        s3_client=prefixed(make_s3(), prefix + STATES),
        bucket_name=bucket,
        expiration_seconds=600,
    )

    def success(args: SuccessArgs) -> BoltResponse:
        installation = args.installation
        if installation.is_enterprise_install:
            ids = {"enterprise_id": installation.enterprise_id, "team_id": installation.team_id}
            installations.delete_installation(**ids)
            installations.delete_bot(**ids)
            return page(400, "Not installed", NO_ORG_INSTALLS)
        authorize.forget(installation.enterprise_id, installation.team_id)  # a new token
        log.info("installed in workspace %s", installation.team_id)
        return page(200, INSTALLED, NEXT_STEPS)

    def failure(args: FailureArgs) -> BoltResponse:
        log.warning("installation refused: %s", args.reason)
        reason = {
            "invalid_state": "This install link has expired or was already used.",
            "missing_state": "This install link has expired or was already used.",
            "invalid_browser": "This install link was opened in another browser.",
            "access_denied": "The install was cancelled in Slack.",
        }.get(args.reason, "Slack did not confirm the install.")
        return page(args.suggested_status_code, "Not installed", f"{reason} {START_OVER}")

    settings = OAuthSettings(
        client_id=client_id,
        client_secret=client_secret,
        scopes=SCOPES,
        install_path=INSTALL_PATH,
        redirect_uri_path=REDIRECT_PATH,
        installation_store=installations,
        state_store=states,
        callback_options=CallbackOptions(success=success, failure=failure),
    )
    flow = LambdaS3OAuthFlow(
        client=web_client,
        settings=settings,
        oauth_state_bucket_name=bucket,
        installation_bucket_name=bucket,
    )
    authorize = ByWorkspace(installations)
    return flow, authorize


START_OVER = 'Start again from <a href="install">Add to Slack</a>.'


def page(status: int, title: str, html: str) -> BoltResponse:
    """A small HTML page (ours: no user input in it)."""
    body = (
        f"<!DOCTYPE html><html><head><meta charset=utf-8><title>{title}</title></head>"
        f"<body><h1>{title}</h1><p>{html}</p></body></html>"
    )
    return BoltResponse(status=status, body=body, headers={"Content-Type": "text/html"})
