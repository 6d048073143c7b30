"""The price-basket step's pricer for Kroger: each item's candidate products at the household's
store (``workflow.shop.pricing.Pricer``), searched concurrently within the API's limits.

- **Limits.** Kroger's Products API allows 10,000 calls a day per app (``bot.sandbox.kroger_api``
  says where that is written). Each search is one call, made only for an item not matched
  already (the step keeps what still holds), at most :data:`WORKERS` at once, and answered from
  :class:`ProductCache` when the same store was asked the same term in the last
  :data:`CACHE_SECONDS` (one container's memory: a warm Lambda's next basket, or two items with
  one name). :attr:`ProductCache.calls` counts the calls this container made.
- **Faults.** Past the day's limit (429), no answer, a 5xx, a refused token or a store Kroger no
  longer has: :class:`~workflow.shop.pricing.PricesUnavailable`, with a short reason the basket
  shows; the basket is posted without the missing prices and its approval waits for nothing.
  An item whose name is no search Kroger takes (under 3 characters, over 8 words) is found
  nowhere: "no product found", beside it.

The search term is the item's name as a US store says it (``workflow.shop.store_names``: the
household's "beef mince" is searched as "ground beef"); a name the table does not know is
searched as written, and what finds nothing says "no product found" beside the item.
"""

from __future__ import annotations

import asyncio
import logging
import threading
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

from workflow.shop.basket import Item
from workflow.shop.pricing import PricesUnavailable, Where
from workflow.shop.products import Offer
from workflow.shop.store_names import store_name

from .kroger import KrogerClient
from .kroger_values import BadTerm, KrogerDown, KrogerError, RateLimited, UnknownLocation

log = logging.getLogger(__name__)

WORKERS = 4  # searches at once: a 17-item basket in about 5 rounds of one call's latency
LIMIT = 10  # products a search answers: the match chooses among them
CACHE_SECONDS = 15 * 60  # a store's prices for a term, kept this long in one container
CACHE_ENTRIES = 2_000
BUSY = "Kroger's product search is at its limit for today: prices are tried again next change."
DOWN = "Kroger didn't answer: prices are tried again with the next change or edit."
REFUSED = "Kroger refused the search: prices are tried again with the next change or edit."


def store_gone(store: str) -> str:
    return f"Kroger no longer has the store {store}: an admin can choose one again in Settings."


@dataclass
class ProductCache:
    """Searches by (store, term), each kept :data:`CACHE_SECONDS`; and the calls made."""

    clock: Callable[[], float] = time.monotonic
    calls: int = 0
    _kept: dict[tuple[str, str], tuple[float, tuple[Offer, ...]]] = field(default_factory=dict)
    _lock: threading.Lock = field(default_factory=threading.Lock)

    def get(self, location_id: str, term: str) -> tuple[Offer, ...] | None:
        with self._lock:
            kept = self._kept.get((location_id, term))
            if kept is None or kept[0] <= self.clock():
                return None
            return kept[1]

    def put(self, location_id: str, term: str, offers: tuple[Offer, ...]) -> None:
        with self._lock:
            if len(self._kept) >= CACHE_ENTRIES:
                now = self.clock()
                self._kept = {k: v for k, v in self._kept.items() if v[0] > now}
                if len(self._kept) >= CACHE_ENTRIES:
                    self._kept.clear()
            self._kept[(location_id, term)] = (self.clock() + CACHE_SECONDS, offers)

    def counted(self) -> None:
        with self._lock:
            self.calls += 1


def search_term(item: Item) -> str:
    """What Kroger is asked for an item: its name as a US store says it ("beef mince" is
    "ground beef": ``workflow.shop.store_names``), spaces as one."""
    return " ".join(store_name(item.name).split())


class KrogerPricer:
    """Offers for a basket's items at ``where`` (None: no store chosen), through ``client``."""

    def __init__(self, client: KrogerClient, where: Where | None, cache: ProductCache) -> None:
        self.client, self._where, self.cache = client, where, cache

    def where(self) -> Where | None:
        return self._where

    async def offers(self, items: Sequence[Item]) -> list[Sequence[Offer]]:
        where = self._where
        if where is None:
            raise PricesUnavailable("No store chosen.")
        gate = asyncio.Semaphore(WORKERS)

        async def one(item: Item) -> tuple[Offer, ...]:
            async with gate:
                return await asyncio.to_thread(self._search, where.store_id, search_term(item))

        before = self.cache.calls
        try:
            found: list[Sequence[Offer]] = list(
                await asyncio.gather(*(one(item) for item in items))
            )
        except RateLimited as exc:
            log.warning(
                "Kroger's product searches are at the day's limit (retry after %s s)",
                exc.retry_after,
            )
            raise PricesUnavailable(BUSY) from exc
        except UnknownLocation as exc:
            raise PricesUnavailable(store_gone(where.store)) from exc
        except KrogerDown as exc:
            raise PricesUnavailable(DOWN) from exc
        except KrogerError as exc:
            raise PricesUnavailable(REFUSED) from exc
        made = self.cache.calls - before
        log.info(
            "priced %d items: %d Kroger searches, %d answered from the cache; %d searches "
            "in this container",
            len(items),
            made,
            len(items) - made,
            self.cache.calls,
        )
        return found

    def _search(self, location_id: str, term: str) -> tuple[Offer, ...]:
        kept = self.cache.get(location_id, term)
        if kept is not None:
            return kept
        try:
            found = self.client.products(term, location_id, LIMIT)
        except BadTerm:
            return ()  # no search Kroger takes (refused before calling): no product found
        except KrogerError:
            self.cache.counted()
            raise
        self.cache.counted()
        self.cache.put(location_id, term, found)
        return found
