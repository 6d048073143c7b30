"""Removing the app deletes its people's Kroger refresh tokens (issue 34, item 4), through the
real handler: ``app_uninstalled``, then its lazy run, against moto's SSM and KMS held to SSM's
limits (``tests/test_kroger_accounts.py``); another workspace's people are untouched, and a late
removal keeps what was saved under the new installation, as for the workspace's own keys."""

from __future__ import annotations

import datetime

import boto3
import pytest

from bot.records.kroger_accounts import KrogerAccounts
from bot.sandbox.slack_events import event_callback
from tests.bot_kit import SECRET, World
from tests.test_kroger_accounts import (
    OTHER,
    PATH,
    ROTATED,
    TEAM,
    TOKEN,
    names_under,
    people,
    ssm_refuses_more_than_ten,
)

__all__ = ["ssm_refuses_more_than_ten"]  # autouse: SSM's DeleteParameters takes 10 names


@pytest.fixture
def keyed(world: World) -> World:
    """The bot told where the workspaces' keys go (and so the people's Kroger tokens)."""
    arn = str(boto3.client("kms").create_key(Description="weekly-shop keys")["KeyMetadata"]["Arn"])
    world.boot(WORKSPACE_SECRETS_PATH=PATH, WORKSPACE_SECRETS_KEY=arn)
    return world


def test_removing_the_app_deletes_its_peoples_tokens_and_no_other_workspaces(
    keyed: World,
) -> None:
    ssm = boto3.client("ssm")
    accounts = KrogerAccounts(ssm, PATH)
    for user in people(12):
        accounts.save(TEAM, user, f"{TOKEN}-{user}")
    accounts.save(OTHER, "U0P000", TOKEN)
    keyed.send(event_callback(SECRET, {"type": "app_uninstalled"}, team_id=TEAM))
    keyed.run_lazies()
    assert names_under(ssm, PATH) == [f"{PATH}/{OTHER}/kroger/U0P000"]


def test_a_late_removal_keeps_a_token_saved_under_the_new_installation(
    keyed: World, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Lambda retries a removal a minute or two later; if the workspace installed the app again
    in between and Bob connected since, his token stays and Alice's, older, goes."""
    from bot.sandbox.slack_oauth import add_to_slack

    client_id = "1111.2222"
    keyed.slack.oauth.register_app(client_id, "not-a-real-client-secret")
    keyed.boot(
        SLACK_CLIENT_ID=client_id,
        SLACK_CLIENT_SECRET="not-a-real-client-secret",
        SLACK_BOT_TOKEN="",
    )
    ssm = boto3.client("ssm")
    accounts = KrogerAccounts(ssm, PATH)
    now = datetime.datetime.now(datetime.UTC).replace(tzinfo=None)
    with monkeypatch.context() as moto_clock:
        moto_clock.setattr("moto.ssm.models.utcnow", lambda: now - datetime.timedelta(minutes=10))
        accounts.save(TEAM, "U0ALICE", TOKEN)
    add_to_slack(keyed.send, keyed.slack.oauth, client_id, TEAM)
    accounts.save(TEAM, "U0BOB", ROTATED)
    said = int(now.replace(tzinfo=datetime.UTC).timestamp()) - 120  # before this install
    keyed.send(event_callback(SECRET, {"type": "app_uninstalled"}, team_id=TEAM, event_time=said))
    keyed.run_lazies()
    assert accounts.read(TEAM, "U0ALICE") is None
    assert accounts.read(TEAM, "U0BOB") == ROTATED
