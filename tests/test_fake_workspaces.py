"""The fake Web API holds two workspaces, as Slack does: each token reaches its own team's, and
nothing posted, opened or issued in one is seen from the other."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from slack_sdk import WebClient
from slack_sdk.errors import SlackApiError
from slack_sdk.webhook import WebhookClient

from bot.sandbox.slack_api import FakeSlack

TOKEN, CLIENT_ID, SECRET = "xoxb-first", "1111.2222", "client-secret"
MODAL = {"type": "modal", "title": {"type": "plain_text", "text": "Change"}, "blocks": []}


@pytest.fixture
def slack() -> Iterator[FakeSlack]:
    with FakeSlack(TOKEN, team_id="T0TEAM", channels={"C0SHOP": ("U0ALICE",)}) as fake:
        fake.add_workspace("T0GARDEN", channels={"C0PLOTS": ("U0ALICE",)})
        fake.oauth.register_app(CLIENT_ID, SECRET)
        yield fake


def installed(slack: FakeSlack, team: str) -> WebClient:
    """A bot token for ``team``, as the app gets it from ``oauth.v2.access``."""
    code = slack.oauth.authorize(CLIENT_ID, "", team_id=team)
    access = WebClient(base_url=slack.url).oauth_v2_access(
        client_id=CLIENT_ID, client_secret=SECRET, code=code
    )
    return WebClient(token=str(access["access_token"]), base_url=slack.url)


def test_each_token_reaches_its_own_workspace(slack: FakeSlack) -> None:
    first, garden = WebClient(token=TOKEN, base_url=slack.url), installed(slack, "T0GARDEN")
    assert first.auth_test()["team_id"] == "T0TEAM"
    assert garden.auth_test()["team_id"] == "T0GARDEN"
    posted = garden.chat_postMessage(channel="C0PLOTS", text="seedlings")
    assert [c.token for c in slack.calls_to("chat.postMessage")] == [garden.token]
    assert [m["text"] for m in slack.workspace("T0GARDEN").messages("C0PLOTS")] == ["seedlings"]
    assert slack.channel_ids() == ["C0SHOP"] and slack.messages("C0PLOTS") == []
    for client, channel in ((first, "C0PLOTS"), (garden, "C0SHOP")):
        with pytest.raises(SlackApiError) as refused:
            client.chat_postMessage(channel=channel, text="across")
        assert refused.value.response["error"] == "channel_not_found"
    with pytest.raises(SlackApiError):  # the other workspace has no such message either
        first.chat_update(channel="C0PLOTS", ts=posted["ts"], text="edited")
    assert slack.team_ids() == ["T0TEAM", "T0GARDEN"]


def test_triggers_views_and_response_urls_stay_in_their_workspace(slack: FakeSlack) -> None:
    from bot.sandbox import slack_requests as sr

    first, garden = WebClient(token=TOKEN, base_url=slack.url), installed(slack, "T0GARDEN")
    trigger = slack.workspace("T0GARDEN").issue_trigger("U0ALICE")
    with pytest.raises(SlackApiError) as refused:
        first.views_open(trigger_id=trigger, view=MODAL)
    assert refused.value.response["error"] == "invalid_trigger_id"
    opened = garden.views_open(trigger_id=trigger, view=MODAL)
    assert slack.workspace("T0GARDEN").open_view("U0ALICE") is not None
    assert slack.open_view("U0ALICE") is None
    with pytest.raises(SlackApiError):
        first.views_update(view_id=opened["view"]["id"], view=MODAL)
    url = sr.response_url(slack.hooks_url, "commands", "T0GARDEN", "C0PLOTS", "U0ALICE", None)
    assert WebhookClient(url).send(text="only you").status_code == 200
    assert [e["text"] for e in slack.workspace("T0GARDEN").ephemerals("U0ALICE")] == ["only you"]
    assert slack.ephemerals() == []


def test_a_reinstall_revokes_only_that_workspaces_token(slack: FakeSlack) -> None:
    old = installed(slack, "T0GARDEN")
    new = installed(slack, "T0GARDEN")
    with pytest.raises(SlackApiError) as refused:
        old.auth_test()
    assert refused.value.response["error"] == "invalid_auth"
    assert new.auth_test()["team_id"] == "T0GARDEN"
    assert WebClient(token=TOKEN, base_url=slack.url).auth_test()["team_id"] == "T0TEAM"


def test_a_workspace_is_added_once(slack: FakeSlack) -> None:
    with pytest.raises(ValueError, match="T0GARDEN"):
        slack.add_workspace("T0GARDEN")
    with pytest.raises(KeyError):
        slack.workspace("T0NOWHERE")
