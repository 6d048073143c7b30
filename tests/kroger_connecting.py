"""What the Kroger connection tests share (``test_kroger_connect``, ``test_kroger_confirm``): the
bot booted with the stand-in Kroger, and a person's way through it as a browser goes: the Home
tab's Connect link, the bot's confirmation page, Kroger's authorize page, and the redirect back,
each an API Gateway HTTP API (payload 2.0) event through the real handler."""

from __future__ import annotations

import html
import re
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any
from urllib.parse import parse_qs, urlencode, urlsplit

import boto3

from bot.orders.kroger_connect import USED
from bot.records.kroger_accounts import KrogerAccounts
from bot.sandbox.kroger_api import FakeKroger
from bot.sandbox.slack_oauth import browser_get
from bot.slack.installs import STATES, install_prefix
from bot.slack.kroger_section import KROGER_CONNECT, KROGER_DISCONNECT
from bot.steps.kroger_connect import REDIRECT_PATH
from tests.bot_kit import World
from tests.test_kroger_cart import browser_get as kroger_get
from workflow.shop import SHOP_PREFIX

PATH = "/weekly-shop/test/workspaces"
REDIRECT = "https://fakeapi123.execute-api.us-east-1.amazonaws.com/kroger/oauth_redirect"
TEAM = "T0TEAM"
MARKERS = install_prefix(SHOP_PREFIX) + STATES + USED


@contextmanager
def booted_with_kroger(world: World) -> Iterator[FakeKroger]:
    """The stand-in with the bot's redirect URL registered; the bot booted with its Kroger app,
    a place for the people's tokens (SSM, under a KMS key) and that redirect URL."""
    with FakeKroger(clock=world.clock) as fake:
        fake.customers.register(fake.client_id, REDIRECT)
        kms = boto3.client("kms")
        arn = str(kms.create_key(Description="weekly-shop keys")["KeyMetadata"]["Arn"])
        world.boot(
            WORKSPACE_SECRETS_PATH=PATH,
            WORKSPACE_SECRETS_KEY=arn,
            KROGER_CLIENT_ID=fake.client_id,
            KROGER_CLIENT_SECRET=fake.client_secret,
            KROGER_API_URL=fake.url,
            KROGER_REDIRECT_URL=REDIRECT,
        )
        yield fake


def accounts() -> KrogerAccounts:
    return KrogerAccounts(boto3.client("ssm"), PATH)


def kroger_section(view: dict[str, Any] | None) -> tuple[list[str], dict[str, dict[str, Any]]]:
    """(the section's texts, its buttons by action ID) of a published Home tab."""
    assert view is not None
    blocks = view["blocks"]
    starts = [i for i, b in enumerate(blocks) if b.get("text", {}).get("text") == "*Kroger cart*"]
    if not starts:
        return [], {}
    texts, buttons = [], {}
    for block in blocks[starts[0] :]:
        if block["type"] == "divider":
            break
        texts += [e["text"] for e in block.get("elements", [])] + [
            block["text"]["text"] for _ in [0] if "text" in block
        ]
        if "accessory" in block:
            buttons[block["accessory"]["action_id"]] = block["accessory"]
    return texts, buttons


def home_link(world: World, user: str = "U0ALICE") -> str:
    """The Home tab's Connect link: the bot's confirmation page (``bot.steps.kroger_confirm``)."""
    texts, buttons = kroger_section(world.open_home(user))
    assert "Your Kroger account is not connected." in texts
    assert KROGER_DISCONNECT not in buttons
    return str(buttons[KROGER_CONNECT]["url"])


def confirm(world: World, link: str) -> dict[str, Any]:
    """The browser's GET of the Connect link, through API Gateway to the handler."""
    parts = urlsplit(link)
    return world.send(browser_get(parts.path, parts.query))


def continue_href(response: dict[str, Any]) -> str:
    """Where the confirmation page's "Continue to Kroger" goes."""
    found = re.search(r'<a href="([^"]+)">Continue to Kroger</a>', str(response["body"]))
    assert response["statusCode"] == 200 and found is not None, response
    return html.unescape(found[1])


def connect_link(world: World, user: str = "U0ALICE") -> str:
    """Kroger's authorize URL, as the person reaches it: the Home tab's Connect, then the
    confirmation page's "Continue to Kroger"."""
    return continue_href(confirm(world, home_link(world, user)))


def at_kroger(fake: FakeKroger, url: str, choice: str = "allow") -> dict[str, str]:
    """The person on Kroger's page presses Allow (or Cancel): the query it sends them back
    with, to the bot's redirect URL."""
    status, page, _ = kroger_get(fake, url)
    assert status == 200, page
    nonce = re.search(r'name="request" value="([^"]+)"', page)
    assert nonce is not None
    decision = "/v1/connect/oauth2/authorize/decision?" + urlencode(
        {"request": nonce[1], "choice": choice}
    )
    status, _, headers = kroger_get(fake, decision)
    assert status == 302 and headers["location"].startswith(REDIRECT + "?")
    return {k: v[-1] for k, v in parse_qs(urlsplit(headers["location"]).query).items()}


def back(world: World, query: dict[str, str]) -> dict[str, Any]:
    """The browser's GET of the redirect URL, through API Gateway to the handler."""
    return world.send(browser_get(REDIRECT_PATH, urlencode(query)))


def markers(world: World) -> list[str]:
    found = world.s3.list_objects_v2(Bucket=world.env["CHECKPOINT_BUCKET"], Prefix=MARKERS).get(
        "Contents", []
    )
    return [o["Key"] for o in found]


def page_text(response: dict[str, Any]) -> str:
    return re.sub(r"<[^>]+>", " ", str(response["body"]))


def forged(state: str) -> str:
    mac = state.rsplit(".", 1)[1]
    return state[: -len(mac)] + ("A" if mac[0] != "A" else "B") + mac[1:]
