"""Renewing a person's Kroger connection: their refresh token read (``bot.records
.kroger_accounts``), exchanged at Kroger for new tokens (``bot.orders.kroger_cart``), and the new
refresh token saved before anything else.

Kroger spends a refresh token when it is used ("invalidated once the client has used it":
Kroger's refresh token tutorial), so two renewals of one person at once (an order, and their
Home tab renewing an old token) cannot both use the one they read: the second is refused
(``invalid_grant``). Before taking that for a dead connection, :func:`renewed` reads the
parameter again: a token saved meanwhile is the other renewal's, and is used once instead.
And before saving its new token it reads the parameter once more: gone (the person pressed
Disconnect, or the app was removed, while Kroger answered) is not brought back, and a newer one
(they connected again) is not overwritten. SSM has no conditional write, so a Disconnect in
the few milliseconds between that read and the save is the one case left.

How long a refresh token lives is not published (one public client assumes six months): each
order renews it, and so does the person's Home tab when it was last saved more than
:data:`RENEW_AFTER` ago, so a connection nobody orders with does not quietly expire.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from .kroger_values import NotConnected

if TYPE_CHECKING:
    from bot.records.kroger_accounts import KrogerAccounts

    from .kroger_cart import CustomerTokens, KrogerCart

RENEW_AFTER = 30 * 86_400  # seconds since the token was last saved


class NoneSaved(NotConnected):
    """The person has no Kroger connection saved (never connected, or disconnected)."""


class NotSaved(Exception):
    """Kroger renewed the connection but SSM did not keep the new refresh token: the old one
    is spent, so the person connects again. Its text names SSM's error, never a token."""


def renewed(cart: KrogerCart, accounts: KrogerAccounts, team: str, user: str) -> CustomerTokens:
    """New tokens for ``user``, their new refresh token saved. Raises :class:`NotConnected`
    (:class:`NoneSaved`, or Kroger no longer takes it), ``KrogerDown`` / ``KrogerRefused``
    (Kroger), ``SecretsDown`` (SSM, reading: nothing spent) or :class:`NotSaved`."""
    from bot.records.workspace_secrets import SecretsDown

    token = accounts.read(team, user)
    if token is None:
        raise NoneSaved("the person has not connected a Kroger account")
    try:
        tokens = cart.refresh(token)
    except NotConnected:
        again = accounts.read(team, user)
        if again is None or again == token:
            raise
        token, tokens = again, cart.refresh(again)  # another renewal saved it meanwhile
    now = accounts.read(team, user)
    if now is None:  # disconnected (or the app removed) while Kroger answered: not brought back
        raise NoneSaved("the person disconnected their Kroger account meanwhile")
    if now != token:  # a newer one saved meanwhile (connected again): it stays
        return tokens
    try:
        accounts.save(team, user, tokens.refresh_token)
    except SecretsDown as exc:
        raise NotSaved(str(exc)) from exc
    return tokens
