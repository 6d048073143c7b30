"""An OAuth state is redeemed once, even by two redirects at the same moment (``bot.oauth_states``).

Bolt's S3 state store reads a state and then deletes it unconditionally, so two redemptions that
both read before either deletes both install. Here both redirects run through the real handler in
two threads that meet at a barrier once each has read the state; the conditional delete lets one
through. (moto's conditional writes are made atomic by the ``s3`` fixture, as real S3's are.)
"""

from __future__ import annotations

import re
import threading
from concurrent.futures import ThreadPoolExecutor
from typing import Any

from bot.sandbox.slack_oauth import browser_get
from tests.bot_kit import World
from tests.test_installs import CLIENT_ID, many

__all__ = ["many"]  # a fixture, used by name


def test_two_redemptions_of_one_state_at_once_install_once(many: World) -> None:
    from bot.handler import cold_start

    page = many.send(browser_get("/slack/install"))
    state = re.search(r"state=([0-9A-Za-z_.~-]+)", page["body"])[1]  # type: ignore[index]
    cookie = page["headers"]["set-cookie"].split(";")[0]
    codes = [many.slack.oauth.authorize(CLIENT_ID, "T0TEAM") for _ in range(2)]

    oauth = cold_start()[0].oauth
    assert oauth is not None
    client = oauth[0].settings.state_store.s3_client
    both_read = threading.Barrier(2, timeout=10)

    def wait_for_the_other(**_: Any) -> None:
        both_read.wait()

    client.meta.events.register("after-call.s3.GetObject", wait_for_the_other)
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
        client.meta.events.unregister("after-call.s3.GetObject", wait_for_the_other)
    assert sorted(p["statusCode"] for p in pages) == [200, 401], pages
    (refused,) = [p for p in pages if p["statusCode"] == 401]
    assert "expired or was already used" in refused["body"]
    assert len(many.slack.calls_to("oauth.v2.access")) == 1  # one code exchanged
