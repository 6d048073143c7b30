"""The Slack app with the offline shopper (no ANTHROPIC_API_KEY), end to end: signed requests to
the real handler, lazy invocations delivered as new ones, S3 through moto, the fake Slack."""

from __future__ import annotations

import pytest

from tests.bot_kit import CHANNEL, TestWorld, change, context_text, header, section_text
from tests.fault_kit import thread_texts
from workflow.shop.executors import UNCHANGED

WEEK = "tacos on Friday, pasta on Tuesday, we have rice"


@pytest.fixture
def offline(world: TestWorld, monkeypatch: pytest.MonkeyPatch) -> TestWorld:
    """The world booted again without a model key: the bot uses the offline shopper."""
    monkeypatch.delenv("ANTHROPIC_API_KEY")
    world.boot()
    return world


def posted_texts(world: TestWorld) -> list[str]:
    return [m["text"] for m in world.slack.messages(CHANNEL)]


def test_a_change_that_changes_nothing_keeps_the_round_and_the_buttons(
    offline: TestWorld,
) -> None:
    """Issue 20: "maybe later" gave basket 2, the same as basket 1, and used up a round. Now the
    thread says so, the basket keeps live buttons (for its new request) and no basket is posted;
    the next real change is basket 2 of 3."""
    offline.shop(WEEK)
    offline.run_lazies()
    (first,) = offline.baskets()
    before = offline.buttons(first)
    change(offline, first, "maybe later")
    (same,) = offline.baskets()
    assert same["ts"] == first["ts"] and header(same) == "Basket 1 of 3"
    assert section_text(same) == section_text(first)
    assert set(offline.buttons(same)) == set(before) and offline.buttons(same) != before
    said = [m["text"] for m in offline.slack.thread(CHANNEL, first["ts"])]
    assert said == [f"Couldn't apply: maybe later. {UNCHANGED}"]
    assert offline.claude.requests == []  # the offline shopper, no model call
    change(offline, same, "no pizza, add oat milk")
    first, second = offline.baskets()
    assert header(second) == "Basket 2 of 3"
    assert "Change asked by <@U0BOB>: no pizza, add oat milk" in context_text(first)
    assert "500 g tomato passata" in section_text(second)  # no pizza was in the week
    assert "oat milk" in section_text(second)


def test_a_request_with_no_dinner_starts_nothing(offline: TestWorld) -> None:
    """Issue 20: "<!channel> ~strike~ *bold*" became one "ingredients for …" line that could be
    approved and ordered. The offline shopper finds no dinner in it: a short reason, no basket."""
    ack = offline.shop("<!channel> ~strike~ *bold*")
    assert ack["statusCode"] == 200
    offline.run_lazies()
    assert offline.baskets() == []
    (said,) = posted_texts(offline)
    assert said.startswith("<@U0ALICE> No basket this time: the offline shopper found no dinners")
    assert "<!channel>" not in said and "strike" not in said  # nothing of the request echoed


def test_a_part_of_a_change_that_could_not_be_made_is_said_on_the_basket(
    offline: TestWorld,
) -> None:
    """Issue 33, 2: "no fish, add oat milk" kept the salmon, "no fish" alone changed nothing,
    and a part that could not be made was dropped without a word. Now "no fish" swaps the
    salmon, the part the offline shopper cannot make is said on the basket, and a change made of
    such parts alone uses no round."""
    offline.shop("salmon on Thursday, tacos on Friday")
    offline.run_lazies()
    (first,) = offline.baskets()
    change(offline, first, "make it cheaper")
    (same,) = offline.baskets()
    assert header(same) == "Basket 1 of 3" and section_text(same) == section_text(first)
    assert "Couldn't apply: make it cheaper. That didn't change the basket." in context_text(same)
    # The thread says it too, with what could not be made (it said only "That didn't change").
    assert thread_texts(offline, same)[-1] == (
        "Couldn't apply: make it cheaper. That didn't change the basket."
    )
    change(offline, same, "no fish, add oat milk. Make it cheaper")
    _, second = offline.baskets()
    assert header(second) == "Basket 2 of 3"
    shown = section_text(second)
    assert "2 salmon fillets" not in shown and "1 l oat milk" in shown
    assert "you said no fish" in shown
    assert "couldn't apply: make it cheaper" in context_text(second)
