"""A Kroger connection is renewed before it can expire (issue 34, item 4: "the refresh token ...
renewed before it expires"), through the real handler against the stand-in Kroger and moto's SSM.

Facts relied on: Kroger spends a refresh token when it is used ("invalidated once the client
has used it to get a new access and refresh token", Kroger's refresh token tutorial); how long
an unused one lives is not published (one public client assumes six months). So each order
renews it (``tests/test_kroger_orders.py``), and the person's Home tab renews one last saved over
30 days ago (``bot.orders.kroger_tokens.RENEW_AFTER``); two renewals at once (an order and a
Home tab) do not end the connection: the one refused reads the token the other saved."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from bot.orders.kroger import KrogerConfig
from bot.orders.kroger_cart import KrogerCart
from bot.orders.kroger_tokens import RENEW_AFTER, renewed
from bot.records.kroger_accounts import KrogerAccounts
from bot.sandbox.kroger_api import FakeKroger
from bot.slack.kroger_section import ENDED
from tests.bot_kit import World
from tests.kroger_connecting import (
    TEAM,
    accounts,
    at_kroger,
    back,
    booted_with_kroger,
    connect_link,
    kroger_section,
)

MONTH = RENEW_AFTER + 86_400


@pytest.fixture
def kroger(world: World) -> Iterator[FakeKroger]:
    with booted_with_kroger(world) as fake:
        yield fake


def connected(world: World, kroger: FakeKroger, user: str = "U0ALICE") -> str:
    assert back(world, at_kroger(kroger, connect_link(world, user)))["statusCode"] == 200
    token = accounts().read(TEAM, user)
    assert token is not None
    return token


def test_a_connection_over_a_month_old_is_renewed_as_the_home_tab_is_drawn(
    world: World, kroger: FakeKroger
) -> None:
    first = connected(world, kroger)
    grants = kroger.tokens_issued, len(kroger.requests)
    texts, _ = kroger_section(world.open_home("U0ALICE"))  # a fresh one: nothing renewed
    assert accounts().read(TEAM, "U0ALICE") == first and len(kroger.requests) == grants[1]
    world.clock.ahead = MONTH
    texts, _ = kroger_section(world.open_home("U0ALICE"))
    renewed_token = accounts().read(TEAM, "U0ALICE")
    assert renewed_token is not None and renewed_token != first  # Kroger's new one, kept
    assert any(t.startswith("Your Kroger account is connected (as of") for t in texts)


def test_a_connection_kroger_refuses_at_renewal_is_forgotten_and_said(
    world: World, kroger: FakeKroger
) -> None:
    """The person removed the app at Kroger: the refresh is a 400 invalid_grant."""
    connected(world, kroger)
    kroger.customers.revoke(kroger.customers.signed_in)
    world.clock.ahead = MONTH
    texts, buttons = kroger_section(world.open_home("U0ALICE"))
    assert f"{ENDED}\nYour Kroger account is not connected." in texts
    assert accounts().read(TEAM, "U0ALICE") is None and "home_kroger_connect" in buttons


def test_kroger_down_at_renewal_keeps_the_connection(world: World, kroger: FakeKroger) -> None:
    first = connected(world, kroger)
    world.clock.ahead = MONTH
    kroger.stop()  # Kroger unreachable: the connection refused
    texts, _ = kroger_section(world.open_home("U0ALICE"))
    assert any(t.startswith("Your Kroger account is connected (as of") for t in texts)
    assert accounts().read(TEAM, "U0ALICE") == first


def test_a_renewal_refused_because_another_just_renewed_uses_the_token_it_saved(
    world: World, kroger: FakeKroger
) -> None:
    """An order and the Home tab renew at once: both read token A; the order's renewal spends
    it and saves B; the Home tab's refresh of A is refused, so it reads B and renews with it."""
    first = connected(world, kroger)
    config = KrogerConfig(kroger.client_id, kroger.client_secret, kroger.url)
    cart, people = KrogerCart(config), accounts()

    class ReadBeforeTheOther(KrogerAccounts):
        """Whose first read is the token before the other renewal saved its own."""

        reads = 0

        def read(self, team: str, user: str) -> str | None:
            self.reads += 1
            return first if self.reads == 1 else super().read(team, user)

    renewed(cart, people, TEAM, "U0ALICE")  # the order's: A spent, B saved
    late = ReadBeforeTheOther(people.ssm, people.path)
    tokens = renewed(cart, late, TEAM, "U0ALICE")  # refused A, read B, renewed with it
    assert late.reads == 3 and people.read(TEAM, "U0ALICE") == tokens.refresh_token


def test_a_disconnect_while_kroger_renews_is_not_undone(world: World, kroger: FakeKroger) -> None:
    """The person presses Disconnect while an order's renewal waits for Kroger: the renewed
    token is not saved, so the connection does not come back (cold review's finding)."""
    from bot.orders.kroger_tokens import NoneSaved

    connected(world, kroger)
    config = KrogerConfig(kroger.client_id, kroger.client_secret, kroger.url)

    class DisconnectedDuringTheRefresh(KrogerAccounts):
        reads = 0

        def read(self, team: str, user: str) -> str | None:
            found = super().read(team, user)
            self.reads += 1
            if self.reads == 1:
                self.forget_person(team, user)  # Disconnect, pressed meanwhile
            return found

    people = accounts()
    with pytest.raises(NoneSaved):
        renewed(
            KrogerCart(config),
            DisconnectedDuringTheRefresh(people.ssm, people.path),
            TEAM,
            "U0ALICE",
        )
    assert people.read(TEAM, "U0ALICE") is None
