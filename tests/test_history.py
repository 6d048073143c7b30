"""Each ended session leaves one signed outcome record under the history prefix, through the real
handler: ordered, rejected, expired; written by the turn that shows the end, instead of the
session's receipt, so the approve costs what it did; read back as the receipt of an ended
session, so a double click does not say the outcome twice."""

from __future__ import annotations

import dataclasses
import json
from datetime import UTC, datetime
from typing import Any

import pytest

from bench.common import RequestCounter
from bot.records.history import Ended, S3History, decode, encode, history_prefix, newest, sign
from tests.bot_kit import CHANNEL, World, change, objects, start_basket
from tests.fault_kit import ephemeral_texts, session_of, thread_texts
from workflow.shop.records import SHOP_PREFIX

HISTORY = history_prefix(SHOP_PREFIX)


def outcome_records(s3: Any, bucket: str) -> dict[str, dict[str, Any]]:
    return {
        key: json.loads(s3.get_object(Bucket=bucket, Key=key)["Body"].read())
        for key in objects(s3, bucket)
        if key.startswith(HISTORY)
    }


def test_an_approved_basket_leaves_one_outcome_record_at_the_cost_of_its_receipt(
    world: World, s3: Any, bucket: str
) -> None:
    basket = start_basket(world)
    session = session_of(world, basket)
    counter = RequestCounter(s3)
    world.click(basket, "approve_basket", user="U0BOB")
    world.run_lazies()
    calls = counter.take()
    assert thread_texts(world, basket) == ["Ordered 10 items."]
    # the workspace's settings GET (one per lazy run, conditional once cached), lock PUT, LIST +
    # GET (the latest checkpoint), checkpoint PUT, outcome PUT, lock DELETE; and the order's own
    # two (its record created placing before the canvas is made, then placed: bot.orders.place)
    assert sum(calls.values()) == 9 and calls["PutObject"] == 5, calls
    ((key, record),) = outcome_records(s3, bucket).items()
    assert key.startswith(f"{HISTORY}T0TEAM/") and key.endswith(f"-{session}")
    assert not key.startswith(SHOP_PREFIX)  # outside the 30-day rule's prefix
    ended = record["ended"]
    assert ended["kind"] == "ordered" and ended["answered_by"] == "U0BOB"
    assert ended["requested_by"] == "U0ALICE" and ended["request"] == "dinners this week"
    assert ended["round"] == 1 and len(ended["items"]) == 10
    assert ended["items"][0]["name"] == "chicken breast" and ended["ts"] == basket["ts"]
    assert ended["channel"] == CHANNEL and isinstance(record["mac"], str)


def test_a_second_click_after_the_end_is_told_and_says_nothing_twice(
    world: World, s3: Any, bucket: str
) -> None:
    """The ended session's receipt still names basket 1's checkpoint; its outcome record names
    the last one, and that is what the channel shows."""
    basket = start_basket(world)
    world.click(basket, "approve_basket", user="U0BOB")
    world.click(basket, "approve_basket", user="U0BOB")  # the screen was not updated yet
    world.run_lazies()
    assert thread_texts(world, basket) == ["Ordered 10 items."]
    assert ephemeral_texts(world, "U0BOB")[-1] == "This basket was already answered by <@U0BOB>."
    assert len(outcome_records(s3, bucket)) == 1


def test_a_rejected_and_a_changed_then_approved_basket_each_leave_their_outcome(
    world: World, s3: Any, bucket: str
) -> None:
    first = start_basket(world)
    world.click(first, "reject_basket", user="U0BOB")
    world.run_lazies()
    assert len(world.baskets()) == 1  # a rejection posts no new basket
    world.shop("tacos on Friday")
    world.run_lazies()
    tacos = world.baskets()[-1]
    change(world, tacos, "no pizza")
    revised = world.baskets()[-1]
    world.click(revised, "approve_basket", user="U0BOB")
    world.run_lazies()
    kinds = sorted(
        (r["ended"]["kind"], r["ended"]["round"]) for r in outcome_records(s3, bucket).values()
    )
    assert kinds == [("ordered", 2), ("rejected", 1)]


def test_the_newest_outcomes_cost_one_list_and_a_get_each_however_long_the_history_is(
    s3: Any, bucket: str
) -> None:
    key = b"k" * 32
    history = S3History(bucket, HISTORY, s3, key)
    for n in range(120):
        history.write("T0TEAM", _ended(f"s{n:03d}"), datetime.fromtimestamp(1_800_000_000 + n, UTC))
    history.write("T0OTHER", _ended("theirs"), datetime.fromtimestamp(1_900_000_000, UTC))
    counter = RequestCounter(s3)
    found = newest(history, "T0TEAM", 5)
    assert [e.session for _, e in found] == ["s119", "s118", "s117", "s116", "s115"]
    assert counter.take() == {"ListObjectsV2": 1, "GetObject": 5}
    assert [e.session for _, e in newest(history, "T0OTHER", 5)] == ["theirs"]  # its own only


def test_an_outcome_record_that_does_not_verify_is_not_read(s3: Any, bucket: str) -> None:
    """A record is a trust boundary (Repeat this order turns it into a basket): one edited,
    signed with another key or copied to another workspace reads as nothing."""
    key = b"k" * 32
    raw = encode(key, "T0TEAM", _ended("s1"))
    assert decode(key, "T0TEAM", raw) == _ended("s1")
    edited = json.loads(raw)
    edited["ended"]["items"][0]["quantity"] = 5000
    assert decode(key, "T0TEAM", json.dumps(edited).encode()) is None
    assert decode(b"x" * 32, "T0TEAM", raw) is None
    assert decode(key, "T0OTHER", raw) is None
    assert decode(key, "T0TEAM", b"not json") is None
    forged = json.loads(raw)
    forged["ended"]["items"] = ["500 g chicken"]
    forged["mac"] = sign(key, "T0TEAM", forged["ended"])
    assert decode(key, "T0TEAM", json.dumps(forged).encode()) is None  # signed, but not a basket


def test_an_order_a_quorum_approved_names_everyone_and_one_approvers_record_is_as_before() -> None:
    """``approved_by`` is written only for an order more than one person approved: a record of
    one approver has exactly the fields it had before quorums (code from before reads it), and
    such a record, without the field, reads back as approved by nobody else."""
    key = b"k" * 32
    one = _ended("s1")
    assert "approved_by" not in one.to_json() and Ended.from_json(one.to_json()) == one
    quorum = dataclasses.replace(one, approved_by=("U0CAROL", "U0BOB"))
    assert quorum.to_json()["approved_by"] == ["U0CAROL", "U0BOB"]
    assert decode(key, "T0TEAM", encode(key, "T0TEAM", quorum)) == quorum
    for bad in (["U0BOB", "<!channel>"], "U0BOB", [7], ["U0BOB"] * 51):
        body = {**one.to_json(), "approved_by": bad}
        raw = json.dumps({"ended": body, "mac": sign(key, "T0TEAM", body)}).encode()
        assert decode(key, "T0TEAM", raw) is None  # signed, but not what an order names
    rejected = {**one.to_json(), "kind": "rejected", "approved_by": ["U0BOB", "U0CAROL"]}
    with pytest.raises(ValueError, match="approvers of an order only"):
        Ended.from_json(rejected)


def _ended(session: str) -> Ended:
    return Ended(
        session=session,
        checkpoint_id="000003-0123abcd",
        kind="ordered",
        at=1_800_000_000,
        answered_by="U0BOB",
        requested_by="U0ALICE",
        request="tacos on Friday",
        round=1,
        items=[{"name": "tortillas", "quantity": 8, "unit": "", "note": None, "aisle": "bakery"}],
        channel=CHANNEL,
        ts="1800000000.000100",
    )
