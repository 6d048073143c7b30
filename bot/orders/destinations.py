"""Which destination a workspace's orders go to, and with which key: its settings' choice
(``bot.records.order_choice``), its own keys (``bot.records.workspace_secrets``), else the
deploy's (``bot.settings``).

A key is read as an order is placed (one SSM ``GetParameter``, decrypted), never when the
destination is built: most turns order nothing. The deploy's webhook signing secret signs only
for the deploy's own ``ORDER_WEBHOOK_URL``: a URL a workspace typed is signed with the
workspace's secret, or not sent.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from typing import TYPE_CHECKING

from slack_sdk import WebClient

from bot.records.order_choice import OrderChoice
from bot.settings import Secret, Settings
from workflow.errors import StoreError

from .order import Destination, DestinationDown, KeyOf

if TYPE_CHECKING:
    from bot.records.kroger_accounts import KrogerAccounts
    from bot.records.workspace_secrets import KeyName, WorkspaceSecrets

log = logging.getLogger(__name__)


def key_of(
    secrets: WorkspaceSecrets | None,
    name: KeyName,
    deploy: Secret | None,
    serves: Callable[[str], bool] = lambda team: True,
) -> KeyOf:
    """The key ``name`` of the workspace an order is for: its own (SSM), else ``deploy``'s if
    it ``serves`` that workspace (``Settings.deploy_keys_serve``); :class:`DestinationDown` when
    SSM cannot say (the order is told with Retry)."""

    def key(team: str) -> str | None:
        if secrets is not None:
            try:
                found = secrets.read(team, name)
            except StoreError as exc:
                log.error("%s", exc)
                raise DestinationDown("the workspace's key could not be read just now") from exc
            if found is not None:
                return found
        if deploy is None or not serves(team):
            return None
        return deploy.get_secret_value()

    return key


def destination_of(
    choice: OrderChoice,
    s: Settings,
    web: WebClient,
    secrets: WorkspaceSecrets | None,
    accounts: Callable[[], KrogerAccounts | None] = lambda: None,
) -> Destination:
    """The destination ``choice`` names, with the workspace's Web API client (a canvas) and
    the people's Kroger accounts (a cart)."""
    if choice.destination == "kroger":
        from .kroger import KrogerConfig
        from .kroger_cart import KrogerCart
        from .kroger_order import KrogerCartDestination, NoKrogerApp

        config = KrogerConfig.of(s)
        if config is None:
            return NoKrogerApp()
        return KrogerCartDestination(
            KrogerCart(config), accounts(), choice.kroger_cart, choice.kroger_modality
        )
    if choice.destination == "webhook":
        from .webhook import WebhookDestination

        deploy = s.order_webhook_secret if choice.webhook_url == s.order_webhook_url else None
        return WebhookDestination(
            choice.webhook_url,
            key_of(secrets, "webhook-signing-secret", deploy, s.deploy_keys_serve),
            pinned=s.order_webhook_pinned_hosts,
            ca_file=s.order_webhook_ca_bundle or None,
        )
    if choice.destination == "instacart":
        from .instacart import SERVERS, InstacartDestination

        server = s.instacart_api_url or SERVERS[choice.instacart_server]  # type: ignore[index]
        return InstacartDestination(
            key_of(secrets, "instacart-api-key", s.instacart_api_key, s.deploy_keys_serve), server
        )
    from .canvas import CanvasDestination

    return CanvasDestination(web)
