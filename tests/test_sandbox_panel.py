"""The sandbox's Checkpoints panel (``bot.sandbox.panel``) over what the real handler wrote: each
session's status, from its outcome record or else its latest checkpoint, and people by name."""

from __future__ import annotations

from typing import Any

from bot.handler import cold_start
from bot.records.history import history_prefix
from bot.sandbox.anthropic_api import Reply
from bot.sandbox.panel import Status, first_words, sessions, status
from bot.sandbox.world import CHANNEL
from tests.bot_kit import World, change, start_basket
from workflow.shop.records import SHOP_PREFIX

TENANT = "T0TEAM"
PEOPLE = {"U0ALICE": "Alice", "U0BOB": "Bob"}


def panel() -> list[dict[str, Any]]:
    rt, _ = cold_start()
    return sessions(rt, TENANT, PEOPLE)


def test_each_session_says_where_it_is_and_names_its_people(world: World) -> None:
    basket = start_basket(world)
    (waiting,) = panel()
    assert waiting["status"] == "waiting"
    assert (waiting["requested_by"], waiting["answered_by"]) == ("Alice", "")
    world.click(basket, "reject_basket", user="U0CAROL")  # not one of the page's people
    world.run_lazies()
    world.shop("fish on Friday", user="U0BOB")
    world.run_lazies()
    (ordered,) = [m for m in world.baskets() if m["ts"] != basket["ts"]]
    world.click(ordered, "approve_basket", user="U0ALICE")
    world.run_lazies()
    world.claude.script(Reply(text="500 g chi", stop_reason="max_tokens"))
    world.shop("soup")  # a first basket the shopper could not write
    world.run_lazies()
    shown = [(s["status"], s["requested_by"], s["answered_by"]) for s in panel()]
    assert shown == [
        ("failed", "Alice", ""),
        ("ordered", "Bob", "Alice"),
        ("rejected", "Alice", "U0CAROL"),  # someone the page does not know: their ID
    ]


def test_without_its_outcome_record_an_ended_session_says_so_from_its_checkpoint(
    world: World, s3: Any, bucket: str
) -> None:
    """An outcome record is written after the checkpoint that ended the session: a turn that
    stopped in between leaves the checkpoint, which says how it ended, and who answered."""
    basket = start_basket(world)
    world.click(basket, "approve_basket", user="U0BOB")
    world.run_lazies()
    prefix = history_prefix(SHOP_PREFIX)
    for obj in s3.list_objects_v2(Bucket=bucket, Prefix=prefix)["Contents"]:
        s3.delete_object(Bucket=bucket, Key=obj["Key"])
    (ordered,) = panel()
    assert (ordered["status"], ordered["requested_by"], ordered["answered_by"]) == (
        "ordered",
        "Alice",
        "Bob",
    )


def test_the_status_of_a_checkpoint_document() -> None:
    def answered(**decision: Any) -> dict[str, Any]:
        response = {"t": "BasketDecision", "v": {"approved": False, "round": 1, **decision}}
        return {"requests": [], "answered": {"r1": {"by": "U0BOB", "response": response}}}

    assert status(None, None) is Status.WORKING  # no checkpoint yet: the start is running
    assert status(None, {"requests": [{"id": "r1"}]}) is Status.WAITING
    assert status(None, {"requests": [], "answered": {}}) is Status.WORKING
    assert status(None, answered(approved=True)) is Status.ORDERED
    assert status(None, answered()) is Status.REJECTED
    assert status(None, answered(expired_at=1700000000)) is Status.EXPIRED
    assert status(None, answered(change="no pizza")) is Status.WORKING  # the next basket


def test_a_card_names_its_channel_request_and_basket_and_a_change_by_its_name(
    world: World,
) -> None:
    """A card is matched to a message by what the channel shows: the channel, the request's
    first words and the basket's number (and the waiting basket's ``ts``). A Change is an
    answer that leads to the next basket: the card says who changed it, not who answered."""
    basket = start_basket(world)
    (waiting,) = panel()
    assert (waiting["channel"], waiting["ts"], waiting["basket"]) == (
        CHANNEL,
        basket["ts"],
        1,
    )
    assert waiting["request"] and waiting["request"] in basket["text"] + str(basket["blocks"])
    change(world, basket, "no pizza")
    (changed,) = panel()
    assert (changed["status"], changed["basket"]) == ("waiting", 2)
    assert (changed["answered_by"], changed["answer"]) == ("Bob", "changed")
    (second,) = [m for m in world.baskets() if m["ts"] != basket["ts"]]
    assert changed["ts"] == second["ts"]
    world.click(second, "approve_basket", user="U0ALICE")
    world.run_lazies()
    (ordered,) = panel()
    assert (ordered["status"], ordered["answered_by"], ordered["answer"]) == (
        "ordered",
        "Alice",
        "answered",
    )
    assert (ordered["channel"], ordered["basket"]) == (CHANNEL, 2)


def test_first_words_of_a_long_request() -> None:
    assert first_words("soup") == "soup"
    assert first_words("a b c d e f g h") == "a b c d e f …"


def test_the_sandboxs_message_ts_is_when_it_was_posted_and_unique() -> None:
    """Slack's ``ts`` is the message's epoch time in seconds.microseconds, unique in its channel:
    the page shows each message's own time from it. Two posts in the same microsecond still get
    two timestamps, in order."""
    from bot.sandbox.slack_workspace import SlackWorkspace

    slack = SlackWorkspace(
        channels={"C0SHOP": ["U0ALICE"]}, wall=lambda: 1_800_000_000.25, ts_base=None
    )
    posted = [slack.method("chat.postMessage", {"channel": "C0SHOP", "text": t}) for t in "ab"]
    assert [p["ts"] for p in posted] == ["1800000000.250000", "1800000000.250001"]


def test_a_basket_held_for_its_undo_window_shows_as_approved_ordering_at_its_time(
    world: World,
) -> None:
    """Approved and held (ORDER_DELAY): the card says approved, by whom, and when the order
    goes (the held approval's ``hold_until`` in the latest checkpoint), never "waiting"."""
    import boto3

    from tests.test_reminders import GROUP, ROLE, TARGET

    boto3.client("scheduler", region_name="us-east-1").create_schedule_group(Name=GROUP)
    world.boot(TIMER_GROUP=GROUP, TIMER_TARGET_ARN=TARGET, TIMER_ROLE_ARN=ROLE)
    basket = start_basket(world)
    world.click(basket, "approve_basket", user="U0BOB")
    world.run_lazies()
    (held,) = panel()
    assert held["status"] == Status.HELD == "held"
    assert held["approved_by"] == ["Bob"]
    assert world.clock() + 60 <= held["ordering_at"] <= world.clock() + 121
