"""An approved basket into a person's Kroger cart: the destination ``kroger``.

Whose cart: the person the household's settings name (``OrderChoice.kroger_cart``), else whoever
approved the basket last. Their Kroger account is connected from the Home tab
(``bot.orders.kroger_connect``): what is kept is their refresh token
(``bot.records.kroger_accounts``).
One order, in the order desk's record (``bot.orders.place``)::

    1. read the person's refresh token (SSM)           none: not connected, said with Retry
    2. refresh it (Kroger rotates it: the one read      refused: connect again, said with Retry
       is spent), and save the new one before
       anything else
    3. PUT /v1/cart/add, the basket's products (UPC,    401: refresh once more and add again
       how many, PICKUP or DELIVERY as Settings say)    (nothing was added); no answer or a
                                                         5xx: it may be in the cart
    4. Placed: the cart's link; the items that had no product are listed by the thread

Kroger's cart has no idempotency key and cannot be read back (``bot.orders.kroger_cart``), so
this destination does not ``repeats_safely``: an attempt whose outcome is unknown is never made
again by the bot, only by the person's Retry after the thread told them to look in the cart.

A token saved in step 2 that SSM refused is lost (the old one is spent): the person connects
again. Nothing here logs a token.
"""

from __future__ import annotations

import logging
from urllib.parse import urlsplit

from bot.records.kroger_accounts import KrogerAccounts, SecretsDown

from .kroger import DEFAULT_URL
from .kroger_cart import CartItem, KrogerCart
from .kroger_values import (
    CartOutcomeUnknown,
    KrogerDown,
    KrogerError,
    KrogerRefused,
    NotConnected,
    RateLimited,
    TokenRefused,
)
from .order import (
    DestinationDown,
    DestinationKind,
    DestinationRefused,
    Order,
    OutcomeUnknown,
    Placed,
)

log = logging.getLogger(__name__)

CART_URL = "https://www.kroger.com/cart"  # where a customer sees their cart
NOT_CONNECTED = (
    "the Kroger account of the person whose cart orders go to is not connected: they connect it "
    "on weekly-shop's Home tab, then press Retry"
)
CONNECT_AGAIN = (
    "Kroger no longer accepts the connection to the cart's Kroger account: its owner connects it "
    "again on weekly-shop's Home tab, then presses Retry"
)
NOTHING_PRICED = (
    "none of the items has a product at the household's Kroger store, so nothing was added to "
    "the cart"
)
DOWN = "Kroger could not be reached just now, and nothing was added"
BUSY = "Kroger is turning calls away just now (its limit), and nothing was added"
READ_DOWN = "the cart's Kroger account could not be read just now, and nothing was added"
NO_ONE = "no one approved the basket, so there is no cart to add it to"


def cart_url(config_base_url: str) -> str:
    """The cart's page: Kroger's own; the local stand-in's for a stand-in's API."""
    if config_base_url.rstrip("/") == DEFAULT_URL.rstrip("/"):
        return CART_URL
    parts = urlsplit(config_base_url)
    return f"{parts.scheme}://{parts.netloc}/cart"


class KrogerCartDestination:
    """The cart of ``person`` (a Slack user ID; "" is whoever approved last), through the
    deploy's Kroger app (``cart``), with the people's tokens in ``accounts``."""

    kind: DestinationKind = "kroger"
    repeats_safely = False

    def __init__(
        self,
        cart: KrogerCart,
        accounts: KrogerAccounts | None,
        person: str = "",
        modality: str = "PICKUP",
    ) -> None:
        self.cart, self.accounts, self.person = cart, accounts, person
        self.modality = modality  # PICKUP or DELIVERY (OrderChoice.kroger_modality)

    def whose(self, order: Order) -> str:
        """Whose cart ``order`` goes to (fixed in its record by the first attempt)."""
        return self.person or (order.approved_by[-1] if order.approved_by else "")

    def place(self, order: Order) -> Placed:
        person = order.cart_person or self.whose(order)
        if not person:
            raise DestinationRefused(NO_ONE)
        if not order.cart:
            raise DestinationRefused(NOTHING_PRICED)
        items = [CartItem(upc, quantity) for upc, quantity in order.cart]
        access = self._renewed(order.team, person)
        try:
            try:
                self.cart.add_to_cart(access, items, self.modality)
            except TokenRefused:  # refused before adding anything: once more, renewed
                log.warning("order %s: Kroger refused a fresh token; renewed", order.order_id)
                self.cart.add_to_cart(self._renewed(order.team, person), items, self.modality)
        except CartOutcomeUnknown as exc:
            raise OutcomeUnknown(str(exc)) from exc
        except (NotConnected, TokenRefused) as exc:
            raise DestinationDown(CONNECT_AGAIN) from exc
        except KrogerRefused as exc:  # a product the store no longer carries, say
            raise DestinationRefused(str(exc)) from exc
        except KrogerError as exc:  # down before the add went out, or 429: nothing added
            log.error("order %s: %s", order.order_id, exc)
            raise DestinationDown(BUSY if isinstance(exc, RateLimited) else DOWN) from exc
        log.info("order %s: %d products added to a Kroger cart", order.order_id, len(items))
        return Placed(self.kind, url=cart_url(self.cart.config.base_url), ref=person)

    def _renewed(self, team: str, person: str) -> str:
        """A fresh access token for ``person``'s cart; their new refresh token saved first
        (``bot.orders.kroger_tokens``)."""
        from .kroger_tokens import NoneSaved, NotSaved, renewed

        if self.accounts is None:
            raise DestinationRefused(
                "this deploy keeps no Kroger accounts (WORKSPACE_SECRETS_PATH is unset)"
            )
        try:
            return renewed(self.cart, self.accounts, team, person).access_token
        except SecretsDown as exc:  # reading: nothing spent
            log.error("a Kroger token could not be read: %s", exc)
            raise DestinationDown(READ_DOWN) from exc
        except NotSaved as exc:  # the old token spent, the new one lost
            log.error("a renewed Kroger token could not be saved: %s", exc)
            raise DestinationDown(CONNECT_AGAIN) from exc
        except NoneSaved as exc:
            raise DestinationDown(NOT_CONNECTED) from exc
        except NotConnected as exc:
            raise DestinationDown(CONNECT_AGAIN) from exc
        except RateLimited as exc:  # refused before anything was spent: a Retry may do
            log.error("a Kroger token could not be renewed: %s", exc)
            raise DestinationDown(BUSY) from exc
        except KrogerDown as exc:
            log.error("a Kroger token could not be renewed: %s", exc)
            raise DestinationDown(DOWN) from exc
        except KrogerError as exc:
            raise DestinationRefused(f"{exc}; nothing was added") from exc


class NoKrogerApp:
    """Orders chosen for a Kroger cart in a deploy that no longer has a Kroger app."""

    kind: DestinationKind = "kroger"
    repeats_safely = False

    def place(self, order: Order) -> Placed:
        raise DestinationRefused(
            "this deploy has no Kroger app any more: an admin chooses where orders go in Settings"
        )
