"""With many workspaces, the deploy's own keys serve only the operator's workspace unless the
operator shares them (issue 31): ``SHARE_DEPLOY_KEYS``, off by default.

Before, any workspace that added the app could choose Instacart without a key and order on
the operator's ``INSTACART_API_KEY``. Through the real handler: Add to Slack, the Settings modal
(its hint says which key applies), and an approve that places the order with moto's SSM and KMS
and the Instacart stand-in.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

import boto3
import pytest

from bot.sandbox.instacart_api import FakeInstacart
from bot.steps.settings import NO_KEY
from tests.bot_kit import World, start_basket
from tests.settings_kit import open_settings, option, save
from tests.test_installs import CLIENT_ID, CLIENT_SECRET, install
from tests.test_settings_orders import PATH, inputs, order_reply

OPERATOR_KEY = "keys.0123456789abcdef0123456789abcdef"


@pytest.fixture
def operator(world: World) -> Iterator[tuple[World, FakeInstacart]]:
    """Many workspaces; the deploy keeps an Instacart key of its own and each workspace's keys
    in SSM; T0TEAM (a household, not the operator's) added the app; Carol is its admin."""
    arn = str(boto3.client("kms").create_key(Description="weekly-shop keys")["KeyMetadata"]["Arn"])
    world.slack.oauth.register_app(CLIENT_ID, CLIENT_SECRET)
    with FakeInstacart(api_key=OPERATOR_KEY) as instacart:
        world.boot(
            SLACK_CLIENT_ID=CLIENT_ID,
            SLACK_CLIENT_SECRET=CLIENT_SECRET,
            SLACK_BOT_TOKEN="",
            WORKSPACE_SECRETS_PATH=PATH,
            WORKSPACE_SECRETS_KEY=arn,
            INSTACART_API_KEY=OPERATOR_KEY,
            INSTACART_API_URL=instacart.url,
            SHOP_TEAM="T0OPERATOR",
        )
        assert install(world)["statusCode"] == 200
        world.slack.set_person("U0CAROL", is_admin=True, tz="Europe/London")
        yield world, instacart


def key_hint(world: World) -> tuple[dict[str, Any], str]:
    form = open_settings(world, "U0CAROL")
    assert form is not None
    return form, str(inputs(form)["instacart_key"]["hint"]["text"])


def test_another_workspace_cannot_order_on_the_operators_instacart_key(
    operator: tuple[World, FakeInstacart],
) -> None:
    world, instacart = operator
    form, hint = key_hint(world)
    assert "deploy" not in hint and hint.startswith("None saved yet.")
    answer = save(world, "U0CAROL", form, destination=option("instacart"))
    assert answer == {"response_action": "errors", "errors": {"instacart_key": NO_KEY}}
    assert not instacart.lists


def test_shared_by_the_operator_the_deploys_key_serves_every_workspace_and_says_so(
    operator: tuple[World, FakeInstacart],
) -> None:
    world, instacart = operator
    world.boot(SHARE_DEPLOY_KEYS="1")
    form, hint = key_hint(world)
    assert hint == "None saved: the deploy's key is used. Type one to use your own."
    assert save(world, "U0CAROL", form, destination=option("instacart")) == {}
    basket = start_basket(world)
    world.click(basket, "approve_basket", user="U0BOB")
    world.run_lazies()
    assert order_reply(world, basket)["text"] == "Ordered 10 items."
    assert len(instacart.lists) == 1

    world.boot(SHARE_DEPLOY_KEYS="0")  # the operator stops sharing: no silent use of it
    basket = start_basket_again(world)
    world.click(basket, "approve_basket", user="U0BOB")
    world.run_lazies()
    said = json.dumps(world.slack.thread("C0SHOP", basket["ts"]))
    assert "no Instacart API key is saved" in said
    assert len(instacart.lists) == 1


def start_basket_again(world: World) -> dict[str, Any]:
    world.shop("tacos on Tuesday")
    world.run_lazies()
    return world.baskets()[-1]
