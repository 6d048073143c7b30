"""What a real deployment needs: stale and concurrent clicks, who may answer, foreign teams,
signatures, retries, injection, failures. Each refusal changes no S3 object and leaves no lock."""

from __future__ import annotations

import threading
import time
from typing import Any

import pytest

from bot.listeners.lambda_adapter import LazyRunFailed
from bot.sandbox.anthropic_api import Reply
from bot.sandbox.lambda_async import invoke_async
from bot.sandbox.slack_requests import slash_command, with_bad_signature
from bot.slack.blocks import START_AGAIN
from bot.slack.outcome import BROKEN
from tests.bot_kit import (
    CHANNEL,
    SECRET,
    World,
    change,
    context_text,
    header,
    objects,
    section_text,
    start_basket,
)
from workflow.persistence.s3_lock import S3SessionLock
from workflow.shop.records import SHOP_PREFIX


def ephemeral_texts(world: World, user: str) -> list[str]:
    return [e["text"] for e in world.slack.ephemerals(user)]


def test_a_second_click_after_a_decision_changes_nothing(
    world: World, s3: Any, bucket: str
) -> None:
    basket = start_basket(world)
    world.click(basket, "approve_basket")
    world.run_lazies()
    before = objects(s3, bucket)
    world.click(basket, "reject_basket", user="U0CAROL")
    world.run_lazies()
    assert ephemeral_texts(world, "U0CAROL") == ["This basket was already answered by <@U0BOB>."]
    assert objects(s3, bucket) == before
    assert len(world.slack.thread(CHANNEL, basket["ts"])) == 1


def test_a_stale_button_on_an_older_basket_changes_nothing(
    world: World, s3: Any, bucket: str
) -> None:
    basket = start_basket(world)
    stale_value = world.buttons(basket)["approve_basket"]
    change(world, basket, "no pizza")
    before = objects(s3, bucket)
    world.click(basket, "approve_basket", user="U0CAROL", value=stale_value)
    world.run_lazies()
    assert ephemeral_texts(world, "U0CAROL") == ["This basket was already answered by <@U0BOB>."]
    assert objects(s3, bucket) == before
    assert [header(b) for b in world.baskets()] == ["Basket 1 of 3", "Basket 2 of 3"]


def test_a_click_while_someone_holds_the_lock_is_told_and_changes_nothing(
    world: World, s3: Any, bucket: str
) -> None:
    basket = start_basket(world)
    ref = world.buttons(basket)["approve_basket"]
    session = __import__("json").loads(ref)["s"]
    lock = S3SessionLock(bucket, SHOP_PREFIX, s3_client=s3)
    lease = lock.acquire("T0TEAM", session, "someone-else", 60)
    before = objects(s3, bucket)
    world.click(basket, "approve_basket")
    world.run_lazies()
    assert ephemeral_texts(world, "U0BOB") == ["Someone else is answering this basket right now."]
    assert objects(s3, bucket) == before
    lock.release(lease)


def test_concurrent_clicks_resume_exactly_once(world: World, s3: Any, bucket: str) -> None:
    basket = start_basket(world)
    users = [f"U0CLICK{i}" for i in range(6)]
    world.slack.join(CHANNEL, *users)  # Slack tells only channel members (user_not_in_channel)
    for user in users:
        world.click(basket, "approve_basket", user=user)
    lazies = world.lam.take()
    barrier = threading.Barrier(len(lazies))

    def deliver(payload: dict[str, Any]) -> None:
        barrier.wait()
        world.send(payload)

    threads = [threading.Thread(target=deliver, args=(i.payload,)) for i in lazies]
    for t in threads:
        t.start()
    for t in threads:
        t.join(timeout=60)
    assert [m["text"] for m in world.slack.thread(CHANNEL, basket["ts"])] == ["Ordered 10 items."]
    told = [e["text"] for e in world.slack.ephemerals()]
    assert len(told) == len(users) - 1
    assert all(t.startswith(("Someone else is answering", "This basket was already")) for t in told)
    assert not [k for k in objects(s3, bucket) if k.endswith("/lock")]


def test_only_approvers_may_answer(world: World, s3: Any, bucket: str) -> None:
    world.boot(APPROVER_IDS="U0CAROL, U0DAVE")
    basket = start_basket(world)
    before = objects(s3, bucket)
    world.click(basket, "approve_basket", user="U0BOB")
    # Who may answer is the workspace's settings, which the ack path does not read (no S3
    # there): the change form opens, and its submission is refused in the lazy run.
    world.click(basket, "change_basket", user="U0BOB")
    world.submit_change("no pizza", user="U0BOB")
    world.run_lazies()
    assert (
        ephemeral_texts(world, "U0BOB")
        == ["Only <@U0CAROL>, <@U0DAVE> can answer baskets here."] * 2
    )
    assert objects(s3, bucket) == before
    world.click(basket, "approve_basket", user="U0DAVE")
    world.run_lazies()
    assert "Approved by <@U0DAVE>" in context_text(world.baskets()[0])


def test_no_self_approval(world: World, s3: Any, bucket: str) -> None:
    world.boot(NO_SELF_APPROVAL="true")
    basket = start_basket(world)  # asked by U0ALICE
    before = objects(s3, bucket)
    world.click(basket, "approve_basket", user="U0ALICE")
    world.run_lazies()
    assert ephemeral_texts(world, "U0ALICE") == [
        "You asked for this basket, so someone else has to approve it."
    ]
    assert objects(s3, bucket) == before
    assert not [k for k in objects(s3, bucket) if k.endswith("/lock")]
    world.click(basket, "reject_basket", user="U0ALICE")  # rejecting your own is fine
    world.run_lazies()
    assert "Rejected by <@U0ALICE>" in context_text(world.baskets()[0])


def test_a_click_from_another_team_finds_nothing(world: World, s3: Any, bucket: str) -> None:
    basket = start_basket(world)
    before = objects(s3, bucket)
    world.click(basket, "approve_basket", team_id="T0OTHER")
    world.run_lazies()
    assert ephemeral_texts(world, "U0BOB") == ["This basket is no longer waiting for an answer."]
    assert objects(s3, bucket) == before


@pytest.mark.parametrize("tamper", ["signature", "old timestamp"])
def test_bad_signatures_get_401_and_touch_nothing(
    world: World, s3: Any, bucket: str, tamper: str
) -> None:
    before = objects(s3, bucket)
    if tamper == "signature":
        event = with_bad_signature(slash_command(SECRET, text="dinners"))
    else:
        event = slash_command(SECRET, text="dinners", timestamp=int(time.time()) - 600)
    assert world.send(event)["statusCode"] == 401
    assert world.lam.invocations == [] and world.slack.calls == []
    assert objects(s3, bucket) == before


def test_a_slack_retry_never_starts_a_second_session(world: World) -> None:
    """Slack does not retry slash commands, but a delivery with ``X-Slack-Retry-Num`` is no
    longer dropped (it may be the only one that can succeed): it is the same command (its
    trigger ID), so it finds the same session, and one basket is posted."""
    first = slash_command(SECRET, text="dinners", trigger_id="13345224609.738474920.8088930838d")
    retry = slash_command(
        SECRET, text="dinners", trigger_id="13345224609.738474920.8088930838d", retry_num=1
    )
    assert world.send(first)["statusCode"] == 200
    assert world.send(retry)["statusCode"] == 200
    assert len(world.lam.invocations) == 2
    world.run_lazies()
    assert len(world.baskets()) == 1


def test_a_lazy_invocation_delivered_twice_resumes_once(world: World) -> None:
    basket = start_basket(world)
    world.click(basket, "approve_basket")
    (lazy,) = world.lam.take()
    world.send(lazy.payload)
    world.send(lazy.payload)  # Lambda's async retry of the same event
    assert [m["text"] for m in world.slack.thread(CHANNEL, basket["ts"])] == ["Ordered 10 items."]


def test_a_start_delivered_twice_posts_one_basket(world: World) -> None:
    world.shop()
    (lazy,) = world.lam.take()
    world.send(lazy.payload)
    world.send(lazy.payload)
    assert len(world.baskets()) == 1
    assert world.claude.message_calls == 1


def test_model_text_cannot_ping_anyone(world: World) -> None:
    """Items are plain_text: Slack parses no mention or link there, and shows "&" as "&"."""
    world.claude.script(
        Reply(text="<!channel> milk\n<@U0BOSS> & <!subteam^S123> eggs\n<https://x.test|click>")
    )
    basket = start_basket(world)
    text = section_text(basket)
    assert "• 1 <!channel> milk\n• 1 <@U0BOSS> & <!subteam^S123> eggs" in text
    sections = [b["text"] for b in basket["blocks"] if b["type"] == "section"]
    assert [t["type"] for t in sections] == ["mrkdwn", "plain_text", "mrkdwn", "plain_text"]
    assert [t["text"] for t in sections if t["type"] == "mrkdwn"] == ["*Dairy and eggs*", "*Other*"]
    pings = world.slack.mentions()
    assert not [p for p in pings if p.startswith("<!")]
    assert set(pings) <= {"<@U0ALICE>"}


def test_a_change_text_cannot_ping_anyone(world: World) -> None:
    basket = start_basket(world)
    change(world, basket, "<!here> no pizza <@U0BOSS>")
    # The answered basket keeps what was asked ("For @Alice: …") above who asked for a change.
    contexts = [b for b in world.baskets()[0]["blocks"] if b["type"] == "context"]
    note = [e for e in contexts[-1]["elements"] if e["type"] == "plain_text"]
    assert [e["text"] for e in note] == ["<!here> no pizza <@U0BOSS>"]  # shown, never parsed
    assert set(world.slack.mentions()) <= {"<@U0ALICE>", "<@U0BOB>"}


def test_a_model_stopped_at_max_tokens_is_reported_and_nothing_is_asked(world: World) -> None:
    world.claude.script(Reply(text="500 g chi", stop_reason="max_tokens"))
    world.shop()
    world.run_lazies()
    assert world.baskets() == []
    (message,) = world.slack.messages(CHANNEL)
    assert message["text"] == (
        "<@U0ALICE> No basket this time: the shopper stopped early (max_tokens). Try /shop again."
    )


def test_a_failed_revision_keeps_the_basket_answerable(world: World, s3: Any, bucket: str) -> None:
    basket = start_basket(world)
    world.claude.script(Reply(text="half a bask", stop_reason="max_tokens"))
    change(world, basket, "no pizza")
    (only,) = world.baskets()
    assert world.buttons(only)  # buttons still there
    (note,) = world.slack.thread(CHANNEL, basket["ts"])
    assert "Nothing changed: the shopper stopped early (max_tokens)" in note["text"]
    assert not [k for k in objects(s3, bucket) if k.endswith("/lock")]
    world.click(only, "approve_basket")  # a later click retries
    world.run_lazies()
    assert world.slack.thread(CHANNEL, basket["ts"])[-1]["text"] == "Ordered 10 items."


def test_a_tampered_checkpoint_is_refused_in_the_thread(world: World, s3: Any, bucket: str) -> None:
    basket = start_basket(world)
    key = max(k for k in objects(s3, bucket) if "/cp/" in k)  # oldest key = lowest sequence
    latest = min(k for k in objects(s3, bucket) if "/cp/" in k)
    body = s3.get_object(Bucket=bucket, Key=latest)["Body"].read()
    s3.put_object(Bucket=bucket, Key=latest, Body=body[:-3] + b"xyz")
    assert key != latest
    world.click(basket, "approve_basket")
    world.run_lazies()
    (note,) = world.slack.thread(CHANNEL, basket["ts"])
    assert note["text"] == BROKEN and list(world.buttons(note)) == [START_AGAIN]
    assert world.buttons(world.baskets()[0])
    assert not [k for k in objects(s3, bucket) if k.endswith("/lock")]


def test_an_s3_failure_is_reported_in_the_thread_and_changes_nothing(
    world: World, s3: Any, bucket: str
) -> None:
    basket = start_basket(world)
    before = objects(s3, bucket)
    world.boot(CHECKPOINT_BUCKET="no-such-bucket")  # every S3 request now fails
    world.click(basket, "approve_basket")
    world.run_lazies()
    (note,) = world.slack.thread(CHANNEL, basket["ts"])
    assert note["text"] == (
        "I couldn't reach the basket store, so nothing changed. Try again in a minute."
    )
    assert objects(s3, bucket) == before
    world.boot(CHECKPOINT_BUCKET=bucket)
    world.click(basket, "approve_basket")  # once S3 is back, the same buttons work
    world.run_lazies()
    assert world.slack.thread(CHANNEL, basket["ts"])[-1]["text"] == "Ordered 10 items."


def test_a_lazy_invocation_delivered_late_changes_nothing_and_is_reported_as_lost(
    world: World, s3: Any, bucket: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    from slack_sdk.signature import Clock

    basket = start_basket(world)
    world.click(basket, "approve_basket")
    (lazy,) = world.lam.take()
    before = objects(s3, bucket)
    real_now = Clock.now
    monkeypatch.setattr(Clock, "now", lambda self: real_now(self) + 301)  # past Slack's window
    # Bolt answers 401; a lazy run that did not run raises, so Lambda retries it, and then its
    # lost-runs queue tells the person to press again (its signature is checked, not its age).
    with pytest.raises(LazyRunFailed, match="answered 401"):
        world.send(lazy.payload)
    run = invoke_async(world.send, lazy.payload)
    assert run.errors == ["LazyRunFailed"] * 3 and run.lost == {"batchItemFailures": []}
    assert [k for k in objects(s3, bucket) if k not in before and "/lost/" not in k] == []
    assert {k: v for k, v in objects(s3, bucket).items() if k in before} == before
    (told,) = world.slack.thread(CHANNEL, basket["ts"])
    assert "Your approval of basket 1 didn't go through — press Approve again." in told["text"]
    assert world.buttons(world.baskets()[0])  # the basket can still be answered


def test_a_lazy_click_overtaken_by_a_newer_one_resumes_nothing(world: World) -> None:
    basket = start_basket(world)
    world.click(basket, "approve_basket", user="U0CAROL")
    (slow,) = world.lam.take()  # Carol's approve waits in Lambda's queue...
    change(world, basket, "no pizza")  # ...while Bob's change goes through
    world.send(slow.payload)
    assert ephemeral_texts(world, "U0CAROL") == ["This basket was already answered by <@U0BOB>."]
    assert [header(b) for b in world.baskets()] == ["Basket 1 of 3", "Basket 2 of 3"]
    assert not [
        r
        for m in world.baskets()
        for r in world.slack.thread(CHANNEL, m["ts"])
        if r["text"].startswith("Ordered")
    ]


def test_a_revised_basket_slack_refused_keeps_the_old_buttons_until_a_click_reposts_it(
    world: World,
) -> None:
    basket = start_basket(world)
    # the change's draft (so no message to update) and then basket 2's own post
    world.slack.fail_next("chat.postMessage", error="internal_error", times=2)
    change(world, basket, "no pizza")
    (only,) = world.baskets()
    assert world.buttons(only)  # still answerable: the way to retry
    (note,) = world.slack.thread(CHANNEL, basket["ts"])
    assert note["text"].startswith("I couldn't post everything to Slack just now.")
    world.click(only, "approve_basket", user="U0CAROL")  # any button repairs the channel
    world.run_lazies()
    first, second = world.baskets()
    assert "Change asked by <@U0BOB>: no pizza" in context_text(first)
    assert header(second) == "Basket 2 of 3" and world.buttons(second)
    assert not [
        r
        for m in world.baskets()
        for r in world.slack.thread(CHANNEL, m["ts"])
        if r["text"].startswith("Ordered")
    ]
