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
        """Each item's offers; each name searched once (two items of one name share it).
        After the first search that fails, none more is started. Whatever the failure (a
        Kroger error, or an answer the client could not read): :class:`PricesUnavailable`,
        logged with its kind, never the basket failing."""
        where = self._where
        if where is None:
            raise PricesUnavailable("No store chosen.")
        terms = list(dict.fromkeys(search_term(item) for item in items))
        gate, failed = asyncio.Semaphore(WORKERS), asyncio.Event()

        async def one(term: str) -> tuple[Offer, ...] | None:
            async with gate:
                if failed.is_set():
                    return ()
                try:
                    return await asyncio.to_thread(self._search, where.store_id, term)
                except BaseException:
                    failed.set()
                    raise

        before = self.cache.calls
        try:
            answers = await asyncio.gather(*(one(term) for term in terms))
        except Exception as exc:  # noqa: BLE001 - any failure leaves the basket unpriced
            raise PricesUnavailable(_said(exc)) from exc
        by_term = dict(zip(terms, answers, strict=True))
        if terms and all(answer is None for answer in answers):
            log.warning("Kroger refused every search at store %s", where.store_id)
            raise PricesUnavailable(store_gone(where.store))
        made = self.cache.calls - before
        log.info(
            "priced %d items: %d Kroger searches, %d answered from the cache; %d searches "
            "in this container",
            len(items),
            made,
            len(items) - made,
            self.cache.calls,
        )
        return [by_term[search_term(item)] or () for item in items]

    def _search(self, location_id: str, term: str) -> tuple[Offer, ...] | None:
        kept = self.cache.get(location_id, term)
        if kept is not None:
            return kept
        try:
            found = self.client.products(term, location_id, LIMIT)
        except BadTerm:
            return ()  # no search Kroger takes (refused before calling): no product found
        except UnknownLocation:
            # A 400: the store, or (unconfirmed) this one term. One search refused is no
            # product found; every search refused is the store gone (``offers``).
            self.cache.counted()
            return None
        except KrogerError:
            self.cache.counted()
            raise
        self.cache.counted()
        self.cache.put(location_id, term, found)
        return found


def _said(exc: BaseException) -> str:
    """What the basket says of a failed search, the failure logged by its kind and message
    (which carry neither the secret nor a token: ``kroger_values``)."""
    if isinstance(exc, RateLimited):
        log.warning(
            "Kroger's product searches are at the day's limit (retry after %s s)", exc.retry_after
        )
        return BUSY
    log.warning("Kroger's product search failed: %s: %s", type(exc).__name__, exc)
    if isinstance(exc, KrogerDown):
        return DOWN
    return REFUSED if isinstance(exc, KrogerError) else DOWN
