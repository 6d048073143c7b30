"""The pure parts of connecting a Kroger account (issue 34, item 4): the signed state and its
derived PKCE verifier, the redirect URL setting, and where the Home tab's Connect link goes (the
confirmation page beside the redirect route)."""

from __future__ import annotations

import pytest

from bot.orders.kroger_connect import KrogerStates
from bot.steps.kroger_connect import connect_url
from tests.bot_kit import SECRET
from tests.kroger_connecting import REDIRECT, TEAM


def test_the_verifier_is_derived_from_the_state_within_rfc_7636() -> None:
    """RFC 7636 §4.1: 43 to 128 characters of ``[A-Za-z0-9-._~]``. The verifier is never
    stored: the redirect recomputes it from the state, under the same signing secret only."""
    from bot.orders.kroger_cart import VERIFIER

    states = KrogerStates(SECRET, clock=lambda: 1_800_000_000.0)
    state, verifier = states.issue(TEAM, "U0ALICE")
    assert VERIFIER.fullmatch(verifier) and len(verifier) == 43
    issued = states.read(state)
    assert issued is not None and (issued.team, issued.user) == (TEAM, "U0ALICE")
    assert issued.verifier == verifier and verifier not in repr(issued)
    assert states.issue(TEAM, "U0ALICE")[1] != verifier  # a new nonce each time
    assert KrogerStates("another-signing-secret", clock=states.clock).read(state) is None
    with pytest.raises(ValueError):
        states.issue(TEAM, "not a user")


@pytest.mark.parametrize(
    ("typed", "kept"),
    [
        (REDIRECT, REDIRECT),  # exactly as registered: no "/" added
        (
            "http://127.0.0.1:8080/kroger/oauth_redirect",
            "http://127.0.0.1:8080/kroger/oauth_redirect",
        ),
        ("http://example.com/kroger/oauth_redirect", None),
        ("https://example.com/a b", None),
        ("https://example.com/kroger/oauth_redirect#x", None),
    ],
)
def test_the_redirect_url_setting(typed: str, kept: str | None) -> None:
    from bot.settings import Settings, SettingsError

    env = {"SLACK_SIGNING_SECRET": SECRET, "CHECKPOINT_BUCKET": "bucket", "SLACK_BOT_TOKEN": "x"}
    if kept is None:
        with pytest.raises(SettingsError, match="KROGER_REDIRECT_URL"):
            Settings.from_env({**env, "KROGER_REDIRECT_URL": typed})
    else:
        assert Settings.from_env({**env, "KROGER_REDIRECT_URL": typed}).kroger_redirect_url == kept


@pytest.mark.parametrize(
    ("redirect", "link"),
    [
        (REDIRECT, "https://fakeapi123.execute-api.us-east-1.amazonaws.com/kroger/connect"),
        ("https://x.example/prod/kroger/oauth_redirect", "https://x.example/prod/kroger/connect"),
        ("http://127.0.0.1:8080/kroger/oauth_redirect", "http://127.0.0.1:8080/kroger/connect"),
        ("https://x.example/elsewhere/back", "https://x.example/kroger/connect"),
    ],
)
def test_the_connect_link_sits_beside_the_redirect_route(redirect: str, link: str) -> None:
    """The same HTTP API (and stage) as the redirect URL; the state alone in the query."""
    state, _ = KrogerStates(SECRET, clock=lambda: 1_800_000_000.0).issue(TEAM, "U0ALICE")
    assert connect_url(redirect, state) == f"{link}?state={state}"
