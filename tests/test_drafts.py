"""A ``/shop``'s basket shown while the model writes it (issue 36, 1): one message, posted before
the model is asked and updated as the streamed answer finishes each item, which becomes the
basket itself; true at every moment, and one message whatever Lambda redelivers.

Through the real handler, the fake Slack and the fake Messages API streaming as the API does
(``bot.sandbox.anthropic_stream``: fine-grained tool input, an ``overloaded_error`` event or a
dropped connection mid-stream); crashes in fresh interpreters (``tests.lambda_invoke``)."""

from __future__ import annotations

import json
import time
from typing import Any

import pytest

from bot.sandbox.anthropic_api import Reply
from bot.slack.draft import (
    AGAIN,
    DRAFT_NOTE,
    READING_STATUS,
    RULES_AGAIN,
    WRITING,
    WRITING_STATUS,
)
from tests.bot_kit import CHANNEL, TestWorld, context_text, header, section_text
from tests.draft_kit import every_update, has_buttons, said, updates

LEASE = 1.0


@pytest.fixture(autouse=True)
def every_item(monkeypatch: pytest.MonkeyPatch) -> None:
    every_update(monkeypatch)


def test_the_basket_grows_in_one_message_that_becomes_it(world: TestWorld) -> None:
    world.shop("dinners this week", user="U0BOB")
    world.run_lazies()
    (posted,) = [c.args for c in world.slack.calls_to("chat.postMessage")]
    assert posted["text"] == "<@U0BOB> asked for this week's basket"  # who and what, no item
    assert "dinners this week" in json.dumps(posted["blocks"])
    assert world.claude.requests[0]["stream"] is True
    shown = updates(world)
    writing, final = shown[:-1], shown[-1]
    assert [u["text"] for u in writing] == [
        f"Basket 1, being written: {n} item{'s' if n > 1 else ''} so far" for n in range(1, 11)
    ]
    assert not any(has_buttons(u["blocks"]) for u in writing)  # nothing to approve yet
    assert all(DRAFT_NOTE in said(u) for u in writing)
    assert has_buttons(final["blocks"]) and final["text"] == "Basket 1 of 3: 10 items"
    (basket,) = world.slack.messages(CHANNEL)  # one message: the draft became the basket
    assert header(basket) == "Basket 1 of 3" and world.drafts() == []
    assert {u["ts"] for u in shown} == {basket["ts"]}
    status = world.slack.status_history(CHANNEL, basket["ts"])  # as Slack shows AI apps at work
    assert [(s.why, s.status) for s in status] == [
        ("set", READING_STATUS),
        ("set", WRITING_STATUS),
        ("cleared", ""),
    ]


def test_an_item_the_household_does_not_eat_is_flagged_while_written(world: TestWorld) -> None:
    """ "A 'no meat' household shown beef": the draft flags it as the basket would, before the
    bot asks again, and the basket then comes without it."""
    world.claude.script(
        Reply(text="500 g beef mince\n2 onions\n1 loaf bread"),
        Reply(text="500 g lentils\n2 onions\n1 loaf bread"),
    )
    world.shop("we are vegetarian; chilli on Friday", user="U0BOB")
    world.run_lazies()
    beef = [u for u in updates(world) if "beef mince" in said(u)]
    flag = "contains beef: you said vegetarian"
    assert beef and all(flag in said(u) for u in beef)
    again = [u for u in updates(world) if RULES_AGAIN in said(u)]  # then, the second answer
    assert again and "beef" not in said(again[0]) and updates(world).index(again[0]) > 0
    (basket,) = world.baskets()
    assert "beef" not in section_text(basket) and "500 g lentils" in section_text(basket)


@pytest.mark.parametrize("broken", ["error", "drop"])
def test_a_stream_that_breaks_mid_answer_is_asked_once_more_plain(
    world: TestWorld, broken: str
) -> None:
    """An ``overloaded_error`` event mid-stream, or a dropped connection: the SDK retries
    neither for a stream (it does a plain call's 529), so the shopper asks once more, plain;
    the draft keeps its first items until the basket replaces it, in the same message."""
    world.claude.script(Reply(break_after=12, break_with=broken))
    world.shop("dinners this week", user="U0BOB")
    world.run_lazies()
    assert [u for u in updates(world) if WRITING in said(u)]  # the first items were shown
    assert [bool(r.get("stream")) for r in world.claude.requests] == [True, False]
    (basket,) = world.slack.messages(CHANNEL)
    assert header(basket) == "Basket 1 of 3" and world.drafts() == []


@pytest.mark.parametrize(
    "reply",
    [
        Reply(stop_reason="max_tokens"),  # stopped before the form was whole
        Reply(status=529),  # busy before the stream starts, through the SDK's own retries
    ],
)
def test_no_basket_is_said_in_the_draft(world: TestWorld, reply: Reply) -> None:
    """Where no basket comes of it, the draft is where the person hears why: one message, and
    nothing left saying "being written"."""
    world.claude.script(*[reply] * 4)  # the SDK's own retries of a plain call see the same
    world.shop("dinners this week", user="U0BOB")
    world.run_lazies()
    (message,) = world.slack.messages(CHANNEL)
    assert message["text"].startswith("<@U0BOB> No basket this time: ")
    assert not header(message) and world.baskets() == [] and world.drafts() == []


def test_a_stream_slower_than_the_model_timeout_is_cut(world: TestWorld) -> None:
    """Streamed, the SDK's timeout bounds only the wait for each piece: the whole answer is
    bounded as a plain call is per attempt (ANTHROPIC_TIMEOUT_SECONDS), or a slow model would
    run the Lambda out of its 60 s."""
    world.boot(ANTHROPIC_TIMEOUT_SECONDS="1")
    world.claude.speed, world.claude.base_latency = 20.0, 0.1  # a 17-item basket: about 15 s
    world.shop("dinners this week", user="U0BOB")
    world.run_lazies()
    (message,) = world.slack.messages(CHANNEL)
    assert message["text"].startswith("<@U0BOB> No basket this time: ")
    assert len(world.claude.requests) == 1  # cut, not asked again


def test_a_lost_run_never_overwrites_a_basket_already_in_its_draft(served: TestWorld) -> None:
    """The last try posted basket 1 into the draft and died before it was done (here: as it
    released the lock); Lambda sends it to the lost-runs queue. The person is told as before,
    but the message, an approvable basket now, stays what it is."""
    from bot.handler import handler
    from bot.sandbox.aws_events import lambda_context, lost_run_record, sqs_event

    world = served
    world.shop("dinners this week", user="U0BOB")
    (lost,) = world.lam.take()
    world.in_fresh_process(lost.payload, crash_at="posted")
    record = lost_run_record(lost.payload, condition="RetriesExhausted")
    assert handler(sqs_event(record), lambda_context()) == {"batchItemFailures": []}
    (basket,) = world.slack.messages(CHANNEL)
    assert header(basket) == "Basket 1 of 3" and "approve_basket" in world.buttons(basket)


def test_a_run_killed_mid_stream_is_finished_in_the_same_message(served: TestWorld) -> None:
    """Killed while the draft shows its first items: Lambda's retry writes into the same
    message again (saying so), and it becomes the basket; no second message, no item twice."""
    world = served
    world.boot(LOCK_TTL_SECONDS=str(LEASE))
    world.shop("dinners this week", user="U0BOB")
    (lost,) = world.lam.take()
    world.in_fresh_process(lost.payload, crash_at="mid-draft")
    (draft,) = world.drafts()
    assert "2 items so far" in context_text(draft)
    time.sleep(LEASE + 0.2)  # the dead run's lease
    world.in_fresh_process(lost.payload)  # Lambda's retry
    retried = [u for u in updates(world) if AGAIN in said(u)]
    assert retried and {u["ts"] for u in retried} == {draft["ts"]}
    (basket,) = world.slack.messages(CHANNEL)
    assert basket["ts"] == draft["ts"] and header(basket) == "Basket 1 of 3"
    lines = section_text(basket).splitlines()
    assert len(lines) == len(set(lines))
    world.in_fresh_process(lost.payload)  # a stray third delivery changes nothing
    assert len(world.slack.messages(CHANNEL)) == 1


def test_a_run_killed_between_posting_and_recording_its_draft(served: TestWorld) -> None:
    """Slack has no idempotency key for a post: a retry cannot know whether the dead run's
    draft reached the channel, so it shows none and posts the basket as a new message. The
    draft that did reach it was never updated: it says only who asked and what, still true."""
    world = served
    world.boot(LOCK_TTL_SECONDS=str(LEASE))
    world.shop("dinners this week", user="U0BOB")
    (lost,) = world.lam.take()
    world.in_fresh_process(lost.payload, crash_at="draft-posted")
    time.sleep(LEASE + 0.2)
    world.in_fresh_process(lost.payload)
    orphan, basket = world.slack.messages(CHANNEL)
    assert orphan["text"] == "<@U0BOB> asked for this week's basket" and not header(orphan)
    assert WRITING not in json.dumps(orphan["blocks"], ensure_ascii=False)
    assert header(basket) == "Basket 1 of 3" and world.baskets() == [basket]
    assert world.claude.message_calls == 1  # the dead run never asked the model


def test_no_place_to_keep_a_draft_costs_only_the_draft(
    world: TestWorld, monkeypatch: pytest.MonkeyPatch
) -> None:
    from bot.records.drafts import S3Drafts
    from workflow.errors import StoreError

    def refused(*_: Any) -> None:
        raise StoreError("S3 said no")

    monkeypatch.setattr(S3Drafts, "claim", refused)
    world.shop("dinners this week", user="U0BOB")
    world.run_lazies()
    (basket,) = world.slack.messages(CHANNEL)
    assert header(basket) == "Basket 1 of 3" and not world.claude.requests[0].get("stream")


def test_a_shop_lost_after_every_retry_says_so_in_its_draft(served: TestWorld) -> None:
    """Lambda gave up on the run (its retries died too) and sent it to the lost-runs queue: the
    person hears it through the command's response_url, as before, and the draft, which showed
    the first items, no longer says "being written"."""
    from bot.handler import handler
    from bot.sandbox.aws_events import lambda_context, lost_run_record, sqs_event
    from bot.steps.drafting import LOST

    world = served
    world.shop("dinners this week", user="U0BOB")
    (lost,) = world.lam.take()
    world.in_fresh_process(lost.payload, crash_at="mid-draft")
    record = lost_run_record(lost.payload, condition="RetriesExhausted")
    assert handler(sqs_event(record), lambda_context()) == {"batchItemFailures": []}
    (message,) = world.slack.messages(CHANNEL)
    assert message["text"] == f"<@U0BOB> {LOST}" and world.drafts() == []
    assert [r.body.get("text") for r in world.slack.responses if "/commands/" in r.path] == [
        "I couldn't finish writing your basket — try /shop again."
    ]
