"""Faults in the services around the bot: S3, the Messages API, the Slack Web API.

Each fault ends the same way: nothing lost (the basket is still there and answerable), no order
placed twice, no lock left held once its lease passes, and the session's checkpoint chain intact.
S3 errors come from the wire (``tests.fault_kit.S3Faults``), so botocore's standard retries see
them as they would see real ones; the Messages API and Slack errors come from their fakes.
"""

from __future__ import annotations

import time
from typing import Any

import pytest

import bot.handler
from bot.handler import cold_start
from bot.runtime import Runtime
from bot.sandbox.anthropic_api import Reply
from bot.settings import Settings
from bot.slack.outcome import STORE_DOWN
from bot.steps.click_said import BUSY, OWN_CLICK
from tests.bot_kit import CHANNEL, World, change, context_text, objects, start_basket
from tests.fault_kit import (
    S3Faults,
    assert_chain_intact,
    ephemeral_texts,
    listener_failures,
    lock_keys,
    op,
    session_of,
    thread_texts,
)

ORDERED = "Ordered 10 items."
NOT_SAVED = "the basket could not be saved. The buttons above still work."


def approve(world: World, basket: dict[str, Any], user: str = "U0BOB") -> None:
    with listener_failures() as failures:
        world.click(basket, "approve_basket", user=user)
        world.run_lazies()
    assert failures == []


def recovered(world: World, s3: Any, bucket: str, basket: dict[str, Any]) -> None:
    """With the faults gone: chain intact, no lock, and the same buttons order exactly once."""
    assert lock_keys(s3, bucket) == []
    assert_chain_intact(s3, bucket, session_of(world, basket))
    approve(world, world.baskets()[0])
    assert thread_texts(world, basket).count(ORDERED) == 1
    assert thread_texts(world, basket)[-1] == ORDERED
    assert "Approved by <@U0BOB>" in context_text(world.baskets()[0])
    assert lock_keys(s3, bucket) == []
    assert_chain_intact(s3, bucket, session_of(world, basket))


# ---------------------------------------------------------------- S3: 500 and 503 SlowDown

EVERY_CALL_OF_AN_APPROVE = {
    "take the lock": op("PutObject", "/lock"),
    "find the latest checkpoint": op("ListObjectsV2", "/cp/"),
    "read it": op("GetObject", "/cp/"),
    "write the next one": op("PutObject", "/cp/"),
    "release the lock": op("DeleteObject", "/lock"),
}


@pytest.mark.parametrize(
    "status, code", [(500, "InternalError"), (503, "SlowDown"), (503, "ServiceUnavailable")]
)
def test_transient_s3_errors_are_retried_and_the_click_orders_once(
    world: World, s3: Any, bucket: str, faults: S3Faults, status: int, code: str
) -> None:
    basket = start_basket(world)
    injected = [faults.add(m, status, code, times=2) for m in EVERY_CALL_OF_AN_APPROVE.values()]
    approve(world, basket)
    assert [f.hits for f in injected] == [2] * len(injected)  # each failed twice on the wire
    assert thread_texts(world, basket) == [ORDERED]
    assert "Approved by <@U0BOB>" in context_text(world.baskets()[0])
    faults.clear()
    assert lock_keys(s3, bucket) == []
    assert_chain_intact(s3, bucket, session_of(world, basket))


@pytest.mark.parametrize(
    "step, expected",
    [
        ("take the lock", STORE_DOWN),
        ("find the latest checkpoint", STORE_DOWN),
        ("read it", STORE_DOWN),
        ("write the next one", f"<@U0BOB> Nothing changed: {NOT_SAVED}"),
    ],
)
def test_a_persistent_s3_error_is_reported_and_loses_nothing(
    world: World, s3: Any, bucket: str, faults: S3Faults, step: str, expected: str
) -> None:
    basket = start_basket(world)
    before = objects(s3, bucket)
    fault = faults.add(EVERY_CALL_OF_AN_APPROVE[step], 503, "SlowDown", times=1000)
    approve(world, basket)
    assert fault.hits == 6  # botocore's first try and its five retries (max_attempts=5)
    assert thread_texts(world, basket) == [expected]
    assert world.buttons(world.baskets()[0])  # still waiting, buttons and all
    faults.clear()
    assert objects(s3, bucket) == before
    recovered(world, s3, bucket, basket)


def _past_the_lease(world: World, s3: Any) -> None:
    """A cold start whose clock is past every lease taken so far (LOCK_TTL_SECONDS is 60)."""
    cold_start(
        Runtime.from_settings(Settings.from_env(), s3_client=s3, clock=lambda: time.time() + 120)
    )


def test_a_lock_that_could_not_be_released_expires_and_the_next_click_takes_over(
    world: World, s3: Any, bucket: str, faults: S3Faults
) -> None:
    basket = start_basket(world)
    faults.add(op("DeleteObject", "/lock"), 503, "SlowDown", times=1000)
    approve(world, basket)
    assert thread_texts(world, basket)[0] == ORDERED  # the answer went through
    assert "Approved by <@U0BOB>" in context_text(world.baskets()[0])
    faults.clear()
    assert len(lock_keys(s3, bucket)) == 1  # left behind, with its lease still running
    approve(world, basket, user="U0CAROL")
    assert ephemeral_texts(world, "U0CAROL") == [BUSY]
    _past_the_lease(world, s3)
    approve(world, basket, user="U0DAVE")  # takes the expired lease over, finds it answered
    assert ephemeral_texts(world, "U0DAVE") == ["This basket was already answered by <@U0BOB>."]
    assert lock_keys(s3, bucket) == []
    assert thread_texts(world, basket).count(ORDERED) == 1
    assert_chain_intact(s3, bucket, session_of(world, basket))


def test_a_failed_lock_release_after_an_order_does_not_say_nothing_changed(
    world: World, s3: Any, bucket: str, faults: S3Faults
) -> None:
    basket = start_basket(world)
    faults.add(op("DeleteObject", "/lock"), 503, "SlowDown", times=1000)
    approve(world, basket)
    assert thread_texts(world, basket) == [ORDERED]


def test_a_checkpoint_written_but_answered_500_is_still_a_success(
    world: World, s3: Any, bucket: str, faults: S3Faults
) -> None:
    """S3 applied the write and lost the answer: botocore's retry meets its own first attempt
    (412); the store sees the object is its own record, so the click orders, once."""
    basket = start_basket(world)
    faults.add(op("PutObject", "/cp/"), 500, "InternalError", applied=True)
    approve(world, basket)
    faults.clear()
    assert thread_texts(world, basket) == [ORDERED]
    assert "Approved by <@U0BOB>" in context_text(world.baskets()[0])
    assert lock_keys(s3, bucket) == []
    assert_chain_intact(s3, bucket, session_of(world, basket))
    approve(world, basket, user="U0DAVE")
    assert ephemeral_texts(world, "U0DAVE") == ["This basket was already answered by <@U0BOB>."]
    assert thread_texts(world, basket).count(ORDERED) == 1


def test_a_lock_taken_but_answered_503_is_still_ours(
    world: World, s3: Any, bucket: str, faults: S3Faults
) -> None:
    """The lock PUT was applied and its answer lost: the retry finds the lease this very attempt
    wrote, takes it as its own, and the click orders once."""
    basket = start_basket(world)
    faults.add(op("PutObject", "/lock"), 503, "SlowDown", applied=True)
    approve(world, basket)
    faults.clear()
    assert thread_texts(world, basket) == [ORDERED]
    assert ephemeral_texts(world, "U0BOB") == []
    assert lock_keys(s3, bucket) == []
    assert_chain_intact(s3, bucket, session_of(world, basket))


def test_a_start_while_s3_is_down_says_so_and_leaves_nothing(
    world: World, s3: Any, bucket: str, faults: S3Faults
) -> None:
    faults.add(lambda operation, request: True, 503, "SlowDown", times=1000)
    world.shop()
    world.run_lazies()
    assert [m["text"] for m in world.slack.messages(CHANNEL)] == [
        "I couldn't start a basket just now. Try /shop again."
    ]
    faults.clear()
    assert objects(s3, bucket) == {}
    start_basket(world)


# ---------------------------------------------------------------- S3: 409 on a conditional write


def test_a_409_on_the_checkpoint_write_is_retried_by_the_store(
    world: World, s3: Any, bucket: str, faults: S3Faults
) -> None:
    basket = start_basket(world)
    fault = faults.add(
        op("PutObject", "/cp/", conditional="If-None-Match"), 409, "ConditionalRequestConflict", 2
    )
    approve(world, basket)
    assert fault.hits == 2  # botocore does not retry a 409; S3CheckpointStore.create does
    assert thread_texts(world, basket) == [ORDERED]
    faults.clear()
    assert lock_keys(s3, bucket) == []
    assert_chain_intact(s3, bucket, session_of(world, basket))


def test_a_409_that_never_clears_fails_the_save_and_loses_nothing(
    world: World, s3: Any, bucket: str, faults: S3Faults
) -> None:
    basket = start_basket(world)
    before = objects(s3, bucket)
    fault = faults.add(
        op("PutObject", "/cp/", conditional="If-None-Match"), 409, "ConditionalRequestConflict", 99
    )
    approve(world, basket)
    assert fault.hits == 4  # the first try and the store's three retries
    assert thread_texts(world, basket) == [f"<@U0BOB> Nothing changed: {NOT_SAVED}"]
    faults.clear()
    assert objects(s3, bucket) == before
    recovered(world, s3, bucket, basket)


def test_a_409_on_the_lock_is_tried_again_and_the_answer_goes_through(
    world: World, s3: Any, bucket: str, faults: S3Faults
) -> None:
    """S3 answers 409 ConditionalRequestConflict to a conditional write racing another one on
    the same key ("retry it", the S3 docs say): the turn waits and takes the lock again."""
    basket = start_basket(world)
    faults.add(
        op("PutObject", "/lock", conditional="If-None-Match"), 409, "ConditionalRequestConflict"
    )
    approve(world, basket)
    assert ephemeral_texts(world, "U0BOB") == []
    assert thread_texts(world, basket) == [ORDERED]
    assert lock_keys(s3, bucket) == []


def test_a_409_on_every_try_for_longer_than_the_wait_is_someone_else_answering(
    world: World, s3: Any, bucket: str, faults: S3Faults
) -> None:
    world.boot(LOCK_WAIT_SECONDS="1")
    basket = start_basket(world)
    before = objects(s3, bucket)
    faults.add(
        op("PutObject", "/lock", conditional="If-None-Match"),
        409,
        "ConditionalRequestConflict",
        times=1000,
    )
    approve(world, basket)
    assert ephemeral_texts(world, "U0BOB") == [BUSY]
    assert objects(s3, bucket) == before
    faults.clear()
    recovered(world, s3, bucket, basket)


# ---------------------------------------------------------------- the Messages API

UNAVAILABLE_START = (
    "<@U0ALICE> No basket this time: the shopper is unavailable right now. Try /shop again."
)
UNAVAILABLE_CHANGE = (
    "<@U0BOB> Nothing changed: the shopper is unavailable right now. The buttons above still work."
)


def _short_model_timeout(seconds: float) -> None:
    runtime = bot.handler._runtime
    assert runtime is not None
    # ANTHROPIC_TIMEOUT_SECONDS, as if set at cold start: so the runtimes built from the cold
    # start's for a workspace and its settings (``Runtime.configured``) are built again
    runtime.settings = runtime.settings.replace(anthropic_timeout_seconds=seconds)
    runtime._configured.clear()
    runtime._workspaces.clear()


# A timed-out attempt never answers in time (3 s against a 1 s timeout), while an answer that
# comes takes milliseconds here: a 1 s timeout leaves the attempt meant to succeed a margin of
# hundreds of times, so a busy machine cannot turn it into a fourth timeout.
MODEL_TIMEOUT = 1.0
NEVER_IN_TIME = 3 * MODEL_TIMEOUT


def _failing(kind: str, times: int) -> list[Reply]:
    if kind == "timeout":
        _short_model_timeout(MODEL_TIMEOUT)
        return [Reply(delay=NEVER_IN_TIME)] * times
    return [Reply(status=int(kind))] * times


@pytest.mark.parametrize("kind", ["429", "529", "500", "timeout"])
def test_a_transient_model_error_is_retried_and_the_basket_is_posted(
    world: World, kind: str
) -> None:
    world.claude.script(*_failing(kind, 2))
    with listener_failures() as failures:
        start_basket(world)
    assert failures == []
    assert world.claude.message_calls == 3  # the SDK's two retries
    assert world.slack.violations == []


@pytest.mark.parametrize("kind", ["429", "529", "timeout"])
def test_a_model_that_stays_unavailable_is_reported_on_start(
    world: World, s3: Any, bucket: str, kind: str
) -> None:
    world.claude.script(*_failing(kind, 3))
    world.shop()
    world.run_lazies()
    assert world.slack.messages(CHANNEL)[-1]["text"] == UNAVAILABLE_START
    assert world.baskets() == []
    assert not [k for k in objects(s3, bucket) if "/cp/" in k or k.endswith("/lock")]
    start_basket(world)  # /shop again works


@pytest.mark.parametrize("kind", ["429", "529", "timeout"])
def test_a_model_that_stays_unavailable_during_a_change_keeps_the_basket(
    world: World, s3: Any, bucket: str, kind: str
) -> None:
    basket = start_basket(world)
    before = objects(s3, bucket)
    world.claude.script(*_failing(kind, 3))
    change(world, basket, "no pizza")
    assert thread_texts(world, basket) == [UNAVAILABLE_CHANGE]
    assert len(world.baskets()) == 1 and world.buttons(world.baskets()[0])
    # No checkpoint and no lock changed; the one new object records the change's draft message
    # (bot.records.drafts), which now says no basket came of it.
    assert {k: v for k, v in objects(s3, bucket).items() if "/draft_" not in k} == before
    assert world.drafts() == []
    recovered(world, s3, bucket, basket)


# ---------------------------------------------------------------- the Slack Web API


def test_a_rate_limited_basket_post_is_retried_and_posted_once(world: World) -> None:
    world.slack.fail_next("chat.postMessage", status=429, retry_after=0, times=2)
    start_basket(world)  # exactly one basket in the channel
    posts = world.slack.calls_to("chat.postMessage")
    assert [c.error for c in posts] == ["ratelimited", "ratelimited", None]


def test_rate_limited_answers_are_retried_and_arrive_once(
    world: World, s3: Any, bucket: str
) -> None:
    basket = start_basket(world)
    shown = len(world.slack.calls_to("chat.update"))  # the start's: its draft, then the basket
    world.slack.fail_next("chat.update", status=429, retry_after=0)
    world.slack.fail_next("chat.postMessage", status=429, retry_after=0)
    approve(world, basket)
    assert thread_texts(world, basket) == [ORDERED]
    assert [c.error for c in world.slack.calls_to("chat.update")[shown:]] == ["ratelimited", None]
    assert "Approved by <@U0BOB>" in context_text(world.baskets()[0])
    assert lock_keys(s3, bucket) == []


def test_a_rate_limited_ephemeral_is_retried(world: World, s3: Any, bucket: str) -> None:
    basket = start_basket(world)
    approve(world, basket)
    world.slack.fail_next("chat.postEphemeral", status=429, retry_after=0)
    approve(world, basket, user="U0CAROL")
    assert ephemeral_texts(world, "U0CAROL") == ["This basket was already answered by <@U0BOB>."]


def test_a_basket_slack_never_took_is_posted_by_the_redelivery(
    world: World, s3: Any, bucket: str
) -> None:
    """Slack refused the post through every retry: the checkpoint is kept, and the start's
    redelivery (Lambda's retry of the invocation) posts the basket once. (Six refusals: the
    draft's post and then the basket's, each through slack_sdk's retries.)"""
    world.slack.fail_next("chat.postMessage", status=429, retry_after=0, times=6)
    world.shop()
    (lazy,) = world.lam.take()
    world.send(lazy.payload)
    assert world.baskets() == []
    assert [k for k in objects(s3, bucket) if "/cp/" in k]  # nothing lost
    world.send(lazy.payload)
    (basket,) = world.baskets()
    assert lock_keys(s3, bucket) == []
    approve(world, basket)
    assert thread_texts(world, basket) == [ORDERED]


def test_a_second_click_by_the_same_person_is_told_it_is_their_own(
    world: World, s3: Any, bucket: str, faults: S3Faults
) -> None:
    """A double click: the lock still held by Bob's first click (here: one whose release S3
    refused, so its lease runs on) tells Bob it is his own earlier click, and anyone else that
    someone else is answering (issue 20). The lock's owner is "<clicker>:<run>:<nonce>"."""
    basket = start_basket(world)
    faults.add(op("DeleteObject", "/lock"), 503, "SlowDown", times=1000)
    approve(world, basket)
    faults.clear()
    approve(world, basket)
    assert ephemeral_texts(world, "U0BOB") == [OWN_CLICK]
    approve(world, basket, user="U0CAROL")
    assert ephemeral_texts(world, "U0CAROL") == [BUSY]
