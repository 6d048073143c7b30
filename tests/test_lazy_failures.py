"""No failure is swallowed: every lazy run ends done (the person told, when it could not be
done), or raised out of the Lambda handler, so that Lambda retries it.

Lambda's asynchronous invocation (docs.aws.amazon.com, "How Lambda handles errors and retries
with asynchronous invocation"): an invocation that raises is retried, up to twice; one that
*returns*, whatever it returns (a ``{"statusCode": 500}`` included), is a success and is never
retried. After the last attempt the on-failure destination (the lost-runs queue, ``bot.steps.lost``)
gets the invocation record. bolt-python's lazy runner catches what a lazy function raises and
only logs "Failed to run an internal function"; ``bot.listeners.lambda_adapter.LazyRunner``
keeps it for the handler to raise instead. Each trigger below meets one S3 failure that
botocore's own retries did not absorb (raised from a botocore event hook, so no retry of
botocore's sees it), played through :func:`bot.sandbox.lambda_async.invoke_async`, which the
tests, the sandbox and the bench all deliver lazy runs with.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any

import pytest
from botocore.exceptions import ClientError

from bot.sandbox.lambda_async import invoke_async
from bot.sandbox.slack_events import event_callback
from tests.bot_kit import CHANNEL, SECRET, World, objects, start_basket
from tests.fault_kit import ephemeral_texts, thread_texts
from tests.test_home import REPEAT, buttons, ordered, texts
from tests.test_installs import CLIENT_ID, CLIENT_SECRET, install
from tests.test_reminders import fire, the_timer, timed

__all__ = ["timed"]  # a fixture, used by name


def s3_client(installs: bool = False) -> Any:
    """The bot's own S3 client (the cold start's), or its installation store's."""
    from bot.handler import cold_start

    rt = cold_start()[0]
    if installs:
        assert rt.oauth is not None
        return rt.oauth[1].store.s3_client
    return rt.aws.s3()


@contextmanager
def s3_fails(
    operation: str, times: int = 1, when: Callable[[dict[str, Any]], bool] = lambda p: True
) -> Iterator[list[str]]:
    """The next ``times`` calls of ``operation`` whose parameters match ``when`` fail with
    ``SlowDown`` (S3's 503, after botocore's retries gave up); the keys it failed, yielded."""
    failed: list[str] = []

    def fail(params: dict[str, Any], **_: Any) -> None:
        if len(failed) < times and when(params):
            failed.append(str(params.get("Key") or params.get("Prefix") or ""))
            raise ClientError({"Error": {"Code": "SlowDown", "Message": "slow"}}, operation)

    client = s3_client(installs=when is installation)
    event = f"before-parameter-build.s3.{operation}"
    client.meta.events.register_first(event, fail)
    try:
        yield failed
    finally:
        client.meta.events.unregister(event, fail)


def installation(params: dict[str, Any]) -> bool:
    return "bot-latest" in str(params.get("Key"))


@pytest.fixture
def many(world: World) -> World:
    """Many workspaces, T0TEAM installed; every lazy run reads the installation afresh (a
    container whose cache is cold, as a new one is)."""
    world.slack.oauth.register_app(CLIENT_ID, CLIENT_SECRET)
    world.boot(SLACK_CLIENT_ID=CLIENT_ID, SLACK_CLIENT_SECRET=CLIENT_SECRET, SLACK_BOT_TOKEN="")
    install(world)
    return world


def cold_cache() -> None:
    from bot.handler import cold_start

    oauth = cold_start()[0].oauth
    assert oauth is not None
    oauth[1].forget(None, "T0TEAM")


def test_lambda_retries_what_raises_and_never_what_returns(world: World) -> None:
    """The player itself: a 500 returned is a success (one attempt); a raise is tried three
    times in all, then its record goes to the lost-runs queue as one SQS record."""
    sent: list[dict[str, Any]] = []

    def returns_500(event: dict[str, Any]) -> dict[str, Any]:
        sent.append(event)
        return {"statusCode": 500}

    run = invoke_async(returns_500, {"n": 1})
    assert run.errors == [""] and run.response == {"statusCode": 500} and len(sent) == 1

    def raises(event: dict[str, Any]) -> dict[str, Any]:
        sent.append(event)
        if "Records" in event:
            return {"batchItemFailures": []}
        raise RuntimeError("boom")

    sent.clear()
    run = invoke_async(raises, {"n": 2})
    assert run.errors == ["RuntimeError"] * 3 and run.lost == {"batchItemFailures": []}
    assert [e.get("n") for e in sent[:3]] == [2, 2, 2]
    (record,) = sent[3]["Records"]
    assert '"condition": "RetriesExhausted"' in record["body"]


def test_a_start_whose_installation_read_fails_is_retried_and_posts_one_basket(
    many: World,
) -> None:
    """Bolt answers a lazy run whose ``authorize`` raised with 500, inside an invocation that
    returned: before, nothing was retried and nobody heard of it."""
    many.shop()
    cold_cache()
    with s3_fails("GetObject", when=installation) as failed:
        (run,) = many.run_async()
    assert failed and run.errors == ["LazyRunFailed", ""]
    assert len(many.baskets()) == 1


def test_an_approve_failing_every_attempt_is_told_by_the_lost_runs_queue(
    many: World, s3: Any, bucket: str
) -> None:
    basket = start_basket(many)
    many.click(basket, "approve_basket")
    before = objects(s3, bucket)
    cold_cache()
    with s3_fails("GetObject", times=3, when=installation):
        (run,) = many.run_async()
    assert run.errors == ["LazyRunFailed"] * 3 and run.lost == {"batchItemFailures": []}
    assert {k: v for k, v in objects(s3, bucket).items() if "/lost/" not in k} == before
    assert thread_texts(many, basket) == [
        "<@U0BOB> Your approval of basket 1 didn't go through — press Approve again."
    ]
    many.click(many.baskets()[0], "approve_basket")  # and pressing again orders it
    many.run_lazies()
    assert thread_texts(many, basket)[-1] == "Ordered 10 items."


def test_a_change_whose_installation_read_fails_once_is_retried(many: World) -> None:
    basket = start_basket(many)
    many.click(basket, "change_basket")
    many.submit_change("no pizza")
    cold_cache()
    with s3_fails("GetObject", when=installation):
        (run,) = many.run_async()
    assert run.errors == ["LazyRunFailed", ""]
    assert len(many.baskets()) == 2


def test_a_reminder_or_expiry_whose_session_read_fails_is_retried(timed: World) -> None:
    """A timer is an asynchronous invocation too (Scheduler invokes a Lambda target
    asynchronously): its failure raises, and Lambda's retry does it once."""
    basket = start_basket(timed)

    def fire_failing_once(payload: dict[str, Any]) -> list[str]:
        with s3_fails("ListObjectsV2"):
            return invoke_async(lambda event: fire(timed, event), payload).errors

    first, _ = the_timer()
    assert fire_failing_once(first) == ["TryLater", ""]
    assert len(thread_texts(timed, basket)) == 1
    fire(timed, the_timer()[0])  # the second reminder
    expiry, timer = the_timer()
    assert timer["kind"] == "expire"
    assert fire_failing_once(expiry) == ["TryLater", ""]
    assert thread_texts(timed, basket)[-1] == "No order placed: nobody answered in time"
    assert len(thread_texts(timed, basket)) == 3


def test_a_removal_whose_delete_fails_once_is_retried_and_deletes_everything(
    many: World, s3: Any, bucket: str
) -> None:
    """The issue's reproduction: ``DeleteObjects`` answers ``SlowDown`` once; before, the
    invocation returned normally and the workspace's data stayed."""
    start_basket(many)
    assert [k for k in objects(s3, bucket) if "T0TEAM" in k]
    many.send(event_callback(SECRET, {"type": "app_uninstalled"}, team_id="T0TEAM"))
    with s3_fails("DeleteObjects") as failed:
        (run,) = many.run_async()
    assert failed and run.errors == ["LazyRunFailed", ""]
    assert not [k for k in objects(s3, bucket) if "T0TEAM" in k]


def test_a_home_tab_whose_installation_read_fails_once_is_published_by_the_retry(
    many: World,
) -> None:
    from bot.sandbox.slack_events import app_home_opened

    many.send(app_home_opened(SECRET, "U0ALICE"))
    cold_cache()
    with s3_fails("GetObject", when=installation):
        (run,) = many.run_async()
    assert run.errors == ["LazyRunFailed", ""]
    assert many.slack.home("U0ALICE") is not None


def test_a_repeat_whose_store_read_fails_once_is_retried_and_starts_one_basket(
    world: World,
) -> None:
    ordered(world)
    view = world.open_home("U0ALICE")
    (repeat,) = [b for b in buttons(view) if b["action_id"] == REPEAT]
    from bot.sandbox.slack_events import home_action

    world.send(home_action(SECRET, action_id=REPEAT, value=repeat["value"], user_id="U0ALICE"))
    with s3_fails("ListObjectsV2") as failed:
        (run,) = world.run_async()
    assert failed and run.errors == ["LazyRunFailed", ""]
    assert len(world.baskets()) == 2
    assert f"Posted the same order again in <#{CHANNEL}>." in texts(world.slack.home("U0ALICE"))
    assert ephemeral_texts(world) == []


def test_a_removal_whose_hand_off_failed_is_done_by_slacks_retry(
    many: World, s3: Any, bucket: str
) -> None:
    """Slack retries an Events API delivery that got no 2xx within 3 s, at once, after about a
    minute and after about 5 minutes, with ``X-Slack-Retry-Num`` and ``X-Slack-Retry-Reason``
    (docs.slack.dev, Events API, "Responding to events"), and an app that receives over 1,000
    events an hour and acknowledges fewer than 5% of them within 60 minutes has its event
    subscriptions temporarily turned off ("Failure limits"). So the first delivery still acks
    within 3 s and hands off (here its Lambda Invoke fails: Bolt answers 500), and the retry,
    the only delivery that can now succeed, is handled like it, not dropped."""
    start_basket(many)
    removal = {"type": "app_uninstalled"}
    first = event_callback(SECRET, removal, team_id="T0TEAM", event_id="Ev0REMOVED")
    many.lam.fail_next(status=503, error_type="ServiceException", times=3)  # botocore: 3 tries
    assert many.send(first)["statusCode"] == 500
    assert many.lam.failed_attempts == 3 and many.lam.take() == []
    assert [k for k in objects(s3, bucket) if "T0TEAM" in k]  # nothing ran
    retry = event_callback(
        SECRET,
        removal,
        team_id="T0TEAM",
        event_id="Ev0REMOVED",
        retry_num=1,
        retry_reason="http_error",
    )
    ack = many.send(retry)
    assert ack["statusCode"] == 200 and not ack.get("body")
    many.run_lazies()
    assert not [k for k in objects(s3, bucket) if "T0TEAM" in k]
    again = event_callback(SECRET, removal, team_id="T0TEAM", event_id="Ev0REMOVED", retry_num=2)
    assert many.send(again)["statusCode"] == 200  # a late retry: done already, safe to repeat
    assert [run.errors for run in many.run_async()] == [[""]]


def test_a_late_removal_keeps_the_new_installation_and_deletes_what_is_older(
    many: World, s3: Any, bucket: str
) -> None:
    """A removal retried after the workspace installed the app again (Lambda's retries come
    about 1 and 3 minutes later, Slack's up to 5 minutes later) keeps the new installation and
    what was written since, and deletes what the old installation left: the new Home tab
    never shows the old baskets."""
    import time

    old = start_basket(many)
    time.sleep(1.1)
    said = int(time.time())  # the app removed now; the removal's work arrives late
    time.sleep(2.1)
    install(many)  # installed again, a second or more after the removal was said
    many.shop(text="fish on Friday")
    many.run_lazies()
    new = many.baskets()[-1]
    kept = {k for k in objects(s3, bucket) if "T0TEAM" in k and "/s/" in k}
    old_session = json.loads(many.buttons(old)["approve_basket"])["s"]
    new_session = json.loads(many.buttons(new)["approve_basket"])["s"]
    assert any(old_session in k for k in kept) and any(new_session in k for k in kept)
    many.send(
        event_callback(SECRET, {"type": "app_uninstalled"}, team_id="T0TEAM", event_time=said)
    )
    many.run_lazies()
    left = {k for k in objects(s3, bucket) if "T0TEAM" in k}
    assert not any(old_session in k for k in left)
    assert any(new_session in k for k in left)
    assert any(f"{CLIENT_ID}/none-T0TEAM/bot" in k for k in left)  # the new installation
    view = many.open_home("U0ALICE")
    assert texts(view).count("*Basket 1 of 3* for <@U0ALICE>") == 1  # the new one alone


def test_a_home_tab_slack_would_not_publish_is_retried(world: World) -> None:
    """slack_sdk retries a 429 and a dropped connection, not a 500 (its retry handlers here:
    ``bot.runtime``); a publish Slack refused raises, and Lambda's retry publishes it."""
    from bot.sandbox.slack_events import app_home_opened

    world.slack.fail_next("views.publish", status=500)
    world.send(app_home_opened(SECRET, "U0ALICE"))
    (run,) = world.run_async()
    assert run.errors == ["LazyRunFailed", ""]
    assert world.slack.home("U0ALICE") is not None
