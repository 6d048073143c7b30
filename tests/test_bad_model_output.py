"""Whatever the model writes, the basket message fits Slack's limits, pings nobody, says how many
items it left out, and can still be approved.
"""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from bot.blocks import (
    ITEMS_TEXT_BUDGET,
    MAX_ITEM_CHARS,
    Ref,
    answered_blocks,
    basket_blocks,
)
from bot.sandbox.anthropic_api import Reply
from bot.sandbox.block_kit import LIMITS, block_errors, parsed_texts
from bot.sandbox.block_kit import texts as block_texts
from tests.bot_kit import (
    World,
    context_text,
    section_text,
    start_basket,
)
from tests.fault_kit import (
    thread_texts,
)

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
    assert "Approved by <@U0BOB>" in context_text(world.baskets()[0])
    assert set(world.slack.mentions()) <= {"<@U0ALICE>", "<@U0BOB>"}


@pytest.mark.parametrize(
    "text, items",
    [
        ("", 0),
        ("\n\n  \n- \n*\n", 0),
        ("\n".join(f"{i} g of item number {i}" for i in range(10_000)), 500),
        ("\n".join("x" * 5000 for _ in range(50)), 50),
        ("\n".join(f"{i:03d} " + "word " * 39 for i in range(500)), 500),
        (INJECTION, 12),
        ("\u202eevil\u202c\n\x00nul\n\ttab\n" + "😀" * 400, 4),
    ],
    ids=[
        "empty",
        "only bullets",
        "10000 lines",
        "5000-char lines",
        "500 long items",
        "mrkdwn",
        "control chars",
    ],
)
def test_any_model_output_becomes_a_basket_that_fits_and_can_be_approved(
    world: World, text: str, items: int
) -> None:
    world.claude.script(Reply(text=text))
    world.shop()
    world.run_lazies()
    basket = _basket_checks(world, items)
    if items == 0:
        assert section_text(basket) == "_(the shopper wrote no items)_"
    if "x" * 10 in text:
        lines = section_text(basket).splitlines()
        assert all(len(line) <= MAX_ITEM_CHARS + 2 for line in lines)
        assert all(line.endswith("…") for line in lines if line.startswith("• x"))
    if text == INJECTION:
        # Shown exactly as written, in plain_text, where Slack parses no mention, link or format.
        shown = section_text(basket)
        assert "• <!channel> milk" in shown and "• <https://evil.test|free groceries>" in shown
        assert "• &lt;!channel&gt; pre-escaped" in shown and "• ~strike~" not in shown
        assert all(b["text"]["type"] == "plain_text" for b in item_blocks(basket["blocks"]))
        posted = world.slack.calls_to("chat.postMessage")[-1].args
        assert "<http" not in "".join(parsed_texts(posted))
    assert set(world.slack.mentions()) <= {"<@U0ALICE>"}
    _approve_and_check(world, basket, items)


def test_a_revised_basket_with_injection_fits_and_pings_no_one(world: World) -> None:
    from tests.bot_kit import change

    basket = start_basket(world)
    many = "\n".join(f"{i} g of something long enough to need the budget" for i in range(600))
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


items_lists = st.lists(
    st.text(
        st.characters(codec="utf-8", exclude_categories=["Cs"]) | st.sampled_from("<>&@!|*_`\n"),
        min_size=1,
        max_size=600,
    ),
    max_size=500,
)


@settings(max_examples=150, deadline=None)
@given(items=items_lists, note=st.text(max_size=500), round=st.integers(1, 10))
def test_basket_blocks_always_fit_slack(items: list[str], note: str, round: int) -> None:
    """Block Kit for any items (as a Basket can hold: ≤ 500 of ≤ 500 characters)."""
    items = [i[:500] for i in items]
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
        shown = sum(1 for line in sections.split("\n") if line.startswith("• "))
        if shown < len(items):
            assert f"…and {len(items) - shown} more item" in sections
            assert sum(len(line) + 1 for line in sections.split("\n")[:shown]) <= ITEMS_TEXT_BUDGET
        else:
            assert "more item" not in sections


CHATTY = """Here is your basket for the week:

## Produce
1. 500 g chicken breast
2) ~2 pizza bases~
**Dairy**
- *250 g mozzarella* for the _pizza_
- `soy sauce`, 1 bottle
- salt & pepper

Enjoy your meals!
Let me know if you need anything else."""


def test_what_the_approver_sees_is_what_is_ordered(world: World) -> None:
    """A reply's preamble, headings, numbering and closing remark are not items; an item's
    formatting characters (~strike~, *bold*, _italic_, `code`) show as written, in plain_text,
    so a struck-through line is not mistaken for one taken out before it is ordered."""
    world.claude.script(Reply(text=CHATTY))
    basket = start_basket(world)
    (items,) = item_blocks(basket["blocks"])
    assert items["text"] == {
        "type": "plain_text",
        "text": "\n".join(
            [
                "• 500 g chicken breast",
                "• ~2 pizza bases~",
                "• *250 g mozzarella* for the _pizza_",
                "• `soy sauce`, 1 bottle",
                "• salt & pepper",
            ]
        ),
        "emoji": False,
    }
    _approve_and_check(world, world.baskets()[0], 5)
    (answered,) = item_blocks(world.baskets()[0]["blocks"])
    assert answered == items  # the answered message shows the same items, the same way
