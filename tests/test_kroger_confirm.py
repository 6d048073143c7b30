"""The Connect link's confirmation page (issue 34, item 4), through the real handler with API
Gateway HTTP API (payload 2.0) events: the Home tab's Connect goes to the bot's own
``GET /kroger/connect?state=…``, which names whose connection it is before Kroger's sign-in.

Why: the link is its Slack user's. Bob could send his to anyone; whoever signs in at Kroger
and allows would link *their* Kroger account to Bob, and Bob's household's approved baskets
would go to their cart. Kroger's consent page names only the app.

What the page relies on from Slack (docs.slack.dev, reference/methods/users.info and
auth.test): ``users.info`` (scope ``users:read``, in the manifest) returns a user object with
``real_name`` and a ``profile`` whose ``real_name`` and ``display_name`` "may not be present at
all, may be null or may contain the empty string" (so each is tried in turn, then the ID), and
``user_not_found`` for an ID it does not know; ``auth.test`` needs no scope and gives the
token's workspace name as ``team``. A refused call is HTTP 200 with ``ok: false`` and an
``error`` code.
"""

from __future__ import annotations

import base64
import hashlib
import logging
import re
from collections.abc import Iterator
from typing import Any
from urllib.parse import parse_qs, urlsplit

import pytest

from bot.orders.kroger_connect import KrogerStates
from bot.sandbox.kroger_api import FakeKroger
from bot.sandbox.slack_oauth import browser_get
from bot.steps.kroger_confirm import confirmation
from bot.steps.kroger_connect import CONNECT_PATH
from tests.bot_kit import SECRET, World
from tests.kroger_connecting import (
    REDIRECT,
    TEAM,
    accounts,
    at_kroger,
    back,
    booted_with_kroger,
    confirm,
    continue_href,
    forged,
    home_link,
    markers,
    page_text,
)


@pytest.fixture
def kroger(world: World) -> Iterator[FakeKroger]:
    with booted_with_kroger(world) as fake:
        yield fake


def query_of(url: str) -> dict[str, str]:
    return {k: v[-1] for k, v in parse_qs(urlsplit(url).query).items()}


def words(response: dict[str, Any]) -> str:
    """The page's text as a browser shows it, spaces collapsed (inline tags join their text)."""
    inline = re.sub(r"</?(strong|a)\b[^>]*>", "", str(response["body"]))
    return " ".join(re.sub(r"<[^>]+>", " ", inline).split())


def s256(verifier: str) -> str:
    """RFC 7636 §4.2: BASE64URL(SHA256(ASCII(code_verifier))), unpadded."""
    digest = hashlib.sha256(verifier.encode("ascii")).digest()
    return base64.urlsafe_b64encode(digest).rstrip(b"=").decode()


def test_the_page_names_the_person_and_the_workspace_and_goes_on_to_kroger(
    world: World, kroger: FakeKroger
) -> None:
    world.slack.set_person(
        "U0ALICE", real_name="Alice Example", profile={"real_name": "Alice Example"}
    )
    link = home_link(world)
    assert link.startswith(REDIRECT.removesuffix("/kroger/oauth_redirect") + CONNECT_PATH + "?")
    state = query_of(link)["state"]
    assert set(query_of(link)) == {"state"}  # nothing of Kroger's in the Home tab any more
    shown = confirm(world, link)
    assert shown["statusCode"] == 200
    headers = shown["headers"]
    assert headers["Content-Type"] == "text/html; charset=utf-8"
    assert "default-src 'none'" in headers["Content-Security-Policy"]
    assert headers["X-Content-Type-Options"] == "nosniff"
    assert headers["Referrer-Policy"] == "no-referrer"
    assert headers["Cache-Control"] == "no-store"
    assert "<script" not in shown["body"]
    text = words(shown)
    assert "Connect a Kroger account for Alice Example in Weekly Shop?" in text
    assert "added to the cart of the Kroger account you sign in with" in text
    assert "If you are not Alice Example, close this page." in text
    assert "Cancel" in text
    kroger_url = continue_href(shown)
    asked = query_of(kroger_url)
    assert kroger_url.startswith(kroger.url.rstrip("/") + "/v1/connect/oauth2/authorize?")
    assert asked["state"] == state and asked["redirect_uri"] == REDIRECT
    nonce = state.split(".")[3]
    assert asked["code_challenge_method"] == "S256"
    assert asked["code_challenge"] == s256(KrogerStates(SECRET).verifier_of(nonce))
    # The page wrote nothing; the state is redeemed only when Kroger sends the browser back.
    assert markers(world) == []
    assert back(world, at_kroger(kroger, kroger_url))["statusCode"] == 200
    assert accounts().read(TEAM, "U0ALICE") is not None


def test_bobs_link_says_it_is_bobs(world: World, kroger: FakeKroger) -> None:
    """The gap this closes: whoever opens Bob's link is told it connects a cart for Bob."""
    world.slack.set_person("U0BOB", real_name="", profile={"display_name": "bob.b"})
    text = words(confirm(world, home_link(world, "U0BOB")))
    assert "Connect a Kroger account for bob.b in Weekly Shop?" in text
    assert "If you are not bob.b, close this page." in text


def test_a_name_is_escaped(world: World, kroger: FakeKroger) -> None:
    world.slack.set_person("U0ALICE", real_name="<script>alert(1)</script> & Co")
    shown = confirm(world, home_link(world))
    assert shown["statusCode"] == 200
    assert "<script" not in shown["body"]
    assert "for <strong>&lt;script&gt;alert(1)&lt;/script&gt; &amp; Co</strong>" in shown["body"]
    # The workspace's name (auth.test's team) and Kroger's URL go through the same escaping.
    body = confirmation("A", "<b>Tom & Jerry's</b>", 'https://k/?a=1&b="x"')["body"]
    assert "&lt;b&gt;Tom &amp; Jerry&#x27;s&lt;/b&gt;" in body and "<b>" not in body
    assert 'href="https://k/?a=1&amp;b=&quot;x&quot;"' in body


def test_when_slack_cannot_say_the_page_names_the_ids(
    world: World, kroger: FakeKroger, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.DEBUG)
    link = home_link(world)
    world.slack.fail_next("users.info", error="user_not_found")
    world.slack.fail_next("auth.test", error="fatal_error")
    shown = confirm(world, link)
    assert shown["statusCode"] == 200
    text = words(shown)
    assert f"Connect a Kroger account for U0ALICE in {TEAM}?" in text
    assert continue_href(shown).startswith(kroger.url.rstrip("/"))
    logged = caplog.text + " ".join(str(r.args) for r in caplog.records)
    assert "user_not_found" in logged and "fatal_error" in logged
    assert world.env["SLACK_BOT_TOKEN"] not in logged


@pytest.mark.parametrize(
    "spoil",
    [
        forged,
        lambda s: s.replace(".U0ALICE.", ".U0BOB."),
        lambda s: "not-a-state",
        lambda s: "",
        lambda s: None,
    ],
    ids=["forged MAC", "another user", "malformed", "empty", "missing"],
)
def test_a_state_not_ours_is_refused_and_asks_s3_nothing(
    world: World, kroger: FakeKroger, spoil: Any
) -> None:
    state = query_of(home_link(world))["state"]
    calls: list[str] = []
    world.s3.meta.events.register("before-call.s3", lambda **kw: calls.append(str(kw)))
    spoilt = spoil(state)
    query = "" if spoilt is None else f"state={spoilt}"
    refused = world.send(browser_get(CONNECT_PATH, query))
    assert refused["statusCode"] == 400, refused
    assert "expired or is not ours" in page_text(refused)
    assert "Continue to Kroger" not in refused["body"]
    assert refused["headers"]["Content-Security-Policy"].startswith("default-src 'none'")
    assert calls == [] and markers(world) == []
    # (the hook sees the bot's S3 calls: the real state, through Kroger, redeems with one)
    shown = world.send(browser_get(CONNECT_PATH, f"state={state}"))
    assert back(world, at_kroger(kroger, continue_href(shown)))["statusCode"] == 200
    assert calls != [] and len(markers(world)) == 1


def test_an_expired_link_is_refused(world: World, kroger: FakeKroger) -> None:
    link = home_link(world)
    world.clock.reach(int(query_of(link)["state"].split(".")[2]) + 3600)
    refused = confirm(world, link)
    assert refused["statusCode"] == 400 and "expired" in page_text(refused)
    assert markers(world) == []


def test_cancel_changes_nothing(world: World, kroger: FakeKroger) -> None:
    shown = confirm(world, home_link(world))
    found = re.search(r'<a href="([^"]+)">Cancel</a>', shown["body"])
    assert found is not None and found[1].startswith("?")  # the same page, another query
    cancelled = world.send(browser_get(CONNECT_PATH, found[1][1:]))
    assert cancelled["statusCode"] == 200 and "Nothing was connected" in page_text(cancelled)
    assert markers(world) == [] and accounts().read(TEAM, "U0ALICE") is None


def test_without_a_kroger_app_there_is_no_page(world: World) -> None:
    assert world.send(browser_get(CONNECT_PATH, "state=s"))["statusCode"] == 404


def test_only_get(world: World, kroger: FakeKroger) -> None:
    event = browser_get(CONNECT_PATH, "state=s")
    event["requestContext"]["http"]["method"] = "POST"
    assert world.send(event)["statusCode"] == 405


def test_with_many_workspaces_the_page_asks_with_the_workspaces_own_token(
    world: World, kroger: FakeKroger
) -> None:
    """Many workspaces: the names are asked with the installation's bot token; a state (ours)
    for a workspace that has no installation (removed since the link was drawn) is 404."""
    from bot.sandbox.slack_oauth import add_to_slack

    client_id, secret = "1111.2222", "not-a-real-client-secret"
    world.slack.oauth.register_app(client_id, secret)
    world.boot(SLACK_CLIENT_ID=client_id, SLACK_CLIENT_SECRET=secret, SLACK_BOT_TOKEN="")
    add_to_slack(world.send, world.slack.oauth, client_id, TEAM)
    world.slack.set_person("U0ALICE", real_name="Alice Example")
    states = KrogerStates(SECRET, clock=world.clock)
    shown = world.send(browser_get(CONNECT_PATH, f"state={states.issue(TEAM, 'U0ALICE')[0]}"))
    assert "Connect a Kroger account for Alice Example in Weekly Shop?" in words(shown)
    asked = [c for c in world.slack.calls if c.method in ("users.info", "auth.test")][-2:]
    assert sorted(c.method for c in asked) == ["auth.test", "users.info"]  # asked at once
    assert all(world.slack.oauth.team_of(c.token) == TEAM and c.error is None for c in asked)
    gone = world.send(browser_get(CONNECT_PATH, f"state={states.issue('T0GONE', 'U0ALICE')[0]}"))
    assert gone["statusCode"] == 404 and "not installed" in page_text(gone)
    assert "Continue to Kroger" not in gone["body"] and markers(world) == []


def test_a_slow_slack_does_not_hold_the_page(
    world: World, kroger: FakeKroger, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The names are asked within a deadline (a browser waits; API Gateway gives up at 30 s):
    ``users.info`` answering after it leaves the person's ID on the page, and the workspace's
    name, answered in time, is still shown."""
    import bot.runtime.kroger

    monkeypatch.setattr(bot.runtime.kroger, "NAMES_SECONDS", 0.5)
    world.slack.set_person("U0ALICE", real_name="Alice Example")
    link = home_link(world)
    world.slack.delay_next("users.info", 3.0)
    shown = confirm(world, link)
    assert "Connect a Kroger account for U0ALICE in Weekly Shop?" in words(shown)
    assert continue_href(shown).startswith(kroger.url.rstrip("/"))
