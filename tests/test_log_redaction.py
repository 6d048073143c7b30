"""At DEBUG, bolt-python logs whole events ("Incoming event: …": headers with the request
signature, an OAuth redirect's ``code`` and ``state`` and the state cookie, the body with its
``response_url``). Nothing turns DEBUG on today; if someone does, none of it reaches a log line
(``bot.logs.redact``). Driven through the real handler: a signed click and the whole Add to Slack
walk, with every logger at DEBUG."""

from __future__ import annotations

import io
import logging
import re
from collections.abc import Iterator

import pytest

from bot.logs import JsonFormatter
from bot.sandbox.slack_oauth import browser_get
from tests.bot_kit import World, start_basket
from tests.test_installs import CLIENT_ID, CLIENT_SECRET, many

__all__ = ["many"]  # a fixture, used by name


@pytest.fixture
def debug_log() -> Iterator[io.StringIO]:
    out = io.StringIO()
    handler = logging.StreamHandler(out)
    handler.setFormatter(JsonFormatter())
    root = logging.getLogger()
    levels = {name: logging.getLogger(name).level for name in ("", "slack_bolt", "slack_sdk")}
    root.addHandler(handler)
    for name in levels:
        logging.getLogger(name).setLevel(logging.DEBUG)
    try:
        yield out
    finally:
        root.removeHandler(handler)
        for name, level in levels.items():
            logging.getLogger(name).setLevel(level)


def test_a_debug_log_of_the_oauth_flow_and_a_click_shows_no_secret(
    many: World, debug_log: io.StringIO
) -> None:
    page = many.send(browser_get("/slack/install"))
    state = re.search(r"state=([0-9A-Za-z_.~-]+)", page["body"])[1]  # type: ignore[index]
    cookie = page["headers"]["set-cookie"].split(";")[0]
    code = many.slack.oauth.authorize(CLIENT_ID, "T0TEAM")
    done = many.send(browser_get("/slack/oauth_redirect", f"code={code}&state={state}", cookie))
    assert done["statusCode"] == 200, done
    basket = start_basket(many)
    many.click(basket, "approve_basket")
    many.run_lazies()
    logged = debug_log.getvalue()
    assert "Incoming event" in logged  # Bolt did log the events at DEBUG
    tokens = [t for t in many.slack.oauth.tokens if t != "xoxb-test"]
    secrets = [state, cookie.split("=", 1)[1], code, CLIENT_SECRET, *tokens]
    secrets += [many.slack.hooks_url.rsplit("/", 1)[1]]  # the response_urls' secret path
    assert [s for s in secrets if s in logged] == []
    assert not re.search(r"v0=[0-9a-f]{64}", logged)


def test_bolts_warning_about_a_failed_code_exchange_names_no_code() -> None:
    """bolt-python's OAuth flow warns "Failed to fetch oauth.v2.access result with code: …"
    (at WARNING, so it is logged today) when Slack refuses the exchange."""
    from bot.logs import redact

    line = "Failed to fetch oauth.v2.access result with code: 3504.abc910 - error: invalid_code"
    assert redact(line) == (
        "Failed to fetch oauth.v2.access result with code: [redacted] - error: invalid_code"
    )
