"""A quorum is counted against the settings in force at each click (issue 31, item 2).

Through the real handler, moto's S3 and the fake Web API: an admin saves new approvers or a new
count in the Settings modal while a basket waits, and the next Approve is counted by them. An
approval given by someone who is no longer an approver stops counting, and the basket says so;
a lowered count holds at the next click, the same approver's included.
"""

from __future__ import annotations

import json
from typing import Any

import pytest

from tests.bot_kit import CHANNEL, World, context_text, start_basket
from tests.fault_kit import ephemeral_texts, lock_keys, session_of, thread_texts
from tests.settings_kit import settle
from tests.test_quorum import latest_doc, shown


@pytest.fixture
def carol(world: World) -> World:
    """Carol is a workspace admin: she saves the Settings."""
    world.slack.set_person("U0CAROL", is_admin=True, tz="Europe/London")
    return world


def approve(world: World, user: str) -> dict[str, Any]:
    world.click(shown(world), "approve_basket", user=user)
    world.run_lazies()
    return shown(world)


def test_an_approver_removed_from_settings_no_longer_counts_and_the_basket_says_so(
    carol: World, s3: Any, bucket: str
) -> None:
    """Bob approves (1 of 2); the approvers become Dave and Alice, 2 needed; Dave's approval
    is then the only one that counts: 1 of 2, and the basket says why Bob's does not. Alice's
    orders it, named as approved by Dave and Alice."""
    settle(carol, "U0BOB", "U0CAROL", needed=2)
    basket = start_basket(carol)
    session = session_of(carol, basket)
    assert "Approved by <@U0BOB> · 1 of 2 needed" in context_text(approve(carol, "U0BOB"))

    settle(carol, "U0DAVE", "U0ALICE", needed=2)
    now = approve(carol, "U0DAVE")
    assert thread_texts(carol, basket) == []  # nothing ordered
    assert (
        "Approved by <@U0DAVE> · 1 of 2 needed: <@U0BOB>'s approval no longer counts, "
        "<@U0BOB> is not an approver now"
    ) in context_text(now)
    assert "approve_basket" in carol.buttons(now)
    last = list(latest_doc(s3, bucket, session)["answered"].values())[-1]
    assert last["by"] == "U0DAVE" and last["response"]["v"]["approvals"] == ["U0DAVE"]

    done = approve(carol, "U0ALICE")
    assert thread_texts(carol, basket) == ["Ordered 10 items."]
    assert "Approved by <@U0DAVE> and <@U0ALICE> · " in context_text(done)
    assert "U0BOB" not in context_text(done).split("·")[0]
    assert lock_keys(s3, bucket) == [] and carol.slack.violations == []


def test_a_removed_approver_cannot_press_approve_to_count_again(carol: World) -> None:
    settle(carol, "U0BOB", "U0CAROL", needed=2)
    start_basket(carol)
    approve(carol, "U0BOB")
    settle(carol, "U0CAROL", "U0DAVE", needed=2)
    approve(carol, "U0BOB")
    assert ephemeral_texts(carol, "U0BOB")[-1] == (
        "Only <@U0CAROL>, <@U0DAVE> can answer baskets here."
    )
    assert "Ordered" not in json.dumps(carol.slack.messages(CHANNEL))


@pytest.mark.parametrize("second", ["U0BOB", "U0DAVE"])
def test_a_lowered_quorum_holds_at_the_next_click_the_same_approvers_included(
    carol: World, second: str
) -> None:
    """3 needed, Bob approves; the admin lowers it to 1: the next Approve orders, whether it
    is Bob's again (his approval is now enough) or another approver's."""
    settle(carol, "U0BOB", "U0CAROL", "U0DAVE", needed=3)
    basket = start_basket(carol)
    assert "1 of 3 needed" in context_text(approve(carol, "U0BOB"))
    settle(carol, "U0BOB", "U0CAROL", "U0DAVE", needed=1)
    done = approve(carol, second)
    assert thread_texts(carol, basket) == ["Ordered 10 items."]
    by = "<@U0BOB> · " if second == "U0BOB" else "<@U0BOB> and <@U0DAVE> · "
    assert f"Approved by {by}" in context_text(done)


def test_approvals_stop_counting_only_for_those_removed(carol: World) -> None:
    """Bob and Carol approve (2 of 3); Bob is removed and Dave added, 3 needed still: Carol's
    counts, Bob's does not, and Dave's makes 2 of 3."""
    settle(carol, "U0BOB", "U0CAROL", "U0ALICE", needed=3)
    start_basket(carol)
    approve(carol, "U0BOB")
    assert "2 of 3 needed" in context_text(approve(carol, "U0CAROL"))
    settle(carol, "U0CAROL", "U0ALICE", "U0DAVE", needed=3)
    now = approve(carol, "U0DAVE")
    assert "Approved by <@U0CAROL> and <@U0DAVE> · 2 of 3 needed: <@U0BOB>'s approval" in (
        context_text(now)
    )
