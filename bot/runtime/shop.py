"""What builds the shopper and the workflow it runs in: Claude through the anthropic SDK when
the deploy has a key (imported only when it writes), else the offline shopper; the pricer, when
the deploy has a Kroger app (``bot.orders.kroger_prices``: the workspace's store and budget; one
Kroger client and product cache per container, so a token and a search are asked for once); and
every version of the shop's graph this code resumes, with the workspace's number of rounds."""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING

from bot.settings import Settings

if TYPE_CHECKING:
    from bot.orders.kroger import KrogerClient, KrogerConfig
    from bot.orders.kroger_prices import ProductCache
    from bot.records.workspace_settings import ChosenStore
    from workflow.engine.versions import WorkflowVersions
    from workflow.shop.pricing import Pricer
    from workflow.shop.shopper import Shopper

# One Kroger client (its app token) and product cache per container and Kroger app.
_KROGER: dict[KrogerConfig, tuple[KrogerClient, ProductCache]] = {}


class Shop:
    def __init__(
        self,
        settings: Settings,
        rounds: int,
        factory: Callable[[], Shopper] | None = None,
        store: ChosenStore | None = None,
        budget_cents: int | None = None,
    ) -> None:
        self.settings, self.rounds, self.factory = settings, rounds, factory
        self.store, self.budget_cents = store, budget_cents

    def shopper(self) -> Shopper:
        from bot.metrics import model_usage
        from workflow.shop.offline import OfflineShopper
        from workflow.shop.shopper import ClaudeShopper

        if self.factory is not None:
            return self.factory()
        key = self.settings.anthropic_api_key
        if key is None:
            return OfflineShopper()
        return ClaudeShopper(
            model=self.settings.anthropic_model,
            api_key=key.get_secret_value(),
            timeout=self.settings.anthropic_timeout_seconds,
            store_note=self._store_note(),
            on_usage=model_usage,
        )

    def _store_note(self) -> str:
        """Where the basket will be priced, told to Claude (none without a store or Kroger)."""
        from workflow.shop.pricing import store_note

        pricer = self.pricer()
        where = None if pricer is None else pricer.where()
        return "" if where is None else store_note(where)

    def kroger(self) -> tuple[KrogerClient, ProductCache] | None:
        """The container's Kroger client (its app token kept) and product cache; None when the
        deploy has no Kroger app (then nothing of Kroger's is imported: an approve's lazy run
        pays for no HTTP client it does not use)."""
        if not self.settings.has_prices:
            return None
        from bot.orders.kroger import KrogerClient, KrogerConfig
        from bot.orders.kroger_prices import ProductCache

        config = KrogerConfig.of(self.settings)
        if config is None:
            return None
        if config not in _KROGER:
            _KROGER[config] = (KrogerClient(config), ProductCache())
        return _KROGER[config]

    def pricer(self) -> Pricer | None:
        """Kroger's prices at the workspace's store; None when the deploy has no Kroger app."""
        kroger = self.kroger()
        if kroger is None:
            return None
        from bot.orders.kroger_prices import KrogerPricer
        from workflow.shop.pricing import Where

        client, cache = kroger
        store = self.store
        where = None if store is None else Where(store.location_id, store.name, self.budget_cents)
        return KrogerPricer(client, where, cache)

    def workflow(self) -> WorkflowVersions:
        """Every version of the shop's graph this code resumes (``workflow.shop.graph``)."""
        from workflow.shop import graph

        return graph.shop_versions(self.shopper(), self.rounds, self.pricer())
