"""The app's Home tab through the real handler: signed Events API deliveries (``url_verification``,
``app_home_opened``), acked at once and published in a lazy run; what waits and what was ordered;
Show items; Repeat this order through the normal approval flow, without a model call; a bounded
number of S3 requests, all under the workspace's own prefixes."""

from __future__ import annotations

import json
import re
import time
from typing import Any

import pytest

from bench.common import RequestCounter
from bot.records.history import history_prefix
from bot.records.workspace_settings_store import settings_prefix
from bot.sandbox.anthropic_api import Reply
from bot.sandbox.block_kit import parsed_texts, view_errors
from bot.sandbox.slack_events import app_home_opened, url_verification
from bot.sandbox.slack_requests import with_bad_signature
from bot.slack.home_view import HIDE_ITEMS, MAX_WAITING, REPEAT, SHOW_ITEMS
from bot.steps.home import READ_WAITING
from tests.bot_kit import CHANNEL, SECRET, World, context_text, start_basket
from tests.fault_kit import thread_texts
from workflow.shop.records import SHOP_PREFIX


def texts(view: dict[str, Any] | None) -> str:
    assert view is not None
    found = []
    for block in view["blocks"]:
        for part in [block.get("text"), *block.get("elements", [])]:
            if isinstance(part, dict) and isinstance(part.get("text"), str):
                found.append(part["text"])
    return "\n".join(found)


def buttons(view: dict[str, Any] | None) -> list[dict[str, Any]]:
    assert view is not None
    found = [b["accessory"] for b in view["blocks"] if "accessory" in b]
    found += [e for b in view["blocks"] if b["type"] == "actions" for e in b["elements"]]
    return found


def ordered(world: World, user: str = "U0BOB") -> dict[str, Any]:
    world.shop()
    world.run_lazies()
    basket = world.baskets()[-1]
    world.click(basket, "approve_basket", user=user)
    world.run_lazies()
    return basket


def test_slack_checks_the_events_url_with_a_signed_challenge(world: World) -> None:
    """Saving the Events API request URL sends ``url_verification``; Bolt answers the challenge
    once the signature checks, and 401 otherwise (docs.slack.dev, "url_verification event")."""
    answer = world.send(
        url_verification(SECRET, "3eZbrw1aBm2rZgRNFdxV2595E9CY3gmdALWMmHkvFXO7tYXAYM8P")
    )
    assert answer["statusCode"] == 200
    assert json.loads(answer["body"]) == {
        "challenge": "3eZbrw1aBm2rZgRNFdxV2595E9CY3gmdALWMmHkvFXO7tYXAYM8P"
    }
    forged = world.send(with_bad_signature(url_verification(SECRET, "x")))
    assert forged["statusCode"] == 401 and "x" not in forged.get("body", "")


def test_an_empty_home_tab_says_how_to_start(world: World) -> None:
    view = world.open_home("U0ALICE")
    shown = texts(view)
    assert "Nothing is waiting" in shown and "No basket has ended yet" in shown
    assert world.slack.violations == [] and view_errors(view) == []


def test_the_home_tab_shows_what_waits_and_what_was_ordered(world: World) -> None:
    ordered(world)
    world.shop("tacos on Friday <!channel>", user="U0CAROL")
    world.run_lazies()
    waiting = world.baskets()[-1]
    view = world.open_home("U0ALICE")
    shown = texts(view)
    assert "*Basket 1 of 3* for <@U0CAROL>" in shown
    assert "\ntacos on Friday <!channel>\n" in shown  # what was asked, plain_text: pings nobody
    assert "*Ordered* · 10 items · by <@U0BOB>" in shown
    (link,) = [b for b in buttons(view) if b["action_id"] == "home_open"]
    assert (
        link["url"]
        == f"https://weekly-shop.slack.com/archives/{CHANNEL}/p{waiting['ts'].replace('.', '')}"
    )
    repeat = [b for b in buttons(view) if b["action_id"] == REPEAT]
    assert len(repeat) == 1 and repeat[0]["style"] == "primary"
    # The request is the person's words: shown as typed, pinging nobody.
    assert "<!channel>" not in "".join(parsed_texts(view))
    assert world.slack.violations == []


def test_two_baskets_waiting_for_one_person_say_what_each_is_for(world: World) -> None:
    """Issue 20: two waiting baskets of one person showed as identical rows. Each receipt keeps
    the first words of its request (percent-encoded in the object's metadata, which S3 takes as
    ASCII headers only), shown under its row as the person typed them."""
    world.shop("tacos on Friday", user="U0CAROL")
    world.shop("soup on Sunday, bread " + "é" * 200, user="U0CAROL")
    world.run_lazies()
    shown = texts(world.open_home("U0CAROL"))
    assert "\ntacos on Friday\n" in shown
    assert "\nsoup on Sunday, bread " + "é" * 58 + "\n" in shown  # its first 80 characters
    assert world.slack.violations == []


def test_a_rejected_basket_and_a_failed_first_basket_are_outcomes_too(world: World) -> None:
    basket = start_basket(world)
    world.click(basket, "reject_basket", user="U0BOB")
    world.run_lazies()
    world.claude.script(Reply(text="500 g chi", stop_reason="max_tokens"))
    world.shop("fish on Friday")
    world.run_lazies()
    shown = texts(world.open_home("U0ALICE"))
    failed, rejected = shown.index("*Failed*"), shown.index("*Rejected* · 10 items · by <@U0BOB>")
    assert failed < rejected  # newest first
    assert "*Failed* · the shopper wrote no basket" in shown
    assert REPEAT not in json.dumps(world.slack.home("U0ALICE"))  # nothing to repeat


def test_a_retried_delivery_publishes_the_tab_and_the_messages_tab_nothing(
    world: World,
) -> None:
    """Slack retries an event that got no 200 in time (``X-Slack-Retry-Num``), perhaps because
    the first delivery could not hand its work off: the retry is handled like it (publishing a
    Home tab again is safe), never dropped."""
    retry = world.send(app_home_opened(SECRET, "U0ALICE", retry_num=1, retry_reason="http_error"))
    assert retry["statusCode"] == 200
    world.run_lazies()
    assert len(world.slack.calls_to("views.publish")) == 1
    world.slack.calls.clear()
    assert world.open_home("U0BOB", tab="messages") is None
    assert world.slack.calls_to("views.publish") == []


def test_show_items_opens_one_outcome_and_hide_closes_it(world: World) -> None:
    ordered(world)
    view = world.open_home("U0ALICE")
    (show,) = [b for b in buttons(view) if b["action_id"] == SHOW_ITEMS]
    opened = world.home_click(SHOW_ITEMS, show["value"])
    assert "• 500 g chicken breast" in texts(opened)
    (hide,) = [b for b in buttons(opened) if b["action_id"] == HIDE_ITEMS]
    closed = world.home_click(HIDE_ITEMS, hide["value"])
    assert "chicken breast" not in texts(closed)
    assert world.slack.violations == []


def test_repeat_this_order_posts_it_again_as_basket_one_without_a_model_call(
    world: World, s3: Any, bucket: str
) -> None:
    first = ordered(world)
    calls = world.claude.message_calls
    view = world.open_home("U0ALICE")
    (repeat,) = [b for b in buttons(view) if b["action_id"] == REPEAT]
    after = world.home_click(REPEAT, repeat["value"], user="U0CAROL")
    assert f"Posted the same order again in <#{CHANNEL}>." in texts(after)
    assert world.claude.message_calls == calls  # the recorded items, not the model's
    again = world.baskets()[-1]
    assert again["ts"] != first["ts"]
    assert [b["text"]["text"] for b in again["blocks"] if b["type"] == "section"] == [
        b["text"]["text"] for b in first["blocks"] if b["type"] == "section"
    ]
    assert "For <@U0CAROL>" in json.dumps(again["blocks"])
    # The normal approval flow: it waits, shows on the Home tab, and can be approved.
    assert "*Basket 1 of 3* for <@U0CAROL>" in texts(world.open_home("U0ALICE"))
    world.click(again, "approve_basket", user="U0BOB")
    world.run_lazies()
    assert thread_texts(world, again) == ["Ordered 10 items."]
    assert texts(world.open_home("U0ALICE")).count("*Ordered* · 10 items") == 2


def test_repeat_of_an_order_that_is_not_there_changes_nothing(world: World) -> None:
    ordered(world)
    before = len(world.baskets())
    after = world.home_click(REPEAT, "0000000000000-nosuchsession")
    assert "I couldn't find that order any more" in texts(after)
    assert len(world.baskets()) == before


@pytest.mark.parametrize("past", [1, 30])
def test_opening_the_home_tab_costs_the_same_however_long_the_history(
    world: World, s3: Any, bucket: str, past: int
) -> None:
    """At most one LIST of outcome names, ten GETs of outcomes, one LIST of the sessions'
    objects, a HEAD of the newest receipts of sessions not ended (here the one waiting) and
    one GET of the workspace's settings (conditional once a container holds them); and every
    key or prefix read is the workspace's."""
    for _ in range(past):
        ordered(world)
    world.shop("tacos")
    world.run_lazies()
    counter = RequestCounter(s3)
    read: list[str] = []

    def note(params: dict[str, Any], **_: Any) -> None:
        read.append(str(params.get("Key") or params.get("Prefix")))

    s3.meta.events.register("provide-client-params.s3", note)
    world.open_home("U0ALICE")
    s3.meta.events.unregister("provide-client-params.s3", note)
    calls = counter.take()
    assert calls["ListObjectsV2"] == 2
    assert calls["GetObject"] == min(past, 10) + 1  # the outcomes shown, and the settings
    assert calls["HeadObject"] == 1  # the waiting basket's receipt: its metadata only
    assert sum(calls.values()) == 2 + min(past, 10) + 1 + 1
    mine = (SHOP_PREFIX, history_prefix(SHOP_PREFIX), settings_prefix(SHOP_PREFIX))
    assert all(k.startswith(tuple(f"{p}T0TEAM/" for p in mine)) for k in read), read


def test_only_a_channels_members_see_its_baskets_or_can_repeat_its_orders(world: World) -> None:
    """A private channel's baskets are nobody else's business: the Home tab lists a basket, an
    outcome, only for people in its channel (``conversations.members``), and Repeat this order
    from someone else finds nothing, as if there were no such order."""
    world.slack.add_channel("G0PRIV", "family", members=["U0ALICE"], private=True)
    world.shop("birthday dinner", user="U0ALICE", channel_id="G0PRIV")
    world.run_lazies()
    (private,) = world.baskets("G0PRIV")
    world.click(private, "approve_basket", user="U0ALICE", channel_id="G0PRIV")
    world.run_lazies()
    world.shop("tacos", user="U0ALICE", channel_id="G0PRIV")
    world.run_lazies()
    mine = texts(world.open_home("U0ALICE"))
    assert "*Basket 1 of 3* for <@U0ALICE>" in mine and "*Ordered*" in mine
    theirs = texts(world.open_home("U0BOB"))
    assert "Nothing is waiting" in theirs and "No basket has ended yet" in theirs
    (repeat,) = [b for b in buttons(world.slack.home("U0ALICE")) if b["action_id"] == REPEAT]
    refused = world.home_click(REPEAT, repeat["value"], user="U0BOB")
    assert "I couldn't find that order any more" in texts(refused)
    assert len(world.baskets("G0PRIV")) == 2  # nothing posted for Bob


def test_repeat_this_order_twice_in_a_week_posts_it_once(world: World) -> None:
    ordered(world)
    (repeat,) = [b for b in buttons(world.open_home("U0ALICE")) if b["action_id"] == REPEAT]
    world.home_click(REPEAT, repeat["value"], user="U0ALICE")
    again = world.home_click(REPEAT, repeat["value"], user="U0CAROL")
    assert "That order was already repeated this week" in texts(again)
    assert len(world.baskets()) == 2


def test_an_end_slack_did_not_fully_show_is_still_an_outcome_and_the_next_click_shows_it(
    world: World,
) -> None:
    """The order is placed and said in the thread, but the basket's own update fails: the
    session has ended all the same (the Home tab says so, not "waiting"), and a second click
    finishes showing it (saying the outcome again, as every repair errs toward a repeat, never
    toward a loss), then counts as its receipt."""
    basket = start_basket(world)
    world.slack.fail_next("chat.update", error="internal_error")
    world.click(basket, "approve_basket", user="U0BOB")
    world.run_lazies()
    shown = texts(world.open_home("U0ALICE"))
    assert "Nothing is waiting" in shown and "*Ordered* · 10 items" in shown
    world.click(basket, "approve_basket", user="U0BOB")
    world.run_lazies()
    assert "Approved by <@U0BOB>" in context_text(world.baskets()[0])
    assert set(thread_texts(world, basket)) == {"Ordered 10 items."}  # once or twice, no more
    ended = [r for r in json.dumps(world.slack.home("U0ALICE")).split() if "Ordered" in r]
    assert ended


def test_a_retired_basket_is_not_listed_as_waiting(world: World, bucket: str) -> None:
    from bot.records.receipts import S3Receipts

    basket = start_basket(world)
    session = json.loads(world.buttons(basket)["approve_basket"])["s"]
    assert "*Basket 1 of 3*" in texts(world.open_home("U0ALICE"))
    S3Receipts(bucket, SHOP_PREFIX, world.s3).forget("T0TEAM", session)  # as a retire does
    assert "Nothing is waiting" in texts(world.open_home("U0ALICE"))


def _seed_waiting(world: World, bucket: str, n: int) -> None:
    """``n`` baskets waiting in the channel, each as a posted basket leaves its receipt."""
    from bot.records.receipts import S3Receipts, Waiting

    receipts = S3Receipts(bucket, SHOP_PREFIX, world.s3)
    for i in range(n):
        waiting = Waiting(
            request_id=f"seed{i:04d}",
            channel=CHANNEL,
            ts=f"1700000000.{i:06d}",
            round=1,
            requested_by="U0ALICE",
            posted_at=int(time.time()) - 600 + i,
        )
        receipts.mark_shown("T0TEAM", f"seeded-{i:04d}", "000001-0000abcd", waiting)


def test_three_hundred_baskets_waiting_cost_twenty_heads_and_the_newest_is_shown(
    world: World, s3: Any, bucket: str
) -> None:
    """Reading a waiting basket is a HEAD of its receipt, one after another in the lazy
    Lambda: 300 of them took seconds, a few thousand passed Lambda's timeout. Only the newest
    20 receipts are read (a LIST gives each one's LastModified for free); the tab says older
    ones were not read, and stays within Block Kit's 100 blocks, which the fake Web API
    checks as Slack does."""
    _seed_waiting(world, bucket, 300)
    time.sleep(1.1)  # S3's LastModified is whole seconds: the real basket is a second newer
    world.shop("tacos on Friday", user="U0CAROL")
    world.run_lazies()
    counter = RequestCounter(s3)
    view = world.open_home("U0ALICE")
    calls = counter.take()
    assert calls["HeadObject"] == READ_WAITING == 20
    assert calls["ListObjectsV2"] == 2  # outcome names; the sessions' ~300 objects, one page
    assert sum(calls.values()) == 2 + 20 + 1  # and the workspace's settings, one GET
    shown = texts(view)
    assert shown.index("*Basket 1 of 3* for <@U0CAROL>") < shown.index("for <@U0ALICE>")
    assert shown.count("*Basket 1 of 3*") == MAX_WAITING
    assert "…and older ones, not read here" in shown
    assert world.slack.violations == [] and view_errors(view) == []


def test_a_failed_first_basket_shows_only_to_the_person_who_asked(world: World) -> None:
    """A first basket the shopper could not write never appeared in the channel: its request
    is the asker's business. Carol, in the same channel, sees no trace of it; Alice does."""
    world.claude.script(Reply(text="500 g chi", stop_reason="max_tokens"))
    world.shop("fish on Friday for the anniversary", user="U0ALICE")
    world.run_lazies()
    mine = texts(world.open_home("U0ALICE"))
    assert "*Failed* · the shopper wrote no basket" in mine
    assert "fish on Friday for the anniversary" in mine
    theirs = texts(world.open_home("U0CAROL"))
    assert "Failed" not in theirs and "anniversary" not in theirs
    assert "No basket has ended yet" in theirs
    assert world.slack.violations == []


def test_an_outcomes_time_is_the_bots_clocks(world: World) -> None:
    """Cold review: a rejection and a failed first basket were recorded at the wall clock's
    time while every other time on the tab is the bot's clock's (the sandbox plays it ahead)."""
    basket = start_basket(world)
    later = int(time.time()) + 3 * 86400
    world.clock.reach(later)
    world.click(basket, "reject_basket", user="U0BOB")
    world.run_lazies()
    world.claude.script(Reply(text="500 g chi", stop_reason="max_tokens"))
    world.shop("fish on Friday")
    world.run_lazies()
    shown = texts(world.open_home("U0ALICE"))
    times = [int(t) for t in re.findall(r"<!date\^(\d+)\^", shown.split("*Last outcomes*")[1])]
    assert len(times) >= 2 and all(t >= later for t in times)
