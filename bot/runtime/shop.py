"""What builds the shopper and the workflow it runs in: Claude through the anthropic SDK when
the deploy has a key (imported only when it writes), else the offline shopper; and every
version of the shop's graph this code resumes, with the workspace's number of rounds."""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING

from bot.settings import Settings

if TYPE_CHECKING:
    from workflow.engine.versions import WorkflowVersions
    from workflow.shop.shopper import Shopper


class Shop:
    def __init__(
        self, settings: Settings, rounds: int, factory: Callable[[], Shopper] | None = None
    ) -> None:
        self.settings, self.rounds, self.factory = settings, rounds, factory

    def shopper(self) -> Shopper:
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
        )

    def workflow(self) -> WorkflowVersions:
        """Every version of the shop's graph this code resumes (``workflow.shop.graph``)."""
        from workflow.shop import graph

        return graph.shop_versions(self.shopper(), self.rounds)
