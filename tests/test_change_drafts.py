"""A Change… shown while the model writes it (issue 36, 2): the difference streams into a message
of its own ("Removing pizza bases", "Adding 1 l oat milk"), which then becomes the revised basket
with its buttons; true at every moment, and one message whatever Lambda redelivers.

Through the real handler, the fake Slack and the fake Messages API streaming as the API does
(``bot.sandbox.anthropic_stream``: a ``revise_basket`` input as fine-grained partial JSON);
crashes in fresh interpreters (``tests.lambda_invoke``)."""

from __future__ import annotations

import json
import time
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from bot.sandbox.anthropic_api import Reply
from bot.slack.draft import (
    AGAIN,
    DRAFT_NOTE,
    READING_CHANGE_STATUS,
    RULES_AGAIN,
    WRITING_STATUS,
    writing,
)
from bot.steps.change_drafts import UNCHANGED_DRAFT
from tests.bot_kit import CHANNEL, TestWorld, change, header, section_text, start_basket
from tests.draft_kit import every_update, has_buttons, said, updates
from workflow.shop.revision import draft_change
from workflow.shop.shopper_stream import Scanner

LEASE = 1.0
WRITING_2 = writing(2)
REVISION = {
    "remove": ["pizza bases", "mozzarella"],
    "set": [{"name": "carrots", "quantity": 5, "unit": ""}],
    "add": [{"name": "oat milk", "quantity": 1, "unit": "l", "note": None, "aisle": None}],
}


@pytest.fixture(autouse=True)
def every_item(monkeypatch: pytest.MonkeyPatch) -> None:
    every_update(monkeypatch)


def names_of(basket: dict[str, Any]) -> list[str]:
    """The basket's item lines, without their bullets (aisle headings left out)."""
    lines = section_text(basket).splitlines()
    return [line.removeprefix("• ") for line in lines if line.startswith("• ")]


def revised(world: TestWorld, **reply: Any) -> None:
    """The model's next answer: the difference (``revise_basket``), as ``REVISION``."""
    world.claude.script(Reply(tool="revise_basket", tool_input=REVISION, **reply))


def change_killed_at(world: TestWorld, point: str) -> tuple[dict[str, Any], Any]:
    """Basket 1, then Bob's change (answered with ``REVISION``), its lazy run killed at
    ``point`` in a fresh interpreter: basket 1, and the lazy invocation Lambda would retry."""
    basket = start_basket(world)
    revised(world)
    ack = world.click(basket, "change_basket", user="U0BOB")
    assert ack["statusCode"] == 200
    world.submit_change("no pizza; more carrots; add oat milk", user="U0BOB")
    (lost,) = world.lam.take()
    world.in_fresh_process(lost.payload, crash_at=point)
    return basket, lost


def test_the_difference_streams_into_a_message_that_becomes_basket_2(world: TestWorld) -> None:
    basket = start_basket(world)
    posted_before = len(world.slack.calls_to("chat.postMessage"))
    revised(world)
    change(world, basket, "no pizza; more carrots; add oat milk", user="U0BOB")
    (draft_post,) = [c.args for c in world.slack.calls_to("chat.postMessage")][posted_before:]
    assert draft_post["text"] == "<@U0BOB> asked for a change of basket 1"  # nothing it promises
    assert "no pizza; more carrots; add oat milk" in json.dumps(draft_post["blocks"])
    assert world.claude.requests[-1]["stream"] is True
    writing_2 = [u for u in updates(world) if WRITING_2 in said(u)]
    assert [u["text"] for u in writing_2] == [
        f"Basket 2, being written: {n} change{'s' if n > 1 else ''} so far" for n in range(1, 5)
    ]
    last = said(writing_2[-1])
    for line in (
        "Removing pizza bases",
        "Removing mozzarella",
        "Changing carrots to 5",
        "Adding 1 l oat milk",
    ):
        assert line in last
    assert DRAFT_NOTE in last and not any(has_buttons(u["blocks"]) for u in writing_2)
    first, second = world.baskets()  # the draft became basket 2: no other message
    assert header(first).startswith("Basket 1") and header(second) == "Basket 2 of 3"
    assert {u["ts"] for u in writing_2} == {second["ts"]} and world.drafts() == []
    assert "approve_basket" in world.buttons(second) and not world.buttons(first)
    assert "1 l oat milk" in names_of(second) and "2 pizza bases" not in names_of(second)
    assert "5 carrots" in names_of(second)
    status = world.slack.status_history(CHANNEL, second["ts"])
    assert [(s.why, s.status) for s in status] == [
        ("set", READING_CHANGE_STATUS),
        ("set", WRITING_STATUS),
        ("cleared", ""),
    ]


def test_an_added_item_the_household_does_not_eat_is_flagged_while_written(
    world: TestWorld,
) -> None:
    """A change that says "we are vegetarian" while the model adds beef: the draft flags it as
    the basket would, and the bot asks again without it."""
    basket = start_basket(world)
    beef = {**REVISION, "add": [{**REVISION["add"][0], "name": "beef mince", "unit": "kg"}]}
    world.claude.script(
        Reply(tool="revise_basket", tool_input=beef),
        Reply(tool="revise_basket", tool_input=REVISION),
    )
    change(world, basket, "we are vegetarian now, and add some oat milk")
    flagged = [u for u in updates(world) if "beef mince" in said(u)]
    assert flagged and all("contains beef: you said vegetarian" in said(u) for u in flagged)
    again = [u for u in updates(world) if RULES_AGAIN in said(u)]
    assert again and "beef" not in said(again[0])
    assert "beef" not in section_text(world.baskets()[-1])


def test_a_change_that_changes_nothing_says_so_in_its_draft(world: TestWorld) -> None:
    """The model's difference leaves the basket as it was: no round is used, basket 1 is asked
    again in its own message, and the draft says no new basket came, never "being written"."""
    basket = start_basket(world)
    world.claude.script(
        Reply(tool="revise_basket", tool_input={"remove": [], "set": [], "add": []})
    )
    change(world, basket, "whatever you think")
    (only,) = world.baskets()
    assert only["ts"] == basket["ts"] and "approve_basket" in world.buttons(only)
    (draft,) = [m for m in world.slack.messages(CHANNEL) if m["ts"] != basket["ts"]]
    assert draft["text"] == UNCHANGED_DRAFT and not header(draft) and world.drafts() == []


def test_a_change_with_no_basket_says_so_in_its_draft(world: TestWorld) -> None:
    basket = start_basket(world)
    world.claude.script(*[Reply(stop_reason="max_tokens")] * 2)
    change(world, basket, "no pizza")
    (draft,) = [m for m in world.slack.messages(CHANNEL) if m["ts"] != basket["ts"]]
    assert "No new basket came of this change" in draft["text"] and world.drafts() == []
    assert "approve_basket" in world.buttons(world.baskets()[0])  # basket 1 still waits


def test_a_change_killed_mid_stream_is_finished_in_the_same_message(served: TestWorld) -> None:
    """Killed while the draft shows the first operations: Lambda's retry of the click writes
    into the same message again (saying so), which becomes basket 2; nothing shown twice."""
    world = served
    world.boot(LOCK_TTL_SECONDS=str(LEASE))
    basket, lost = change_killed_at(world, "mid-draft")
    (draft,) = world.drafts()
    assert "2 changes so far" in said(draft)
    time.sleep(LEASE + 0.2)  # the dead run's lease
    revised(world)
    world.in_fresh_process(lost.payload)  # Lambda's retry
    retried = [u for u in updates(world) if AGAIN in said(u)]
    assert retried and {u["ts"] for u in retried} == {draft["ts"]}
    first, second = world.baskets()
    assert second["ts"] == draft["ts"] and header(second) == "Basket 2 of 3"
    lines = names_of(second)
    assert len(lines) == len(set(lines))
    world.in_fresh_process(lost.payload)  # a stray third delivery changes nothing
    assert len(world.slack.messages(CHANNEL)) == 2


OPERATIONS = json.dumps(
    {
        "remove": ['pizza "bases"', "mozzarella \\ cheese"],
        "set": [{"name": "carrots", "quantity": 5, "unit": "", "note": "for {Friday}"}],
        "add": [{"name": "oat milk", "quantity": 1, "unit": "l", "note": None, "aisle": None}],
    }
)


@given(st.lists(st.integers(min_value=1, max_value=len(OPERATIONS) - 1), max_size=12))
def test_the_operations_are_read_wherever_the_pieces_end(cuts: list[int]) -> None:
    """Fine-grained tool streaming sends the input in pieces that end anywhere (inside a
    string, an escape, a number): each operation is read once, whole."""
    scanner, found = Scanner(), []
    at = 0
    for cut in [*sorted(set(cuts)), len(OPERATIONS)]:
        found += scanner.feed(OPERATIONS[at:cut])
        at = cut
    changes = [draft_change(field, text) for field, text in found]
    assert [c.said() if c else None for c in changes] == [
        'Removing pizza "bases"',
        "Removing mozzarella \\ cheese",
        "Changing carrots to 5 — for {Friday}",
        "Adding 1 l oat milk",
    ]


def test_a_change_lost_after_every_retry_says_so_in_its_draft(served: TestWorld) -> None:
    """Lambda gave up on the change's run (its retries died too) and sent it to the lost-runs
    queue: the person hears it in the basket's thread, as before, and the draft, which showed
    the first changes, no longer says "being written"."""
    from bot.handler import handler
    from bot.sandbox.aws_events import lambda_context, lost_run_record, sqs_event
    from bot.steps.drafting import CHANGE_LOST

    world = served
    basket, lost = change_killed_at(world, "mid-draft")
    record = lost_run_record(lost.payload, condition="RetriesExhausted")
    assert handler(sqs_event(record), lambda_context()) == {"batchItemFailures": []}
    (draft,) = [m for m in world.slack.messages(CHANNEL) if m["ts"] != basket["ts"]]
    assert draft["text"] == CHANGE_LOST and world.drafts() == []
    (told,) = world.slack.thread(CHANNEL, basket["ts"])
    assert told["text"] == "<@U0BOB> Your change didn't go through — press Change… again."
    assert "approve_basket" in world.buttons(world.baskets()[0])  # basket 1 still waits


def test_another_step_catching_up_puts_basket_2_in_the_changes_draft(served: TestWorld) -> None:
    """The change's process died once basket 2 was saved, before Slack saw it; basket 1 still
    shows its buttons, and Carol presses Approve there first. Her turn catches up on the saved
    work: basket 2 goes into the change's draft (no "being written" left beside it), and the
    change's own retry later finds the channel up to date."""
    world = served
    world.boot(LOCK_TTL_SECONDS=str(LEASE))
    basket, lost = change_killed_at(world, "checkpoint-written")
    (draft,) = world.drafts()
    time.sleep(LEASE + 0.2)
    world.click(basket, "approve_basket", user="U0CAROL")
    for invocation in world.lam.take():
        world.in_fresh_process(invocation.payload)
    first, second = world.baskets()
    assert second["ts"] == draft["ts"] and header(second) == "Basket 2 of 3"
    assert world.drafts() == [] and "approve_basket" in world.buttons(second)
    world.in_fresh_process(lost.payload)  # Lambda's retry of the change: nothing more
    assert len(world.slack.messages(CHANNEL)) == 2


def test_a_failed_change_and_the_next_one_each_have_their_own_message(world: TestWorld) -> None:
    """A change whose answer does not fit says so in its draft for good; the next change of the
    same basket (another click) posts a draft of its own, never "interrupted" in the old one."""
    basket = start_basket(world)
    unfit = {"remove": ["no such thing"], "set": [], "add": []}
    world.claude.script(*[Reply(tool="revise_basket", tool_input=unfit)] * 2)
    change(world, basket, "remove the thing")
    (failed,) = [m for m in world.slack.messages(CHANNEL) if m["ts"] != basket["ts"]]
    assert "No new basket came of this change" in failed["text"]
    world.claude.replies.clear()  # what the first change's asks left unused
    revised(world)
    before = len(updates(world))
    change(world, basket, "no pizza; more carrots; add oat milk")
    later = updates(world)[before:]
    assert failed["ts"] not in {u["ts"] for u in later if WRITING_2 in said(u)}
    assert not [u for u in later if AGAIN in said(u)]
    assert "No new basket came of this change" in world.slack.message(CHANNEL, failed["ts"])["text"]
    assert header(world.baskets()[-1]) == "Basket 2 of 3"


def test_no_basket_is_said_in_the_draft_through_a_rate_limit(world: TestWorld) -> None:
    """The draft's last word is what it says for good: sent through the client that waits out
    a 429's Retry-After, unlike the updates in between (a later one follows those)."""
    basket = start_basket(world)
    world.claude.script(*[Reply(status=529)] * 4)  # busy before any change is written
    world.slack.fail_next("chat.update", status=429, retry_after=1)  # the draft's last word
    world.click(basket, "change_basket", user="U0BOB")
    world.submit_change("no pizza", user="U0BOB")
    world.run_lazies()
    (draft,) = [m for m in world.slack.messages(CHANNEL) if m["ts"] != basket["ts"]]
    assert "No new basket came of this change" in draft["text"]
