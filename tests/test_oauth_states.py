"""OAuth states are signed, not stored, and redeemed once (``bot.slack.oauth_states``).

Through the real handler: a loop of anonymous ``GET /slack/install`` writes nothing to the
bucket; the whole Add to Slack walk still installs, leaving one empty used-marker; a forged, a
malformed and an expired state are refused with the flow's failure page without an S3 call; a
state redeemed twice, one after the other or by two redirects at the same moment, installs once.

For the two at once: Bolt's own S3 state store reads a state and then deletes it unconditionally,
so two redemptions that both read before either deletes both install. Here both redirects run in
two threads that meet at a barrier just before each creates the state's marker
(``If-None-Match: *``); the conditional create lets one through. (moto's conditional writes are
made atomic by the ``s3`` fixture, as real S3's are.)
"""

from __future__ import annotations

import re
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from typing import Any

import pytest

from bench.common import RequestCounter
from bot.sandbox.slack_oauth import browser_get
from bot.slack.installs import STATES
from bot.slack.oauth_states import USED, SingleUseStateStore
from tests.bot_kit import World
from tests.test_installs import CLIENT_ID, INSTALLS, many

__all__ = ["many"]  # a fixture, used by name

MARKERS = f"{INSTALLS}{STATES}{USED}"
REFUSED = "expired or was already used"


def keys(s3: Any, bucket: str) -> list[str]:
    """Every key in the bucket (all pages: the loop below would fill more than one)."""
    pages = s3.get_paginator("list_objects_v2").paginate(Bucket=bucket)
    return [o["Key"] for page in pages for o in page.get("Contents", [])]


def state_store() -> SingleUseStateStore:
    """The state store of the running cold start, as the handler uses it."""
    from bot.handler import cold_start

    oauth = cold_start()[0].oauth
    assert oauth is not None
    store = oauth[0].settings.state_store
    assert isinstance(store, SingleUseStateStore)  # LambdaS3OAuthFlow kept ours
    return store


def install_page(world: World) -> tuple[str, str]:
    """A browser's ``GET /slack/install``: the state in its authorize link, and its cookie."""
    page = world.send(browser_get("/slack/install"))
    assert page["statusCode"] == 200, page
    state = re.search(r"state=([0-9A-Za-z_.~-]+)", page["body"])[1]  # type: ignore[index]
    cookie = page["headers"]["set-cookie"].split(";")[0]
    return state, cookie


def redirect(world: World, state: str, cookie: str | None = None) -> dict[str, Any]:
    """Slack's redirect back with a fresh code and ``state``; the cookie is the state's own
    unless given, so the browser check passes and the state store decides."""
    code = world.slack.oauth.authorize(CLIENT_ID, "")
    cookie = cookie or f"slack-app-oauth-state={state}"
    return world.send(browser_get("/slack/oauth_redirect", f"code={code}&state={state}", cookie))


def state_calls() -> RequestCounter:
    """Counts the S3 calls the state store makes from now on."""
    return RequestCounter(state_store().s3_client)


def test_a_thousand_install_pages_write_nothing(many: World, s3: Any, bucket: str) -> None:
    """Each GET is anonymous (anyone may loop it): it answers a fresh signed state and makes no
    S3 call, so the bucket holds exactly what it held before."""
    before = sorted(keys(s3, bucket))
    calls = state_calls()
    states = {install_page(many)[0] for _ in range(1000)}
    assert len(states) == 1000  # each its own
    assert calls.total == 0
    assert sorted(keys(s3, bucket)) == before


def test_add_to_slack_installs_and_leaves_one_marker(many: World, s3: Any, bucket: str) -> None:
    state, cookie = install_page(many)
    done = redirect(many, state, cookie)
    assert done["statusCode"] == 200, done
    assert any(k.startswith(f"{INSTALLS}{CLIENT_ID}/none-T0TEAM/bot") for k in keys(s3, bucket))
    nonce = state.split(".")[1]
    assert [k for k in keys(s3, bucket) if k.startswith(INSTALLS + STATES)] == [MARKERS + nonce]
    assert s3.get_object(Bucket=bucket, Key=MARKERS + nonce)["ContentLength"] == 0


def tampered(state: str) -> str:
    """``state`` with its MAC's first character changed (still well formed)."""
    issued, nonce, mac = state.split(".")
    return f"{issued}.{nonce}.{'B' if mac[0] == 'A' else 'A'}{mac[1:]}"


def signed_elsewhere(state: str) -> str:
    """A well-formed state signed with another client secret."""
    other = SingleUseStateStore(
        client_secret="another-secret", s3_client=None, bucket_name="b", expiration_seconds=600
    )
    return other.issue()


def reissued(state: str) -> str:
    """``state``'s MAC on another nonce (a MAC is not movable)."""
    issued, nonce, mac = state.split(".")
    return f"{issued}.{'A' * len(nonce)}.{mac}"


@pytest.mark.parametrize("forge", [tampered, signed_elsewhere, reissued])
def test_a_forged_state_is_refused_without_an_s3_call(
    many: World, s3: Any, bucket: str, forge: Any
) -> None:
    state, _ = install_page(many)
    before = sorted(keys(s3, bucket))
    calls = state_calls()
    refused = redirect(many, forge(state))
    assert refused["statusCode"] == 401 and REFUSED in refused["body"], refused
    assert calls.total == 0 and sorted(keys(s3, bucket)) == before
    assert many.slack.calls_to("oauth.v2.access") == []  # no code exchanged
    assert redirect(many, state)["statusCode"] == 200  # the real one was not burnt


@pytest.mark.parametrize(
    "state",
    [
        "forged",
        "0b5d1c8e-2a57-4a43-9c1e-0f7d0f1f6a11",  # what Bolt's own store issues
        "1700000000..",
        "1700000000.AAAAAAAAAAAAAAAAAAAAAA.AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA.x",
        "１７００.AAAAAAAAAAAAAAAAAAAAAA.AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA",  # not ASCII
        "9" * 13 + ".AAAAAAAAAAAAAAAAAAAAAA.AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA",
    ],
)
def test_a_malformed_state_is_refused_without_an_s3_call(
    many: World, s3: Any, bucket: str, state: str
) -> None:
    before = sorted(keys(s3, bucket))
    calls = state_calls()
    refused = redirect(many, state)
    assert refused["statusCode"] == 401 and REFUSED in refused["body"], refused
    assert calls.total == 0 and sorted(keys(s3, bucket)) == before
    assert many.slack.calls_to("oauth.v2.access") == []


def test_a_state_is_good_for_ten_minutes_and_no_longer(
    many: World, s3: Any, bucket: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """600 s, as Bolt's default state store and its state cookie (``Max-Age=600``)."""
    late, early = install_page(many)[0], install_page(many)[0]
    store = state_store()
    monkeypatch.setattr(store, "clock", lambda: time.time() + 600)
    calls = state_calls()
    refused = redirect(many, late)
    assert refused["statusCode"] == 401 and REFUSED in refused["body"], refused
    assert calls.total == 0 and not [k for k in keys(s3, bucket) if k.startswith(MARKERS)]
    monkeypatch.setattr(store, "clock", lambda: time.time() + 598)
    assert redirect(many, early)["statusCode"] == 200


def test_a_state_redeemed_twice_installs_once(many: World, s3: Any, bucket: str) -> None:
    state, cookie = install_page(many)
    assert redirect(many, state, cookie)["statusCode"] == 200
    reused = redirect(many, state, cookie)
    assert reused["statusCode"] == 401 and REFUSED in reused["body"], reused
    assert len(many.slack.calls_to("oauth.v2.access")) == 1
    assert [k for k in keys(s3, bucket) if k.startswith(INSTALLS + STATES)] == [
        MARKERS + state.split(".")[1]
    ]


def test_two_redemptions_of_one_state_at_once_install_once(
    many: World, s3: Any, bucket: str
) -> None:
    state, cookie = install_page(many)
    codes = [many.slack.oauth.authorize(CLIENT_ID, "T0TEAM") for _ in range(2)]

    client = state_store().s3_client
    both_checked = threading.Barrier(2, timeout=10)

    def wait_for_the_other(**_: Any) -> None:
        both_checked.wait()

    client.meta.events.register("before-call.s3.PutObject", wait_for_the_other)
    try:
        with ThreadPoolExecutor(2) as pool:
            pages = list(
                pool.map(
                    lambda code: many.send(
                        browser_get("/slack/oauth_redirect", f"code={code}&state={state}", cookie)
                    ),
                    codes,
                )
            )
    finally:
        client.meta.events.unregister("before-call.s3.PutObject", wait_for_the_other)
    assert sorted(p["statusCode"] for p in pages) == [200, 401], pages
    (refused,) = [p for p in pages if p["statusCode"] == 401]
    assert REFUSED in refused["body"]
    assert len(many.slack.calls_to("oauth.v2.access")) == 1  # one code exchanged
    assert [k for k in keys(s3, bucket) if k.startswith(INSTALLS + STATES)] == [
        MARKERS + state.split(".")[1]
    ]
