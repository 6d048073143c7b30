"""A person connects their Kroger account from the Home tab, and disconnects it (issue 34, item
4), through the real handler: the Home tab's Connect link (``app_home_opened``), the stand-in
Kroger's authorize page (``bot.sandbox.kroger_authorize``), and the browser sent back to
``GET /kroger/oauth_redirect`` as an API Gateway HTTP API (payload 2.0) event; moto's S3, SSM
and KMS behind it.

What the flow relies on (each a fact the stand-in is held to, in its docstring): Kroger sends the
browser back with ``code`` and ``state``, or ``error=access_denied`` on Cancel (RFC 6749
§4.1.2 and §4.1.2.1); a code works once, with the ``redirect_uri`` it was issued for and the
verifier whose S256 challenge it was issued with (RFC 7636 §4.5, §4.6: otherwise
``invalid_grant``); a PKCE verifier is 43 to 128 characters of ``[A-Za-z0-9-._~]`` (RFC 7636
§4.1), which the bot's derived one (43) is; the redirect URL must be one registered with the
app, character for character.
"""

from __future__ import annotations

import logging
from collections.abc import Iterator
from typing import Any
from urllib.parse import parse_qs, urlsplit

import pytest

from bot.orders.kroger import KrogerConfig
from bot.orders.kroger_cart import KrogerCart
from bot.orders.kroger_connect import KrogerStates
from bot.sandbox.kroger_api import FakeKroger
from bot.sandbox.slack_events import home_action
from bot.sandbox.slack_oauth import browser_get
from bot.slack.kroger_section import KROGER_CONNECT, KROGER_DISCONNECT
from bot.steps.kroger_connect import CONNECTED, REDIRECT_PATH
from tests.bot_kit import SECRET, World
from tests.kroger_connecting import (
    REDIRECT,
    TEAM,
    accounts,
    at_kroger,
    back,
    booted_with_kroger,
    connect_link,
    forged,
    home_link,
    kroger_section,
    markers,
    page_text,
)


@pytest.fixture
def kroger(world: World) -> Iterator[FakeKroger]:
    with booted_with_kroger(world) as fake:
        yield fake


def test_connecting_saves_the_token_and_the_home_tab_shows_it(
    world: World, kroger: FakeKroger, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.DEBUG)
    link = connect_link(world)
    asked = {k: v[-1] for k, v in parse_qs(urlsplit(link).query).items()}
    assert link.startswith(kroger.url.rstrip("/") + "/v1/connect/oauth2/authorize?")
    assert asked["redirect_uri"] == REDIRECT and asked["scope"] == "cart.basic:write"
    assert asked["code_challenge_method"] == "S256" and len(asked["code_challenge"]) == 43
    query = at_kroger(kroger, link)
    done = back(world, query)
    assert done["statusCode"] == 200, done
    assert CONNECTED in page_text(done)
    assert done["headers"]["Content-Type"] == "text/html; charset=utf-8"
    assert "default-src 'none'" in done["headers"]["Content-Security-Policy"]
    assert "<script" not in done["body"]
    token = accounts().read(TEAM, "U0ALICE")
    assert token is not None
    # The token saved is the person's: Kroger renews it (and only a real one renews).
    cart = KrogerCart(KrogerConfig(kroger.client_id, kroger.client_secret, kroger.url))
    assert cart.refresh(token).refresh_token != token
    # Alice's Home tab was published again by the redirect itself, without her opening it.
    texts, buttons = kroger_section(world.slack.home("U0ALICE"))
    assert any(t.startswith("Your Kroger account is connected (as of <!date^") for t in texts)
    assert set(buttons) == {KROGER_DISCONNECT}
    # Bob, who did not connect, is not.
    assert "Your Kroger account is not connected." in kroger_section(world.open_home("U0BOB"))[0]
    logged = caplog.text + " ".join(str(r.args) for r in caplog.records)
    for secret in (query["code"], token, KrogerStates(SECRET).verifier_of("x")):
        assert secret not in logged


def test_the_same_state_twice_is_refused_and_changes_nothing(
    world: World, kroger: FakeKroger
) -> None:
    link = connect_link(world)
    first = at_kroger(kroger, link)
    assert back(world, first)["statusCode"] == 200
    token = accounts().read(TEAM, "U0ALICE")
    # The same link again: Kroger hands back a new code with the same state.
    again = at_kroger(kroger, link)
    assert again["state"] == first["state"] and again["code"] != first["code"]
    refused = back(world, again)
    assert refused["statusCode"] == 400 and "already used" in page_text(refused)
    assert back(world, first)["statusCode"] == 400  # and the first redirect replayed
    assert accounts().read(TEAM, "U0ALICE") == token
    assert len(markers(world)) == 1


def someone_else(state: str) -> str:
    return state.replace(".U0ALICE.", ".U0BOB.")


@pytest.mark.parametrize(
    "spoil",
    [forged, someone_else, lambda s: "not-a-state", lambda s: s + "x", lambda s: ""],
    ids=["forged MAC", "another user", "malformed", "too long", "empty"],
)
def test_a_state_not_ours_writes_nothing_and_asks_s3_nothing(
    world: World, kroger: FakeKroger, spoil: Any
) -> None:
    query = at_kroger(kroger, connect_link(world))
    calls: list[str] = []
    world.s3.meta.events.register("before-call.s3", lambda **kw: calls.append(str(kw)))
    refused = back(world, {**query, "state": spoil(query["state"])})
    assert refused["statusCode"] == 400, refused
    assert "expired or is not ours" in page_text(refused)
    assert calls == []
    assert markers(world) == [] and accounts().read(TEAM, "U0ALICE") is None
    # Nothing was spent: the real state still connects.
    assert back(world, query)["statusCode"] == 200


def test_an_expired_state_is_refused(world: World, kroger: FakeKroger) -> None:
    """A state lives an hour; Kroger's code is still good (the stand-in's ten minutes are
    played on its own clock, moved here only for the bot's)."""
    link = connect_link(world)
    query = at_kroger(kroger, link)
    issued = int(query["state"].split(".")[2])
    world.clock.reach(issued + 3600)
    refused = back(world, query)
    assert refused["statusCode"] == 400 and "expired" in page_text(refused)
    assert markers(world) == [] and accounts().read(TEAM, "U0ALICE") is None


def test_a_missing_state_or_code_is_refused(world: World, kroger: FakeKroger) -> None:
    query = at_kroger(kroger, connect_link(world))
    for partial in ({"code": query["code"]}, {"state": query["state"]}, {}):
        refused = back(world, partial)
        assert refused["statusCode"] == 400, partial
    assert markers(world) == [] and accounts().read(TEAM, "U0ALICE") is None


def test_cancel_at_kroger_changes_nothing(world: World, kroger: FakeKroger) -> None:
    query = at_kroger(kroger, connect_link(world), choice="cancel")
    assert query["error"] == "access_denied"
    cancelled = back(world, query)
    assert cancelled["statusCode"] == 200 and "cancelled" in page_text(cancelled)
    assert markers(world) == [] and accounts().read(TEAM, "U0ALICE") is None
    assert "not connected" in " ".join(kroger_section(world.slack.home("U0ALICE"))[0])


def test_a_code_kroger_refuses_saves_nothing(world: World, kroger: FakeKroger) -> None:
    """A code Kroger does not know (or a used one) is 400 ``invalid_grant``: the state is
    spent, nothing is saved, and the page says to connect again."""
    query = at_kroger(kroger, connect_link(world))
    refused = back(world, {**query, "code": "not-a-code-Kroger-gave"})
    assert refused["statusCode"] == 400 and "did not accept" in page_text(refused)
    assert accounts().read(TEAM, "U0ALICE") is None
    assert len(markers(world)) == 1


def test_kroger_down_saves_nothing(world: World, kroger: FakeKroger) -> None:
    query = at_kroger(kroger, connect_link(world))
    kroger.stop()  # the token endpoint refuses connections
    down = back(world, query)
    assert down["statusCode"] == 502 and "did not answer" in page_text(down)
    assert accounts().read(TEAM, "U0ALICE") is None


def test_ssm_down_while_saving_says_so(
    world: World, kroger: FakeKroger, monkeypatch: pytest.MonkeyPatch
) -> None:
    """SSM refusing the ``PutParameter`` (a throttle, as SSM answers one): the page says the
    connection could not be saved, and the Home tab still offers Connect."""
    from moto.core.exceptions import JsonRESTError
    from moto.ssm.models import SimpleSystemManagerBackend

    query = at_kroger(kroger, connect_link(world))

    def throttled(self: Any, *args: Any, **kwargs: Any) -> Any:
        raise JsonRESTError("ThrottlingException", "Rate exceeded")

    with monkeypatch.context() as ssm_down:
        ssm_down.setattr(SimpleSystemManagerBackend, "put_parameter", throttled)
        failed = back(world, query)
    assert failed["statusCode"] == 503 and "could not be saved" in page_text(failed)
    assert accounts().read(TEAM, "U0ALICE") is None
    texts, buttons = kroger_section(world.open_home())
    assert "Your Kroger account is not connected." in texts and KROGER_CONNECT in buttons


def test_the_home_tab_says_it_cannot_tell_when_ssm_is_down(
    world: World, kroger: FakeKroger, monkeypatch: pytest.MonkeyPatch
) -> None:
    from moto.core.exceptions import JsonRESTError
    from moto.ssm.models import SimpleSystemManagerBackend

    read = SimpleSystemManagerBackend.get_parameter

    def throttled(self: Any, name: str, *args: Any, **kwargs: Any) -> Any:
        """SSM throttling the people's tokens' reads (the settings' own still answer)."""
        if "/kroger/" in name:
            raise JsonRESTError("ThrottlingException", "Rate exceeded")
        return read(self, name, *args, **kwargs)

    monkeypatch.setattr(SimpleSystemManagerBackend, "get_parameter", throttled)
    texts, buttons = kroger_section(world.open_home())
    assert any("can't tell just now" in t for t in texts)
    assert buttons == {} and not any("not connected" in t for t in texts)


def test_disconnect_forgets_the_token(world: World, kroger: FakeKroger) -> None:
    assert back(world, at_kroger(kroger, connect_link(world)))["statusCode"] == 200
    assert accounts().read(TEAM, "U0ALICE") is not None
    view = world.home_click(KROGER_DISCONNECT, "disconnect")
    assert accounts().read(TEAM, "U0ALICE") is None
    texts, buttons = kroger_section(view)
    assert "Your Kroger account is not connected." in texts and KROGER_CONNECT in buttons
    assert view is not None and "is disconnected" in str(view["blocks"][1])


def test_the_connect_link_click_is_acked_and_does_nothing(world: World, kroger: FakeKroger) -> None:
    """Slack sends a ``block_actions`` for a link button too: acked, nothing run."""
    link = home_link(world)
    event = home_action(SECRET, action_id=KROGER_CONNECT, value="", user_id="U0ALICE")
    assert world.send(event)["statusCode"] == 200
    assert world.lam.take() == []
    assert kroger_section(world.slack.home("U0ALICE"))[1][KROGER_CONNECT]["url"] == link


def test_a_workspace_without_the_app_connects_nothing(world: World, kroger: FakeKroger) -> None:
    """With many workspaces, a state (ours) for a workspace that has no installation (removed
    since the link was drawn) is refused before anything is spent."""
    from bot.sandbox.slack_oauth import add_to_slack

    client_id = "1111.2222"
    world.slack.oauth.register_app(client_id, "not-a-real-client-secret")
    world.boot(
        SLACK_CLIENT_ID=client_id,
        SLACK_CLIENT_SECRET="not-a-real-client-secret",
        SLACK_BOT_TOKEN="",
    )
    add_to_slack(world.send, world.slack.oauth, client_id, TEAM)
    state, verifier = KrogerStates(SECRET, clock=world.clock).issue("T0GONE", "U0ALICE")
    cart = KrogerCart(KrogerConfig(kroger.client_id, kroger.client_secret, kroger.url))
    query = at_kroger(kroger, cart.authorize_url(REDIRECT, state, verifier))
    refused = back(world, query)
    assert refused["statusCode"] == 404 and "not installed" in page_text(refused)
    assert markers(world) == [] and accounts().read("T0GONE", "U0ALICE") is None


def test_without_a_kroger_app_there_is_no_page_and_no_section(world: World) -> None:
    refused = back(world, {"code": "c", "state": "s"})
    assert refused["statusCode"] == 404
    assert kroger_section(world.open_home()) == ([], {})


def test_only_get(world: World, kroger: FakeKroger) -> None:
    event = browser_get(REDIRECT_PATH, "code=c&state=s")
    event["requestContext"]["http"]["method"] = "POST"
    assert world.send(event)["statusCode"] == 405


def test_kroger_refusing_the_app_saves_nothing(world: World, kroger: FakeKroger) -> None:
    """The token endpoint refuses the app's client secret (401 ``invalid_client``, RFC 6749
    §5.2): Kroger refused, said as such; nothing saved."""
    query = at_kroger(kroger, connect_link(world))
    world.boot(KROGER_CLIENT_SECRET="a-secret-Kroger-does-not-know")
    refused = back(world, query)
    assert refused["statusCode"] == 400 and "did not accept" in page_text(refused)
    assert accounts().read(TEAM, "U0ALICE") is None


def test_disconnect_with_ssm_down_says_so_and_keeps_the_token(
    world: World, kroger: FakeKroger, monkeypatch: pytest.MonkeyPatch
) -> None:
    from moto.core.exceptions import JsonRESTError
    from moto.ssm.models import SimpleSystemManagerBackend

    assert back(world, at_kroger(kroger, connect_link(world)))["statusCode"] == 200

    def throttled(self: Any, *args: Any, **kwargs: Any) -> Any:
        raise JsonRESTError("ThrottlingException", "Rate exceeded")

    with monkeypatch.context() as ssm_down:
        ssm_down.setattr(SimpleSystemManagerBackend, "delete_parameters", throttled)
        view = world.home_click(KROGER_DISCONNECT, "disconnect")
    assert view is not None and "couldn't disconnect" in str(view["blocks"][1])
    assert accounts().read(TEAM, "U0ALICE") is not None
    assert any(
        t.startswith("Your Kroger account is connected (as of") for t in kroger_section(view)[0]
    )
