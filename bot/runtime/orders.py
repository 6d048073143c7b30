"""What builds the orders: where one workspace's approved baskets go, each once
(``bot.orders``): its settings' choice of destination (a canvas in the basket's channel, made
with the workspace's token; an Instacart list page; the household's signed webhook; a person's
Kroger cart, with their connected account), the key it
needs (read per order: ``bot.orders.destinations``), and the order records around each call."""

from __future__ import annotations

import functools
import time
from collections.abc import Callable
from typing import TYPE_CHECKING

from slack_sdk import WebClient

from bot.settings import Settings

if TYPE_CHECKING:
    from bot.orders.place import OrderDesk
    from bot.records.kroger_accounts import KrogerAccounts
    from bot.records.order_choice import OrderChoice
    from bot.records.orders import S3Orders
    from bot.records.workspace_secrets import WorkspaceSecrets


class Orders:
    """One workspace's destination and its order desk."""

    def __init__(
        self,
        settings: Settings,
        web: WebClient,
        choice: OrderChoice,
        records: Callable[[], S3Orders],
        secrets: Callable[[], WorkspaceSecrets | None],
        clock: Callable[[], float] = time.time,
        accounts: Callable[[], KrogerAccounts | None] = lambda: None,
    ) -> None:
        self.settings, self.web, self.choice = settings, web, choice
        self.records, self.secrets, self.clock = records, secrets, clock
        self.accounts = accounts

    @functools.cached_property
    def desk(self) -> OrderDesk:
        from bot.orders.destinations import destination_of
        from bot.orders.place import OrderDesk

        destination = destination_of(
            self.choice, self.settings, self.web, self.secrets(), self.accounts
        )
        return OrderDesk(self.records(), destination, self.clock)
