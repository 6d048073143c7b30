"""Approve ends in an order: the basket becomes a Slack canvas checklist tabbed in its channel,
once, whatever the crashes, retries and double clicks (issue 22).

Through the real handler, the fake Web API (``bot.sandbox.slack_canvases``: canvases.create
refusing what Slack refuses) and moto; crash points in fresh processes (``tests.lambda_invoke``).
"""

from __future__ import annotations

import json
import time
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest

from bot.orders.order import week_title
from bot.records.history import Ended, history_prefix
from bot.records.orders import orders_prefix
from bot.sandbox.anthropic_api import Reply
from bot.sandbox.slack_canvases import SCOPES, Canvas
from bot.sandbox.world import CHANNEL
from tests.bot_kit import World, start_basket
from tests.fault_kit import s3_of

LEASE = 1.0


def canvases(world: World) -> list[Canvas]:
    return list(world.slack.canvases.values())


def order_reply(world: World, message: dict[str, Any]) -> dict[str, Any]:
    (reply,) = [r for r in world.slack.thread(CHANNEL, message["ts"]) if "rder" in r["text"]]
    return reply


def link_of(reply: dict[str, Any]) -> str | None:
    for block in reply.get("blocks") or []:
        for element in block.get("elements") or []:
            if element.get("type") == "button" and "url" in element:
                assert element["text"]["text"] == "Open the shopping list"
                return str(element["url"])
    return None


def bucket_objects(world: World, prefix: str) -> dict[str, Any]:
    """The JSON of every object under ``prefix`` in the world's bucket."""
    s3, bucket = world.s3, world.env["CHECKPOINT_BUCKET"]
    listed = s3.list_objects_v2(Bucket=bucket, Prefix=prefix).get("Contents", [])
    return {
        o["Key"]: json.loads(s3.get_object(Bucket=bucket, Key=o["Key"])["Body"].read())
        for o in listed
    }


def outcome_of(world: World) -> Ended:
    (body,) = bucket_objects(world, history_prefix("weekly-shop/")).values()
    return Ended.from_json(body["ended"])


def approve(world: World, basket: dict[str, Any], user: str = "U0BOB") -> None:
    world.click(basket, "approve_basket", user=user)
    world.run_lazies()


def test_an_approved_basket_becomes_one_canvas_checklist_tabbed_in_its_channel(
    world: World,
) -> None:
    """canvases.create with channel_id (a free workspace refuses a canvas without one), titled
    with the week, one checklist item per item under the aisle headings; the thread links to it
    and the outcome record keeps the link and the basket's SHA-256."""
    basket = start_basket(world)
    approve(world, basket)
    (canvas,) = canvases(world)
    assert canvas.channel == CHANNEL
    assert canvas.title.startswith("Shopping list · week of ")
    lines = canvas.checklist()
    assert len(lines) == 10 and "500 g chicken breast" in lines
    assert "\n## Produce\n\n- [ ] 2 bell peppers\n" in canvas.markdown
    assert canvas.markdown.startswith("Approved by ![](@U0BOB)")
    reply = order_reply(world, basket)
    assert reply["text"] == "Ordered 10 items."
    assert link_of(reply) == f"https://weekly-shop.slack.com/docs/T0TEAM/{canvas.canvas_id}"
    (create,) = world.slack.calls_to("canvases.create")
    assert create.args["channel_id"] == CHANNEL

    ((key, record),) = bucket_objects(world, orders_prefix("weekly-shop/")).items()
    assert (
        key
        == f"weekly-shop-orders/T0TEAM/{json.loads(world.buttons(basket)['approve_basket'])['s']}"
    )
    assert record["order"]["state"] == "placed" and record["order"]["ref"] == canvas.canvas_id
    ended = outcome_of(world)
    assert ended.destination == "canvas" and ended.order_url == link_of(reply)
    assert ended.sha256 == record["order"]["sha256"]


def test_item_text_cannot_become_a_link_a_mention_a_heading_or_a_table_in_the_canvas(
    world: World,
) -> None:
    """Canvas markdown parses links, ``![](@U…)`` mentions, headings, emphasis and tables; the
    model's item text is escaped so each shows as written, one checklist line per item."""
    names = [
        "[free money](https://evil.example/)",
        "<!channel> milk",
        "# Heading",
        "*bold* beans",
        "a | b | c",
        "![](@U0ALICE) cheese",
        "eggs\n- [ ] smuggled item",
    ]
    items = [{"name": n, "quantity": 1, "unit": ""} for n in names]
    world.claude.script(Reply(tool_input={"items": items}))
    basket = start_basket(world)
    approve(world, basket)
    (canvas,) = canvases(world)
    lines = canvas.checklist()
    assert len(lines) == len(names)
    assert lines[0] == r"1 \[free money\]\(https\:\/\/evil\.example\/\)"
    assert lines[1] == r"1 \<\!channel\> milk"
    assert lines[2] == r"1 \# Heading"
    assert lines[3] == r"1 \*bold\* beans"
    assert lines[4] == r"1 a \| b \| c"
    assert lines[5] == r"1 \!\[\]\(\@U0ALICE\) cheese"
    assert lines[6] == r"1 eggs \- \[ \] smuggled item"
    assert "\n# " not in canvas.markdown and "](http" not in canvas.markdown


def test_two_approvers_pressing_at_once_make_one_canvas(world: World) -> None:
    basket = start_basket(world)
    world.click(basket, "approve_basket", user="U0BOB")
    world.click(basket, "approve_basket", user="U0CAROL")
    world.run_lazies()
    assert len(canvases(world)) == 1
    assert len(world.slack.calls_to("canvases.create")) == 1


def test_an_app_installed_without_canvases_write_says_so_with_retry_and_orders_once_fixed(
    world: World,
) -> None:
    """Slack answers missing_scope for a token without canvases:write (an installation from
    before the scope was in the manifest): the thread says why, with Retry; nothing is made."""
    world.slack.scopes = SCOPES - {"canvases:write"}
    basket = start_basket(world)
    approve(world, basket)
    reply = order_reply(world, basket)
    assert reply["text"].startswith("Approved, but the order did not go through: the app needs")
    (retry,) = [e for b in reply["blocks"] if b["type"] == "actions" for e in b["elements"]]
    assert retry["action_id"] == "retry_order"
    assert canvases(world) == []

    world.click(reply, "retry_order", user="U0CAROL")  # still refused: said again, nothing made
    world.run_lazies()
    assert order_reply(world, basket)["text"].startswith("Approved, but the order did not go")
    world.slack.scopes = SCOPES  # reinstalled with the scope
    world.click(reply, "retry_order", user="U0CAROL")
    world.run_lazies()
    (canvas,) = canvases(world)
    placed = order_reply(world, basket)  # the same message, now with the link
    assert placed["ts"] == reply["ts"] and placed["text"] == "Ordered 10 items."
    assert link_of(placed) == f"https://weekly-shop.slack.com/docs/T0TEAM/{canvas.canvas_id}"
    world.click(reply, "retry_order", user="U0CAROL")  # a late Retry shows it, makes nothing
    world.run_lazies()
    assert len(canvases(world)) == 1 and link_of(order_reply(world, basket))
    ended = outcome_of(world)
    assert ended.destination == "canvas" and ended.order_url == link_of(placed)


@pytest.mark.parametrize(
    ("args", "error"),
    [
        ({"title": "x"}, "free_teams_cannot_create_non_tabbed_canvases"),
        (
            {
                "channel_id": CHANNEL,
                "document_content": {"type": "markdown", "markdown": "x" * 1_048_577},
            },
            "canvas_creation_failed",
        ),
        (
            {"channel_id": CHANNEL, "document_content": {"type": "html", "markdown": "x"}},
            "invalid_arguments",
        ),
        ({"channel_id": "C0NOWHERE", "title": "x"}, "channel_not_found"),
    ],
)
def test_the_fake_refuses_canvases_as_slack_does(
    world: World, args: dict[str, Any], error: str
) -> None:
    """docs.slack.dev canvases.create: channel_id "is a required field for free teams"; the
    markdown "is limited to 1 MiB (1,048,576 characters)"; a channel it cannot see."""
    from slack_sdk import WebClient
    from slack_sdk.errors import SlackApiError

    web = WebClient(token=world.env["SLACK_BOT_TOKEN"], base_url=world.env["SLACK_API_URL"])
    with pytest.raises(SlackApiError) as raised:
        web.canvases_create(**args)
    assert raised.value.response["error"] == error


def test_canvases_turned_off_in_the_workspace_is_said_in_the_thread(world: World) -> None:
    world.slack.canvases_enabled = False
    basket = start_basket(world)
    approve(world, basket)
    assert order_reply(world, basket)["text"] == (
        "Approved, but the order did not go through: canvases are turned off in this workspace."
    )


@pytest.mark.parametrize("point", ["order-before-call", "order-after-call", "order-recorded"])
def test_an_approve_killed_around_the_canvas_ends_with_one_canvas_and_the_thread_telling_it(
    served: World, point: str
) -> None:
    """Killed before the call (the record says placing), after the call before the record (the
    canvas exists, the record still says placing: the retry finds it by the order's reference in
    its title, files.list, and adopts it) and after the record before Slack was told (the retry
    shows the record): Lambda's retry of the same click ends with one canvas, one order reply."""
    world = served
    world.boot(LOCK_TTL_SECONDS=str(LEASE))
    basket = start_basket(world)
    world.click(basket, "approve_basket")
    (lost,) = world.lam.take()
    world.in_fresh_process(lost.payload, crash_at=point)
    made = 0 if point == "order-before-call" else 1
    assert len(canvases(world)) == made
    time.sleep(LEASE + 0.2)
    world.in_fresh_process(lost.payload)  # Lambda's retry
    (canvas,) = canvases(world)
    assert len(world.slack.calls_to("canvases.create")) == 1
    reply = order_reply(world, basket)
    assert reply["text"] == "Ordered 10 items."
    assert link_of(reply) == f"https://weekly-shop.slack.com/docs/T0TEAM/{canvas.canvas_id}"
    world.in_fresh_process(lost.payload)  # and a third delivery changes nothing
    assert len(canvases(world)) == 1
    assert len([r for r in world.slack.thread(CHANNEL, basket["ts"]) if "rder" in r["text"]]) == 1
    s3 = s3_of(world)
    keys = [o["Key"] for o in s3.list_objects_v2(Bucket="bot-bucket").get("Contents", [])]
    assert not [k for k in keys if k.endswith("/lock")]


def test_the_home_tabs_past_order_opens_its_list(world: World) -> None:
    """What was ordered stays findable: the Home tab's ordered outcome has Open list (the
    canvas) beside Repeat this order."""
    basket = start_basket(world)
    approve(world, basket)
    (canvas,) = canvases(world)
    world.open_home("U0ALICE")
    home = world.slack.home("U0ALICE")
    assert home is not None
    elements = [e for b in home["blocks"] if b["type"] == "actions" for e in b.get("elements", [])]
    (opened,) = [e for e in elements if e["text"]["text"] == "Open list"]
    assert opened["url"] == f"https://weekly-shop.slack.com/docs/T0TEAM/{canvas.canvas_id}"
    assert [e["text"]["text"] for e in elements][:2] == ["Open list", "Repeat this order"]


def test_the_list_is_titled_with_the_week_the_dinners_are_for_and_no_internal_code(
    world: World,
) -> None:
    """Approved on a Friday for dinners on Tuesday and Thursday (the issue's: Friday 4
    December): the list is for the next week, not the week it was approved in; the channel's
    tab says when it was approved, in words, with no reference code. (The played clock moves the
    bot to the next Friday, whatever day the suite runs.)"""
    today = datetime.now(UTC).date()
    friday = today + timedelta(days=(4 - today.weekday()) % 7 or 7)
    world.clock.reach(
        datetime(friday.year, friday.month, friday.day, 17, 2, tzinfo=UTC).timestamp()
    )
    world.shop("spaghetti bolognese on Tuesday, chicken curry on Thursday")
    world.run_lazies()
    (basket,) = world.baskets()
    approve(world, basket)
    (canvas,) = canvases(world)
    approved = datetime.fromtimestamp(world.clock(), UTC)
    monday = friday + timedelta(days=3)
    assert canvas.title == (
        f"Shopping list · week of {monday.day} {monday:%B %Y} · approved "
        f"{approved.day} {approved:%b %H:%M} UTC"
    )
    assert "#" not in canvas.title


@pytest.mark.parametrize(
    ("request_text", "week"),
    [
        ("tacos on Tuesday and soup on Thursday", "7 December 2026"),  # asked on a Friday
        ("pasta on Friday", "30 November 2026"),  # today
        ("tacos tomorrow", "30 November 2026"),  # Saturday
        ("wed: soup, tues: pie", "7 December 2026"),
        ("Mondays: pasta", "7 December 2026"),
        ("sunflower oil and dinners this week", "30 November 2026"),  # no day named
    ],
)
def test_the_week_is_the_first_dinner_day_named_on_or_after_the_approval(
    request_text: str, week: str
) -> None:
    friday = int(datetime(2026, 12, 4, 17, 2, tzinfo=UTC).timestamp())
    assert week_title(friday, request_text) == f"Shopping list · week of {week}"
