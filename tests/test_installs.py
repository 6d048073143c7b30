"""Many workspaces, through the real handler: "Add to Slack" with Bolt's Lambda OAuth flow and its
S3 stores under their own prefix, against the fake Web API's ``oauth.v2.access``; every request
authorised with its own workspace's token, found once per warm container."""

from __future__ import annotations

import logging
import re
from typing import Any

import pytest

from bench.common import RequestCounter
from bot.sandbox.slack_oauth import add_to_slack, browser_get
from bot.slack.installs import install_prefix
from tests.bot_kit import CHANNEL, World, objects
from workflow.shop.records import SHOP_PREFIX

CLIENT_ID, CLIENT_SECRET = "1111.2222", "not-a-real-client-secret"
INSTALLS = install_prefix(SHOP_PREFIX)


@pytest.fixture
def many(world: World) -> World:
    world.slack.oauth.register_app(CLIENT_ID, CLIENT_SECRET)
    world.boot(SLACK_CLIENT_ID=CLIENT_ID, SLACK_CLIENT_SECRET=CLIENT_SECRET, SLACK_BOT_TOKEN="")
    return world


def install(world: World, team: str = "T0TEAM") -> dict[str, Any]:
    """A person's browser through Add to Slack for ``team``; the page they end on."""
    return add_to_slack(world.send, world.slack.oauth, CLIENT_ID, team)


def test_add_to_slack_installs_the_workspace_under_its_own_prefix(
    many: World, s3: Any, bucket: str
) -> None:
    done = install(many)
    assert done["statusCode"] == 200, done
    assert "/invite @weekly-shop" in done["body"] and "/shop" in done["body"]
    keys = [k for k in objects(s3, bucket) if k.startswith(INSTALLS)]
    assert any(k.startswith(f"{INSTALLS}{CLIENT_ID}/none-T0TEAM/bot") for k in keys), keys
    assert all(k.startswith(INSTALLS) for k in objects(s3, bucket))  # nothing at the root


def test_requests_use_the_token_of_their_workspace(many: World) -> None:
    install(many)
    (token,) = [
        t for t, team in many.slack.oauth.tokens.items() if team == "T0TEAM" and t != "xoxb-test"
    ]
    many.shop()
    many.run_lazies()
    (basket,) = many.baskets()
    posts = many.slack.calls_to("chat.postMessage")
    assert posts and {c.token for c in posts} == {token}


def test_a_forged_or_reused_state_is_refused_with_a_page_and_installs_nothing(
    many: World, s3: Any, bucket: str
) -> None:
    code = many.slack.oauth.authorize(CLIENT_ID, "")
    forged = many.send(
        browser_get(
            "/slack/oauth_redirect", f"code={code}&state=forged", "slack-app-oauth-state=forged"
        )
    )
    assert forged["statusCode"] in (400, 401), forged
    assert "expired or was already used" in forged["body"]
    assert not [k for k in objects(s3, bucket) if "/bot" in k]
    page = many.send(browser_get("/slack/install"))
    state = re.search(r"state=([0-9A-Za-z_.~-]+)", page["body"])[1]  # type: ignore[index]
    cookie = page["headers"]["set-cookie"].split(";")[0]
    first = many.send(browser_get("/slack/oauth_redirect", f"code={code}&state={state}", cookie))
    assert first["statusCode"] == 200, first
    again_code = many.slack.oauth.authorize(CLIENT_ID, "")
    reused = many.send(
        browser_get("/slack/oauth_redirect", f"code={again_code}&state={state}", cookie)
    )
    assert reused["statusCode"] in (400, 401) and "expired or was already used" in reused["body"]


def test_a_second_install_rotates_the_token(many: World) -> None:
    install(many)
    first = {t for t, team in many.slack.oauth.tokens.items() if team == "T0TEAM"}
    install(many)
    second = {t for t, team in many.slack.oauth.tokens.items() if team == "T0TEAM"}
    assert first.isdisjoint(second)  # the old token is revoked
    many.shop()
    many.run_lazies()
    assert {c.token for c in many.slack.calls_to("chat.postMessage")} == second


def test_a_workspace_without_an_installation_gets_no_token(
    many: World, s3: Any, bucket: str
) -> None:
    """Bolt's own refusal, in our words, through the command's response_url (only the person
    sees it); nothing starts, nothing is written, no other workspace's token is used."""
    ack = many.shop(team_id="T0OTHER")
    assert ack["statusCode"] == 200 and "Writing your basket" not in str(ack.get("body"))
    (said,) = [r.body for r in many.slack.responses]
    assert "isn't installed in this workspace" in said["text"]
    many.run_lazies()
    assert many.baskets() == [] and many.slack.calls_to("chat.postMessage") == []
    assert not [k for k in objects(s3, bucket) if k.startswith(SHOP_PREFIX)]


def test_a_workspace_without_the_app_is_logged_below_error(
    many: World, caplog: pytest.LogCaptureFixture
) -> None:
    """A removed app's last events and a workspace that never installed it are expected, not an
    on-call page: Bolt's "AuthorizeResult … was not found" and ours are INFO lines."""
    caplog.set_level(logging.INFO)
    many.shop(team_id="T0OTHER")
    lines = [
        r
        for r in caplog.records
        if "T0OTHER" in r.getMessage() or "AuthorizeResult" in r.getMessage()
    ]
    assert lines and {r.levelname for r in lines} == {"INFO"}
    assert not [r for r in caplog.records if r.levelno >= logging.ERROR]


def test_the_installation_is_read_once_per_warm_container(many: World) -> None:
    from bot.handler import cold_start

    install(many)
    rt, _ = cold_start()
    assert rt.oauth is not None
    counter = RequestCounter(rt.oauth[1].store.s3_client)
    many.shop()
    many.run_lazies()
    many.shop(text="tacos")
    many.run_lazies()
    assert counter.take().get("GetObject", 0) <= 1


def test_removing_the_app_deletes_everything_of_that_workspace_and_nothing_else(
    world: World, s3: Any, bucket: str
) -> None:
    """Two workspaces, a basket ordered and one waiting (its timer armed) in each; one removes
    the app (``app_uninstalled``, then Slack's ``tokens_revoked``): its installation, sessions,
    receipts, outcome records, order records and schedules are gone; the other's are all
    there, and it still works."""
    import boto3

    from bot.sandbox.slack_events import event_callback
    from tests.bot_kit import SECRET
    from tests.test_reminders import GROUP, ROLE, TARGET

    scheduler = boto3.client("scheduler", region_name="us-east-1")
    scheduler.create_schedule_group(Name=GROUP)
    world.slack.oauth.register_app(CLIENT_ID, CLIENT_SECRET)
    world.boot(
        SLACK_CLIENT_ID=CLIENT_ID,
        SLACK_CLIENT_SECRET=CLIENT_SECRET,
        SLACK_BOT_TOKEN="",
        TIMER_GROUP=GROUP,
        TIMER_TARGET_ARN=TARGET,
        TIMER_ROLE_ARN=ROLE,
        ORDER_DELAY="0",  # ordered at once: no undo window
    )
    for team in ("T0TEAM", "T0OTHER"):
        install(world, team)
        world.shop(team_id=team)
        world.run_lazies()
        basket = world.baskets()[-1]
        world.click(basket, "approve_basket", user="U0BOB", team_id=team)
        world.run_lazies()
        world.shop(text="tacos", team_id=team)
        world.run_lazies()

    def theirs() -> list[str]:
        return [k for k in objects(s3, bucket) if "T0OTHER" in k]

    def timers() -> list[str]:
        found = scheduler.list_schedules(GroupName=GROUP)["Schedules"]
        inputs = [scheduler.get_schedule(Name=s["Name"], GroupName=GROUP) for s in found]
        return [str(i["Target"]["Input"]) for i in inputs]

    ours = {k: v for k, v in objects(s3, bucket).items() if "T0OTHER" not in k}
    assert theirs() and len(timers()) == 2
    assert any(k.startswith(f"{INSTALLS}{CLIENT_ID}/none-T0OTHER/") for k in theirs())
    assert any(k.startswith("weekly-shop-history/T0OTHER/") for k in theirs())
    assert any(k.startswith("weekly-shop-orders/T0OTHER/") for k in theirs())
    removed = world.send(event_callback(SECRET, {"type": "app_uninstalled"}, team_id="T0OTHER"))
    assert removed["statusCode"] == 200
    world.run_lazies()
    revoked = {"type": "tokens_revoked", "tokens": {"oauth": [], "bot": ["U0BOT"]}}
    world.send(event_callback(SECRET, revoked, team_id="T0OTHER"))
    world.run_lazies()
    assert theirs() == []
    (left,) = timers()
    assert "T0TEAM" in left and "T0OTHER" not in left
    assert {k: v for k, v in objects(s3, bucket).items()} == ours  # the other's, untouched
    world.shop(text="fish", team_id="T0TEAM")  # and it still works
    world.run_lazies()
    assert world.baskets()[-1]["ts"] not in {b["ts"] for b in world.baskets()[:-1]}
    refused = world.shop(team_id="T0OTHER")
    assert "Writing your basket" not in str(refused.get("body"))


def test_a_lost_run_is_said_with_its_own_workspaces_token(many: World) -> None:
    """The lost-lazy-runs queue (bot/steps/lost.py) tells the person with the token of the workspace
    the lost run came from."""
    from bot.sandbox.aws_events import lost_run_record, sqs_event

    install(many)
    many.shop()
    many.run_lazies()
    (basket,) = many.baskets()
    many.click(basket, "approve_basket", user="U0BOB")
    (lost,) = many.lam.take()  # the approve's lazy run, never finished
    assert many.send(sqs_event(lost_run_record(lost.payload))) == {"batchItemFailures": []}
    (said,) = many.slack.thread(CHANNEL, basket["ts"])
    (call,) = [c for c in many.slack.calls_to("chat.postMessage") if c.args.get("thread_ts")]
    tokens = many.slack.oauth.tokens
    assert tokens[str(call.token)] == "T0TEAM" and call.token != "xoxb-test"
    assert "didn't go through — press Approve again" in said["text"]


def test_an_org_wide_install_is_refused_with_a_page_and_keeps_nothing(
    many: World, s3: Any, bucket: str
) -> None:
    """Enterprise Grid can install an app for a whole organization (``is_enterprise_install``,
    no team): weekly-shop is installed one workspace at a time, so the page says so and the
    installation Bolt just saved is deleted."""
    page = many.send(browser_get("/slack/install"))
    state = re.search(r"state=([0-9A-Za-z_.~-]+)", page["body"])[1]  # type: ignore[index]
    cookie = page["headers"]["set-cookie"].split(";")[0]
    code = many.slack.oauth.authorize(CLIENT_ID, "", enterprise_id="E0ORG")
    done = many.send(browser_get("/slack/oauth_redirect", f"code={code}&state={state}", cookie))
    assert done["statusCode"] == 400 and "organization-wide install is not" in done["body"]
    assert not [k for k in objects(s3, bucket) if "/bot" in k or "installer" in k]


def test_a_workspace_in_an_enterprise_grid_org_is_served_and_forgotten_like_any(
    many: World, s3: Any, bucket: str
) -> None:
    """A workspace inside an org (not an org-wide install): its requests name the org too, and
    its installation is kept and found by its team alone, so lazy runs, timers and removal all
    find it."""
    from bot.sandbox.slack_events import event_callback
    from tests.bot_kit import SECRET

    page = many.send(browser_get("/slack/install"))
    state = re.search(r"state=([0-9A-Za-z_.~-]+)", page["body"])[1]  # type: ignore[index]
    cookie = page["headers"]["set-cookie"].split(";")[0]
    code = many.slack.oauth.authorize(CLIENT_ID, "", enterprise_id="E0ORG", org_wide=False)
    done = many.send(browser_get("/slack/oauth_redirect", f"code={code}&state={state}", cookie))
    assert done["statusCode"] == 200, done
    assert any(f"{CLIENT_ID}/none-T0TEAM/bot" in k for k in objects(s3, bucket))
    many.shop(enterprise_id="E0ORG")
    many.run_lazies()
    assert len(many.baskets()) == 1  # the lazy run found the workspace's token
    many.send(event_callback(SECRET, {"type": "app_uninstalled"}, team_id="T0TEAM"))
    many.run_lazies()
    assert not [k for k in objects(s3, bucket) if "T0TEAM" in k]


def test_an_s3_failure_reading_the_installation_is_not_not_installed(many: World) -> None:
    """Bolt's store answers None on any error; ours raises, so a throttled or failing S3 is a
    failure Lambda retries, never "this workspace has no installation" for five minutes."""
    from botocore.exceptions import ClientError

    from bot.handler import cold_start
    from workflow.errors import StoreError

    install(many)
    rt, _ = cold_start()
    assert rt.oauth is not None
    by_workspace = rt.oauth[1]
    by_workspace.forget(None, "T0TEAM")
    client = by_workspace.store.s3_client

    def fail(**_: Any) -> None:
        raise ClientError({"Error": {"Code": "SlowDown", "Message": "slow"}}, "GetObject")

    client.meta.events.register_first("before-call.s3.GetObject", fail)
    try:
        with pytest.raises(StoreError):
            by_workspace.bot(None, "T0TEAM")
    finally:
        client.meta.events.unregister("before-call.s3.GetObject", fail)
    assert by_workspace.bot(None, "T0TEAM") is not None  # nothing wrong was cached


def test_a_late_removal_does_not_remove_a_newer_installation(
    many: World, s3: Any, bucket: str
) -> None:
    """Lambda retries a removal that failed a minute or two later; if the workspace installed
    the app again in between, the retry (an older event_time) keeps the new installation."""
    import time

    from bot.sandbox.slack_events import event_callback
    from tests.bot_kit import SECRET

    install(many)
    said = int(time.time()) - 120  # said two minutes before this install
    many.send(
        event_callback(SECRET, {"type": "app_uninstalled"}, team_id="T0TEAM", event_time=said)
    )
    many.run_lazies()
    assert any(f"{CLIENT_ID}/none-T0TEAM/bot" in k for k in objects(s3, bucket))


def test_a_removal_lambda_gave_up_on_is_done_by_the_lost_runs_queue(
    many: World, s3: Any, bucket: str
) -> None:
    from bot.sandbox.aws_events import lost_run_record, sqs_event
    from bot.sandbox.slack_events import event_callback
    from tests.bot_kit import SECRET

    install(many)
    many.shop()
    many.run_lazies()
    many.send(event_callback(SECRET, {"type": "app_uninstalled"}, team_id="T0TEAM"))
    (lost,) = many.lam.take()  # the removal's lazy run, which failed every retry
    assert [k for k in objects(s3, bucket) if "T0TEAM" in k]
    assert many.send(sqs_event(lost_run_record(lost.payload))) == {"batchItemFailures": []}
    assert not [k for k in objects(s3, bucket) if "T0TEAM" in k]
