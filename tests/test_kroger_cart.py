"""A person's Kroger cart: the bot's side (``bot.orders.kroger_cart``) against the local Kroger
API's customer side (``bot.sandbox.kroger_authorize``) on loopback. The authorize page is
driven as a browser drives it (the page's GET, its Allow or Cancel, the redirect back), the
tokens are exchanged and refreshed by the client, and the cart is read back from the stand-in
(``cart_of``), which the bot itself can never do.

Facts relied on (sources in the stand-in's docstring): Kroger's authorization-code flow with
PKCE (S256) at ``/v1/connect/oauth2/authorize`` and ``…/token``; a refresh token "invalidated
once the client has used it", its reuse a 400 (Kroger's refresh token tutorial); ``PUT
/v1/cart/add`` with ``{"items": [{"upc", "quantity", "modality"}]}`` and a customer's token,
and no idempotency key. Unconfirmed, and so chosen here: 204 for an add, 403 for an app's
token on the cart, 400 for a malformed UPC, ten minutes for a code."""

from __future__ import annotations

import base64
import http.client
import json
import re
import socket
from collections.abc import Iterator
from typing import Any
from urllib.parse import parse_qs, urlencode, urlsplit

import pytest

from bot.orders.kroger import KrogerClient, KrogerConfig
from bot.orders.kroger_cart import (
    CartItem,
    CustomerTokens,
    KrogerCart,
    challenge_of,
    new_verifier,
)
from bot.orders.kroger_values import (
    CartOutcomeUnknown,
    KrogerDown,
    KrogerRefused,
    NotConnected,
    TokenRefused,
)
from bot.sandbox.clock import PlayedClock
from bot.sandbox.kroger_api import FakeKroger

REDIRECT = "https://fakeapi123.execute-api.us-east-1.amazonaws.com/kroger/connected"
MILK = "0001111041700"
EGGS = "0001111060903"


@pytest.fixture
def clock() -> PlayedClock:
    return PlayedClock()


@pytest.fixture
def kroger(clock: PlayedClock) -> Iterator[FakeKroger]:
    with FakeKroger(clock=clock) as running:
        running.customers.register(running.client_id, REDIRECT)
        yield running


@pytest.fixture
def cart(kroger: FakeKroger, clock: PlayedClock) -> KrogerCart:
    return KrogerCart(KrogerConfig(kroger.client_id, kroger.client_secret, kroger.url), clock=clock)


def browser_get(fake: FakeKroger, url: str) -> tuple[int, str, dict[str, str]]:
    """A browser's GET of ``url`` on the stand-in: (status, page, headers)."""
    parts = urlsplit(url)
    connection = http.client.HTTPConnection(fake.url.removeprefix("http://"), timeout=5)
    try:
        target = parts.path + (f"?{parts.query}" if parts.query else "")
        connection.request("GET", target, headers={"Accept": "text/html"})
        answer = connection.getresponse()
        headers = {k.lower(): v for k, v in answer.getheaders()}
        return answer.status, answer.read().decode(), headers
    finally:
        connection.close()


def click(fake: FakeKroger, url: str, choice: str = "allow") -> dict[str, str]:
    """The person opens ``url``, signs in and presses Allow (or Cancel): the query Kroger
    redirects back with (``code`` and ``state``, or ``error``)."""
    status, page, _ = browser_get(fake, url)
    assert status == 200, page
    nonce = re.search(r'name="request" value="([^"]+)"', page)
    assert nonce is not None and f'value="{choice}"' in page
    decision = "/v1/connect/oauth2/authorize/decision?" + urlencode(
        {"request": nonce[1], "choice": choice}
    )
    status, _, headers = browser_get(fake, decision)
    assert status == 302
    location = headers["location"]
    assert location.startswith(REDIRECT + "?")
    return {k: v[-1] for k, v in parse_qs(urlsplit(location).query).items()}


def connect(fake: FakeKroger, cart: KrogerCart, customer: str = "alice") -> CustomerTokens:
    fake.customers.signed_in = customer
    verifier = new_verifier()
    back = click(fake, cart.authorize_url(REDIRECT, "state-1", verifier))
    return cart.exchange_code(back["code"], verifier, REDIRECT)


def put_raw(fake: FakeKroger, token: str, body: Any) -> int:
    connection = http.client.HTTPConnection(fake.url.removeprefix("http://"), timeout=5)
    try:
        data = json.dumps(body).encode()
        headers = {"Authorization": f"Bearer {token}", "Content-Type": "application/json"}
        connection.request("PUT", "/v1/cart/add", body=data, headers=headers)
        answer = connection.getresponse()
        answer.read()
        return answer.status
    finally:
        connection.close()


def test_connecting_an_account_gives_tokens_that_add_to_its_cart(
    kroger: FakeKroger, cart: KrogerCart, clock: PlayedClock
) -> None:
    """Allow on Kroger's page redirects back with a code and the same ``state``; the code and
    the verifier give an access token, a refresh token and ``expires_in`` (1800 s); a cart add
    with that token is 204 and the stand-in's cart of that customer holds the items."""
    verifier = new_verifier()
    url = cart.authorize_url(REDIRECT, "state-xyz", verifier)
    query = parse_qs(urlsplit(url).query)
    assert query["scope"] == ["cart.basic:write"] and query["code_challenge_method"] == ["S256"]
    assert query["code_challenge"] == [challenge_of(verifier)]
    assert verifier not in url
    kroger.customers.signed_in = "alice"
    back = click(kroger, url)
    assert back["state"] == "state-xyz"
    tokens = cart.exchange_code(back["code"], verifier, REDIRECT)
    assert tokens.expires_at == pytest.approx(clock() + 1800, abs=5)
    cart.add_to_cart(tokens.access_token, [CartItem(MILK, 2), CartItem(EGGS, 1)], "PICKUP")
    assert kroger.customers.cart_of("alice") == [
        {"upc": MILK, "quantity": 2, "modality": "PICKUP"},
        {"upc": EGGS, "quantity": 1, "modality": "PICKUP"},
    ]
    assert kroger.customers.cart_of("bob") == []


def test_cancel_redirects_back_with_access_denied(kroger: FakeKroger, cart: KrogerCart) -> None:
    back = click(kroger, cart.authorize_url(REDIRECT, "s-2", new_verifier()), "cancel")
    assert back == {"error": "access_denied", "state": "s-2"}


def test_a_wrong_verifier_a_reused_code_and_another_redirect_are_refused(
    kroger: FakeKroger, cart: KrogerCart
) -> None:
    """PKCE: the code is only good with the verifier whose challenge the page was given; a
    code works once, even after a failed try (so a leaked code is worth one attempt); and the
    ``redirect_uri`` must be the one the code was issued for."""
    verifier = new_verifier()
    code = click(kroger, cart.authorize_url(REDIRECT, "s", verifier))["code"]
    with pytest.raises(NotConnected):
        cart.exchange_code(code, new_verifier(), REDIRECT)
    with pytest.raises(NotConnected):
        cart.exchange_code(code, verifier, REDIRECT)  # spent by the wrong try

    code = click(kroger, cart.authorize_url(REDIRECT, "s", verifier))["code"]
    assert cart.exchange_code(code, verifier, REDIRECT).refresh_token
    with pytest.raises(NotConnected):
        cart.exchange_code(code, verifier, REDIRECT)

    code = click(kroger, cart.authorize_url(REDIRECT, "s", verifier))["code"]
    with pytest.raises(NotConnected):
        cart.exchange_code(code, verifier, REDIRECT + "/other")


def test_the_page_refuses_an_unknown_client_a_foreign_redirect_and_plain_pkce(
    kroger: FakeKroger, cart: KrogerCart
) -> None:
    """An unknown client or an unregistered redirect URL: an error page and no redirect (a
    code must never go to a URL the app did not register). A challenge without ``S256``:
    redirected back with ``invalid_request``."""
    verifier = new_verifier()
    other = KrogerCart(KrogerConfig("someone-else", "x", kroger.url))
    status, page, headers = browser_get(kroger, other.authorize_url(REDIRECT, "s", verifier))
    assert status == 400 and "location" not in headers and "Unknown client" in page
    evil = cart.authorize_url("https://evil.example/steal", "s", verifier)
    status, page, headers = browser_get(kroger, evil)
    assert status == 400 and "location" not in headers and "not registered" in page
    plain = cart.authorize_url(REDIRECT, "s", verifier).replace("S256", "plain")
    status, _, headers = browser_get(kroger, plain)
    assert status == 302 and "error=invalid_request" in headers["location"]
    missing = re.sub(
        r"&code_challenge_method=S256", "", cart.authorize_url(REDIRECT, "s", verifier)
    )
    status, _, headers = browser_get(kroger, missing)
    assert status == 302 and "error=invalid_request" in headers["location"]


def test_a_refresh_gives_new_tokens_and_spends_the_old_refresh_token(
    kroger: FakeKroger, cart: KrogerCart, clock: PlayedClock
) -> None:
    """Kroger: "The refresh token is invalidated once the client has used it to get a new
    access and refresh token. Any further requests using the refresh token will return a 400".
    After the access token's 30 minutes a cart add is 401 (:class:`TokenRefused`), and the
    refreshed token adds."""
    first = connect(kroger, cart)
    clock.reach(clock() + 1801)
    with pytest.raises(TokenRefused):
        cart.add_to_cart(first.access_token, [CartItem(MILK, 1)])
    assert kroger.customers.cart_of("alice") == []
    second = cart.refresh(first.refresh_token)
    assert second.refresh_token != first.refresh_token
    assert second.access_token != first.access_token
    with pytest.raises(NotConnected):
        cart.refresh(first.refresh_token)
    cart.add_to_cart(second.access_token, [CartItem(MILK, 1)])
    assert kroger.customers.cart_of("alice") == [{"upc": MILK, "quantity": 1, "modality": "PICKUP"}]
    kroger.customers.revoke("alice")
    with pytest.raises(NotConnected):
        cart.refresh(second.refresh_token)


def test_an_app_token_may_not_add_to_a_cart(kroger: FakeKroger, clock: PlayedClock) -> None:
    """Cart calls need a customer's token: the app's client-credentials token is refused (403
    here; Kroger's status unconfirmed) and nothing is added."""
    config = KrogerConfig(kroger.client_id, kroger.client_secret, kroger.url)
    app_token = KrogerClient(config, clock=clock).token()
    assert put_raw(kroger, app_token, {"items": [{"upc": MILK, "quantity": 1}]}) == 403
    with pytest.raises(NotConnected):
        KrogerCart(config, clock=clock).add_to_cart(app_token, [CartItem(MILK, 1)])
    assert all(not kroger.customers.cart_of(c) for c in ("alice", "customer-1"))


def test_a_malformed_item_is_refused_by_the_client_and_by_the_stand_in(
    kroger: FakeKroger, cart: KrogerCart
) -> None:
    """The client checks a UPC of 13 digits, a quantity of 1 or more and the modality before
    calling (no request goes out); the stand-in refuses the same 400 when another client sends
    them, and adds nothing."""
    tokens = connect(kroger, cart)
    before = len(kroger.requests)
    for items, modality in (
        ([CartItem("11110417", 1)], "PICKUP"),
        ([CartItem(MILK, 0)], "PICKUP"),
        ([CartItem(MILK, 1)], "CURBSIDE"),
        ([], "PICKUP"),
    ):
        with pytest.raises(KrogerRefused):
            cart.add_to_cart(tokens.access_token, items, modality)
    assert len(kroger.requests) == before
    for item in (
        {"upc": "11110417", "quantity": 1, "modality": "PICKUP"},
        {"upc": MILK, "quantity": 0, "modality": "PICKUP"},
        {"upc": MILK, "quantity": 1, "modality": "CURBSIDE"},
    ):
        assert put_raw(kroger, tokens.access_token, {"items": [item]}) == 400
    assert kroger.customers.cart_of("alice") == []


def test_two_adds_add_twice(kroger: FakeKroger, cart: KrogerCart) -> None:
    """No idempotency key: the same add sent twice puts the items in the cart twice."""
    tokens = connect(kroger, cart)
    cart.add_to_cart(tokens.access_token, [CartItem(MILK, 2)], "DELIVERY")
    cart.add_to_cart(tokens.access_token, [CartItem(MILK, 2)], "DELIVERY")
    assert [i["quantity"] for i in kroger.customers.cart_of("alice")] == [2, 2]


def test_a_dropped_answer_is_an_unknown_outcome_while_the_cart_holds_the_items(
    kroger: FakeKroger, cart: KrogerCart
) -> None:
    """The stand-in adds, then closes the connection without an answer: the client cannot
    know, says :class:`CartOutcomeUnknown` (never :class:`KrogerDown`, which a caller may
    retry), and the cart already holds the items. This is why the bot must never add again
    without the person choosing to."""
    tokens = connect(kroger, cart)
    kroger.customers.drop_next_add()
    with pytest.raises(CartOutcomeUnknown) as raised:
        cart.add_to_cart(tokens.access_token, [CartItem(MILK, 2)])
    assert not isinstance(raised.value, KrogerDown)
    assert "may already be in the cart" in str(raised.value)
    assert kroger.customers.cart_of("alice") == [{"upc": MILK, "quantity": 2, "modality": "PICKUP"}]


def test_a_5xx_is_unknown_and_a_refused_connection_is_down(
    kroger: FakeKroger, cart: KrogerCart
) -> None:
    """A 5xx after the add was sent may or may not have added (Kroger does not say): unknown.
    A connection that was never made sent nothing: :class:`KrogerDown`."""
    tokens = connect(kroger, cart)
    kroger.customers.fail_next_add(502)
    with pytest.raises(CartOutcomeUnknown):
        cart.add_to_cart(tokens.access_token, [CartItem(MILK, 1)])
    with socket.socket() as unused:
        unused.bind(("127.0.0.1", 0))
        port = unused.getsockname()[1]
    nobody = KrogerCart(KrogerConfig(kroger.client_id, "x", f"http://127.0.0.1:{port}"))
    with pytest.raises(KrogerDown):
        nobody.add_to_cart(tokens.access_token, [CartItem(MILK, 1)])
    assert kroger.customers.cart_of("alice") == []  # this 502 added nothing; the bot can't know


def test_no_token_or_secret_in_a_repr_or_an_error(kroger: FakeKroger, cart: KrogerCart) -> None:
    tokens = connect(kroger, cart)
    secrets_ = (tokens.access_token, tokens.refresh_token, kroger.client_secret)
    shown = [repr(tokens), repr(cart.config)]
    basic = base64.b64encode(f"{kroger.client_id}:{kroger.client_secret}".encode()).decode()
    for attempt in (
        lambda: cart.refresh("not-a-refresh-token"),
        lambda: cart.add_to_cart(tokens.access_token + "x", [CartItem(MILK, 1)]),
        lambda: cart.exchange_code(tokens.access_token, "v" * 43, REDIRECT),
    ):
        with pytest.raises(KrogerRefused) as raised:
            attempt()
        shown.append(str(raised.value) + repr(raised.value))
    kroger.customers.drop_next_add()
    with pytest.raises(CartOutcomeUnknown) as unknown:
        cart.add_to_cart(tokens.access_token, [CartItem(MILK, 1)])
    shown.append(str(unknown.value) + repr(unknown.value))
    for text in shown:
        assert not any(s in text for s in (*secrets_, basic)), text


def test_a_code_lasts_ten_minutes_and_a_sign_in_page_is_used_once(
    kroger: FakeKroger, cart: KrogerCart, clock: PlayedClock
) -> None:
    """A code older than ten minutes is refused (RFC 6749's most; Kroger's own life is
    unconfirmed); pressing Allow again on a page already answered gives no second code."""
    verifier = new_verifier()
    status, page, _ = browser_get(kroger, cart.authorize_url(REDIRECT, "s", verifier))
    nonce = re.search(r'name="request" value="([^"]+)"', page)
    assert status == 200 and nonce is not None
    decision = f"/v1/connect/oauth2/authorize/decision?request={nonce[1]}&choice=allow"
    status, _, headers = browser_get(kroger, decision)
    code = parse_qs(urlsplit(headers["location"]).query)["code"][0]
    status, page, headers = browser_get(kroger, decision)
    assert status == 400 and "location" not in headers
    clock.reach(clock() + 601)
    with pytest.raises(NotConnected):
        cart.exchange_code(code, verifier, REDIRECT)


def test_each_person_adds_to_their_own_cart(kroger: FakeKroger, cart: KrogerCart) -> None:
    alice, bob = connect(kroger, cart, "alice"), connect(kroger, cart, "bob")
    cart.add_to_cart(bob.access_token, [CartItem(EGGS, 3)])
    cart.add_to_cart(alice.access_token, [CartItem(MILK, 1)])
    assert kroger.customers.cart_of("bob") == [{"upc": EGGS, "quantity": 3, "modality": "PICKUP"}]
    assert [i["upc"] for i in kroger.customers.cart_of("alice")] == [MILK]


def test_an_add_answered_too_late_is_an_unknown_outcome(
    kroger: FakeKroger, clock: PlayedClock
) -> None:
    """The add is made but the answer comes after the client stopped waiting (a Lambda near
    its end, a slow Kroger): as unknown as a dropped connection, and the items are in the cart."""
    config = KrogerConfig(kroger.client_id, kroger.client_secret, kroger.url)
    impatient = KrogerCart(config, clock=clock, timeout=0.2)
    tokens = connect(kroger, impatient)
    kroger.customers.drop_next_add(after=1.0)
    with pytest.raises(CartOutcomeUnknown):
        impatient.add_to_cart(tokens.access_token, [CartItem(EGGS, 1)])
    assert kroger.customers.cart_of("alice") == [{"upc": EGGS, "quantity": 1, "modality": "PICKUP"}]
