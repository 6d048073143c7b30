"""Whatever the model writes, the basket message fits Slack's limits, pings nobody, says how many
items it left out, and can still be approved.
"""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from bot.sandbox.anthropic_api import Reply
from bot.sandbox.block_kit import LIMITS, block_errors, parsed_texts
from bot.sandbox.block_kit import texts as block_texts
from bot.slack.basket_items import ITEMS_TEXT_BUDGET, MAX_ITEM_CHARS
from bot.slack.basket_message import answered_blocks, basket_blocks
from bot.slack.blocks import Ref
from bot.slack.order_said import ordered_blocks
from tests.bot_kit import (
    CHANNEL,
    World,
    context_text,
    section_text,
    start_basket,
)
from tests.fault_kit import (
    thread_texts,
)
from workflow.shop.basket import AISLES, MAX_ITEM_LENGTH, MAX_ITEMS, Item
from workflow.shop.text import one_line

INJECTION = "\n".join(
    [
        "<!channel> milk",
        "<!here> eggs",
        "<!everyone> bread",
        "<@U123> butter",
        "<@W999|boss> cheese",
        "<!subteam^S1> apples",
        "<!subteam^S1|@team> pears",
        "<https://evil.test|free groceries>",
        "<mailto:x@evil.test|mail>",
        "*bold* _italic_ ~strike~ `code`",
        "> quoted & <b>html</b>",
        "&lt;!channel&gt; pre-escaped",
    ]
)


def item_blocks(blocks: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The sections that list items (bullet lines)."""
    return [b for b in blocks if b["type"] == "section" and b["text"]["text"].startswith("• ")]


def plain_context(message: dict[str, Any]) -> str:
    """The plain_text elements of a message's context blocks (the person's own words)."""
    return " ".join(
        e["text"]
        for b in message.get("blocks", [])
        if b["type"] == "context"
        for e in b["elements"]
        if e["type"] == "plain_text"
    )


def _basket_checks(world: World, expected_items: int) -> dict[str, Any]:
    """The posted basket fits Slack, pings no one and counts what it left out."""
    assert world.slack.violations == []
    (basket,) = world.baskets()
    text = section_text(basket)
    shown = text.count("\n• ") + text.startswith("• ")
    if shown < expected_items:
        hidden = expected_items - shown
        assert f"…and {hidden} more item" in text
        assert f"(approving orders all {expected_items})" in text
    else:
        assert "more item" not in text
    assert sum(len(t) for t in block_texts(basket["blocks"])) <= LIMITS["message.blocks_text"]
    for call in world.slack.calls_to("chat.postMessage") + world.slack.calls_to("chat.update"):
        assert len(call.args.get("text") or "") <= 3000
    return basket


def _approve_and_check(world: World, basket: dict[str, Any], expected_items: int) -> None:
    world.click(basket, "approve_basket")
    world.run_lazies()
    assert world.slack.violations == []
    assert thread_texts(world, basket) == [f"Ordered {expected_items} items."]
    (ordered,) = world.slack.thread(CHANNEL, basket["ts"])
    shown = [b for b in item_blocks(ordered["blocks"])]
    assert shown == item_blocks(basket["blocks"])  # the outcome lists what was ordered
    assert "Approved by <@U0BOB>" in context_text(world.baskets()[0])
    assert set(world.slack.mentions()) <= {"<@U0ALICE>", "<@U0BOB>"}


@pytest.mark.parametrize(
    "text, items",
    [
        ("\n".join(f"{i + 1} g of item number {i}" for i in range(500)), 500),
        ("\n".join("x" * 500 for _ in range(50)), 50),
        ("\n".join(f"{i:03d} " + "word " * 39 for i in range(500)), 500),
        (INJECTION, 12),
        ("\u202eevil\u202c\n\x00nul\n\ttab\n" + "😀" * 400, 4),
    ],
    ids=[
        "500 items",
        "500-char names",
        "500 long items",
        "mrkdwn",
        "control chars",
    ],
)
def test_any_basket_that_fits_the_form_is_shown_within_slack_limits_and_can_be_approved(
    world: World, text: str, items: int
) -> None:
    """The fake answers the forced submit_basket call with ``text`` read one item a line."""
    world.claude.script(Reply(text=text))
    world.shop()
    world.run_lazies()
    basket = _basket_checks(world, items)
    if "x" * 10 in text:
        lines = section_text(basket).splitlines()
        assert all(len(line) <= MAX_ITEM_CHARS + 2 for line in lines)
        assert all(line.endswith("…") for line in lines if line.startswith("• 1 x"))
    if text == INJECTION:
        # Shown exactly as written, in plain_text, where Slack parses no mention, link or format.
        shown = section_text(basket)
        assert "• 1 <!channel> milk" in shown and "• 1 <https://evil.test|free groceries>" in shown
        assert "• 1 &lt;!channel&gt; pre-escaped" in shown and "• ~strike~" not in shown
        assert all(b["text"]["type"] == "plain_text" for b in item_blocks(basket["blocks"]))
        posted = world.slack.calls_to("chat.postMessage")[-1].args
        assert "<http" not in "".join(parsed_texts(posted))
    assert set(world.slack.mentions()) <= {"<@U0ALICE>"}
    _approve_and_check(world, basket, items)


@pytest.mark.parametrize(
    "reply",
    [
        Reply(text="\n".join(f"{i + 1} g of item number {i}" for i in range(10_000))),
        Reply(text="x" * 5000),
        Reply(tool_input={"items": [{"name": "<!channel> milk", "quantity": "2", "unit": ""}]}),
        Reply(tool_input={"items": [{"name": "milk", "quantity": 2, "unit": "", "price": 3}]}),
        Reply(tool_input=["500 g chicken"]),
        Reply(text=""),
        Reply(text="\n\n  \n- \n*\n"),
    ],
    ids=[
        "10000 items",
        "a 5000-char name",
        "quantity as text",
        "unknown field",
        "not an object",
        "no items",
        "only bullets",
    ],
)
def test_a_reply_that_does_not_fit_the_form_is_a_failed_round_said_plainly(
    world: World, reply: Reply
) -> None:
    """Nothing is shown as a basket that is not one: more than 500 items, a name too long to
    be one, a mistyped or unknown field. The household is told in a sentence, nobody is asked
    to approve anything, and /shop can be tried again."""
    world.claude.script(reply)
    world.shop()
    world.run_lazies()
    assert world.baskets() == []
    (message,) = world.slack.messages(CHANNEL)
    assert message["text"] == (
        "<@U0ALICE> No basket this time: the shopper's answer did not fit a basket. "
        "Try /shop again."
    )
    assert set(world.slack.mentions()) <= {"<@U0ALICE>"}


def test_a_basket_is_grouped_by_aisle_in_shop_order_quantity_first(world: World) -> None:
    """The default fake basket names its aisles: each is a bold heading (ours, mrkdwn) over its
    items (the model's, plain_text), in the order of a shop's walk."""
    basket = start_basket(world)
    texts = [b["text"]["text"] for b in basket["blocks"] if b["type"] == "section"]
    assert texts == [
        "*Produce*",
        "• 2 bell peppers\n• 1 head broccoli\n• 3 carrots\n• 1 bulb garlic\n• 150 g mushrooms",
        "*Meat and fish*",
        "• 500 g chicken breast",
        "*Dairy and eggs*",
        "• 250 g mozzarella",
        "*Bakery*",
        "• 2 pizza bases",
        "*Pantry*",
        "• 250 g red lentils\n• 400 g tinned chopped tomatoes",
    ]


def test_a_revised_basket_with_injection_fits_and_pings_no_one(world: World) -> None:
    from tests.bot_kit import change

    basket = start_basket(world)
    many = "\n".join(f"{i} g of something long enough to need the budget" for i in range(1, 489))
    world.claude.script(Reply(text=INJECTION + "\n" + many))
    change(world, basket, "<!channel> more, and <@U0BOSS> decides")
    first, second = world.baskets()
    assert world.slack.violations == []
    assert "<!channel> more, and <@U0BOSS> decides" in plain_context(first)
    assert "approving orders all 500" in section_text(second)
    world.click(second, "approve_basket")
    world.run_lazies()
    assert thread_texts(world, second) == ["Ordered 500 items."]
    assert set(world.slack.mentions()) <= {"<@U0ALICE>", "<@U0BOB>"}


names = st.text(
    st.characters(codec="utf-8", exclude_categories=["Cs"]) | st.sampled_from("<>&@!|*_`\n"),
    min_size=1,
    max_size=MAX_ITEM_LENGTH,
).filter(one_line)  # a name of control characters alone is no name (workflow.shop.text)
items_lists = st.lists(
    st.builds(
        Item,
        name=names,
        quantity=st.none() | st.integers(1, 100_000) | st.floats(0.001, 100_000),
        unit=st.text(max_size=30),
        note=st.none() | st.text(max_size=300),
        aisle=st.none() | st.sampled_from(AISLES),
    ),
    max_size=MAX_ITEMS,
)


@settings(max_examples=150, deadline=None)
@given(items=items_lists, note=st.text(max_size=500), round=st.integers(1, 10))
def test_basket_blocks_always_fit_slack(items: list[Item], note: str, round: int) -> None:
    """Block Kit for any items a Basket can hold (≤ 500, each field at its longest), in any
    aisles: ≤ 50 blocks, ≤ 3000 characters a section, the overflow line counting the rest."""
    ref = Ref("0" * 24, "f" * 32)
    for blocks in (
        basket_blocks(
            round=round, max_rounds=10, items=items, requested_by="U0ALICE", progress=note, ref=ref
        ),
        answered_blocks(
            round=round,
            max_rounds=10,
            items=items,
            verdict="Approved",
            user="U0BOB",
            at=1,
            note=note,
        ),
        ordered_blocks(f"Ordered {len(items)} items.", items),
    ):
        assert block_errors(blocks) == []
        texts = list(block_texts(blocks))
        assert sum(map(len, texts)) <= LIMITS["message.blocks_text"]
        sections = "\n".join(b["text"]["text"] for b in blocks if b["type"] == "section")
        # Whatever the items say, Slack parses none of it: no raw < or > where Slack would.
        parsed = "\n".join(parsed_texts(blocks))
        assert "<" not in parsed.replace("<@U0ALICE>", "").replace("<@U0BOB>", "").replace(
            "<!date^1^{date_short_pretty} at {time}|1>", ""
        )
        assert all(b["text"]["type"] == "plain_text" for b in item_blocks(blocks))
        lines = [line for b in item_blocks(blocks) for line in b["text"]["text"].split("\n")]
        if len(lines) < len(items):
            assert f"…and {len(items) - len(lines)} more item" in sections
            assert sum(len(line) + 1 for line in lines) <= ITEMS_TEXT_BUDGET
        else:
            assert len(lines) == len(items) and "more item" not in sections


def test_what_the_approver_sees_is_what_is_ordered(world: World) -> None:
    """Only the tool call's items are the basket: a text block before it ("Here is your
    basket:") is not an item. An item's formatting characters (~strike~, *bold*, _italic_,
    `code`) show as written, in plain_text, so a struck-through line is not mistaken for one
    taken out before it is ordered."""
    world.claude.script(
        Reply(
            preamble="Here is your basket for the week:\n\n## Produce",
            text="\n".join(
                [
                    "2 ~pitta~",
                    "250 g *feta* for the _salad_",
                    "`soy sauce`, 1 bottle",
                    "salt & vinegar",
                ]
            ),
        )
    )
    basket = start_basket(world)
    (items,) = item_blocks(basket["blocks"])
    assert items["text"] == {
        "type": "plain_text",
        "text": "\n".join(
            [
                "• 2 ~pitta~",
                "• 250 g *feta* for the _salad_",
                "• 1 `soy sauce`, 1 bottle",
                "• 1 salt & vinegar",
            ]
        ),
        "emoji": False,
    }
    _approve_and_check(world, world.baskets()[0], 4)
    (answered,) = item_blocks(world.baskets()[0]["blocks"])
    assert answered == items  # the answered message shows the same items, the same way


def test_control_characters_the_model_writes_are_dropped_before_anything_keeps_them(
    world: World,
) -> None:
    """The model's names go through the same rule as a person's (``workflow.shop.text``): an
    escape sequence, a NUL or a right-to-left override never reaches the checkpoint, Slack, a
    canvas or a destination, and the rest of the name stays."""
    world.claude.script(Reply(text="2 \x1b[2Jleeks\n1 milk\u202eegg\n3 on\x00ions"))
    basket = start_basket(world)
    lines = "\n".join(b["text"]["text"] for b in item_blocks(basket["blocks"])).splitlines()
    assert sorted(lines) == ["• 1 milkegg", "• 2 [2Jleeks", "• 3 onions"]
    world.click(basket, "approve_basket", user="U0BOB")
    world.run_lazies()
    said = repr(world.slack.messages(CHANNEL)) + repr(world.slack.calls)
    assert "\x1b" not in said and "\u202e" not in said and "\x00" not in said


def test_a_quantity_below_the_least_from_the_model_is_no_basket() -> None:
    """0.0001 is the least quantity of a new item (``MIN_QUANTITY``: 0.1 g as kg), the
    model's too: a reply with less does not fit a basket (said plainly, as any unfit reply)."""
    from workflow.shop.shopper import items_from_tool as items_of

    with pytest.raises(ValueError, match="at least 0.0001"):
        items_of({"items": [{"name": "salt", "quantity": 0.00001, "unit": "kg"}]})
    (salt,) = items_of({"items": [{"name": "salt", "quantity": 0.0001, "unit": "kg"}]})
    assert salt.quantity == 0.0001
