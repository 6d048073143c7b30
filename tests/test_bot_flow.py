"""The Slack app end to end: signed requests in real API Gateway v2 shapes, lazy invocations
delivered as new invocations, S3 through moto, Claude through the fake Messages API."""

from __future__ import annotations

import json
from typing import Any

from bot.sandbox.anthropic_api import prompt_of, week_of
from bot.steps.rules import LAST_BASKET
from bot.steps.whom import NOT_SET
from tests.bot_kit import (
    CHANNEL,
    World,
    change,
    context_text,
    header,
    objects,
    section_text,
    start_basket,
)
from tests.fault_kit import ephemeral_texts


def test_shop_posts_basket_one_with_four_buttons(world: World) -> None:
    basket = start_basket(world)
    assert header(basket) == "Basket 1 of 3"
    assert "• 500 g chicken breast" in section_text(basket)
    assert "For <@U0ALICE>: dinners this week" in context_text(basket)
    assert "· basket written: 10 items" in context_text(basket)
    assert "tokens" not in context_text(basket)  # model counts are for the logs (issue 20)
    assert basket["text"] == "Basket 1 of 3: 10 items"
    buttons = world.buttons(basket)
    assert list(buttons) == [
        "approve_basket",
        "reject_basket",
        "change_basket",
        "edit_basket",
    ]
    value = json.loads(buttons["approve_basket"])
    assert set(value) == {"s", "r"}  # the session and the request, nothing else
    actions = next(b for b in basket["blocks"] if b["type"] == "actions")["elements"]
    assert [a.get("style") for a in actions] == ["primary", "danger", None, None]
    assert actions[1]["confirm"]["confirm"]["text"] == "Reject"
    assert world.slack.violations == []


def test_an_answered_basket_still_says_what_was_asked(world: World) -> None:
    """Answered, a basket keeps its "For @alice: …" line above who answered (issue 20), so the
    channel's history says what was approved; its progress ("basket written") goes with the
    buttons."""
    basket = start_basket(world)
    world.click(basket, "approve_basket", user="U0BOB")
    world.run_lazies()
    answered = world.slack.message(CHANNEL, basket["ts"])
    assert answered is not None
    said = context_text(answered)
    assert "For <@U0ALICE>: dinners this week" in said and "Approved by <@U0BOB>" in said
    assert "basket written" not in said and world.buttons(answered) == {}
    assert world.slack.violations == []


def test_each_basket_shows_what_was_asked_as_typed_and_by_whom(world: World) -> None:
    """Nobody but its author sees a slash command's text, so the basket says what was asked.
    The request is shown as plain_text (Slack renders no mentions or formatting in it), cut at
    300 characters with an ellipsis."""
    asked = "tacos on Friday <!channel> *bold* <@U0CAROL> " + "and more " * 50
    world.shop(text=asked)
    world.run_lazies()
    (basket,) = world.baskets()
    change(world, basket, "no fish")

    for shown in (basket, world.baskets()[-1]):  # basket 1 as posted, and basket 2
        who, request, household, progress = next(
            b for b in shown["blocks"] if b["type"] == "context"
        )["elements"]
        assert who == {"type": "mrkdwn", "text": "For <@U0ALICE>:"}
        assert request["type"] == "plain_text" and request["emoji"] is False
        assert request["text"] == asked[:299] + "…"
        assert household == {"type": "plain_text", "text": f"· {NOT_SET}", "emoji": False}
        assert progress["type"] == "mrkdwn" and "<!channel>" not in progress["text"]
    assert world.slack.violations == []


def test_a_revision_is_asked_with_the_weeks_request_and_every_change_so_far(world: World) -> None:
    """Each revision's prompt, as the Messages API receives it, holds the week's request and
    all the changes asked so far, oldest first, not only the last basket and the last change."""
    world.shop(text="tacos on Friday, risotto on Sunday")
    world.run_lazies()
    change(world, world.baskets()[-1], "we're away Friday")
    change(world, world.baskets()[-1], "we still have rice")

    weeks = {week_of(r) for r in world.claude.requests}  # the end of the cached prefix
    assert weeks == {"tacos on Friday, risotto on Sunday"}
    first, second, third = (prompt_of(r) for r in world.claude.requests)
    assert first == "Write this week's basket."
    assert second.startswith("Your last basket:\n- chicken breast: 500 g\n")
    assert "before" not in second  # basket 1's change is the only one
    assert "oldest first (they still hold):\n- we're away Friday\n\n" in third
    assert "The household asks for this change:\nwe still have rice" in third


def test_approve_updates_the_basket_and_orders(world: World, s3: Any, bucket: str) -> None:
    basket = start_basket(world)
    ack = world.click(basket, "approve_basket")
    assert ack["statusCode"] == 200
    world.run_lazies()
    (updated,) = world.baskets()
    assert "Approved by <@U0BOB>" in context_text(updated)
    assert world.buttons(updated) == {}
    assert [m["text"] for m in world.slack.thread(CHANNEL, basket["ts"])] == ["Ordered 10 items."]
    assert not [k for k in objects(s3, bucket) if k.endswith("/lock")]
    assert world.claude.message_calls == 1


def test_reject_says_no_order(world: World) -> None:
    basket = start_basket(world)
    world.click(basket, "reject_basket")
    world.run_lazies()
    assert "Rejected by <@U0BOB>" in context_text(world.baskets()[0])
    thread = world.slack.thread(CHANNEL, basket["ts"])
    assert [m["text"] for m in thread] == ["No order placed: rejected"]


def test_change_then_approve_basket_two(world: World) -> None:
    basket = start_basket(world)
    change(world, basket, "We are away on Saturday, no pizza")
    (opened,) = world.slack.calls_to("views.open")
    view = opened.args["view"]
    view = json.loads(view) if isinstance(view, str) else view
    assert view["blocks"][0]["element"]["max_length"] == 500
    assert view["blocks"][0]["label"]["text"] == "What should change?"
    first, second = world.baskets()
    assert "Change asked by <@U0BOB>: We are away on Saturday, no pizza" in context_text(first)
    assert world.buttons(first) == {}
    assert header(second) == "Basket 2 of 3"
    assert "basket revised: 7 items" in context_text(second)
    world.click(second, "approve_basket")
    world.run_lazies()
    assert [m["text"] for m in world.slack.thread(CHANNEL, second["ts"])] == ["Ordered 7 items."]


def test_the_last_basket_says_it_is_the_last_and_offers_no_change_but_edit_items(
    world: World,
) -> None:
    basket = start_basket(world)
    for text in ("less meat", "more fish"):
        change(world, world.baskets()[-1], text)
    baskets = world.baskets()
    assert [header(b) for b in baskets] == [
        "Basket 1 of 3",
        "Basket 2 of 3",
        "Basket 3 of 3 — last one: approve or reject",
    ]
    assert basket["ts"] == baskets[0]["ts"]
    assert list(world.buttons(baskets[-1])) == [
        "approve_basket",
        "reject_basket",
        "edit_basket",
    ]
    assert world.slack.violations == []


def test_a_change_of_the_last_basket_from_a_stale_modal_is_refused_and_changes_nothing(
    world: World, s3: Any, bucket: str
) -> None:
    """A modal opened from a Change… button the last basket no longer has (a message posted by
    the code before this one): its submission is refused with the reason, the basket still
    waits, and approving it then orders."""
    start_basket(world)
    for text in ("less meat", "more fish"):
        change(world, world.baskets()[-1], text)
    last = world.baskets()[-1]
    before, calls = objects(s3, bucket), world.claude.message_calls

    world.click(last, "change_basket", value=world.buttons(last)["approve_basket"])
    world.submit_change("cheaper please")
    world.run_lazies()

    assert ephemeral_texts(world, "U0BOB") == [LAST_BASKET]
    assert objects(s3, bucket) == before and world.claude.message_calls == calls
    assert world.slack.thread(CHANNEL, last["ts"]) == []
    world.click(world.baskets()[-1], "approve_basket")
    world.run_lazies()
    assert [m["text"] for m in world.slack.thread(CHANNEL, last["ts"])] == ["Ordered 7 items."]
