"""What the household doesn't eat, through the real Slack handler (issue 33, 1 and 4): Settings
saved in the Home tab's modal, ``/shop`` as Slack sends it, the basket as the fake Slack holds
it. With the offline shopper the meat is swapped and the staples are items in their aisles; with
Claude (the fake Messages API) an item the model keeps after being asked again shows the bot's
flag, as plain text that pings nobody."""

from __future__ import annotations

from typing import Any

import pytest

from bot.sandbox.anthropic_api import Reply
from tests.bot_kit import TestWorld, context_text, section_text
from tests.settings_kit import number, open_settings, save, text

ISSUE_WEEK = "spaghetti bolognese on Monday, chicken curry on Wednesday, stir fry on Friday"


def settled(world: TestWorld, **household: dict[str, object]) -> TestWorld:
    """Carol, an admin, saves the household in Settings."""
    world.slack.set_person("U0CAROL", is_admin=True)
    form = open_settings(world, "U0CAROL")
    assert form is not None
    assert save(world, "U0CAROL", form, **household) == {}
    return world


@pytest.fixture
def offline(world: TestWorld, monkeypatch: pytest.MonkeyPatch) -> TestWorld:
    monkeypatch.delenv("ANTHROPIC_API_KEY")
    world.boot()
    return world


def test_the_issues_household_gets_no_meat_and_its_staples_in_their_aisles(
    offline: TestWorld,
) -> None:
    """Issue 33: for 3, "meat, fish", always bread and milk: the basket had 450 g beef mince and
    600 g chicken thighs under "For 3 · no meat, fish", and "1 bread — always" in Other."""
    settled(offline, people=number(3), avoid=text("meat, fish"), staples=text("bread, milk"))
    offline.shop(ISSUE_WEEK)
    offline.run_lazies()
    (basket,) = offline.baskets()
    shown = section_text(basket)
    named = [line.partition(" — ")[0] for line in shown.splitlines()]  # a note may name it
    assert not [line for line in named if "beef mince" in line or "chicken thighs" in line]
    assert "450 g soya mince — instead of beef mince: you said no meat" in shown
    assert "600 g tofu — instead of chicken thighs: you said no meat" in shown
    assert "For 3 · no meat, fish · always bread, milk" in context_text(basket)
    aisles = by_aisle(basket)
    assert "• 1 loaf bread — always" in aisles["*Bakery*"]
    assert "• 1 l milk — always" in aisles["*Dairy and eggs*"]


def by_aisle(basket: dict[str, Any]) -> dict[str, list[str]]:
    """The basket's item lines under each aisle's heading, as Slack shows them."""
    aisles: dict[str, list[str]] = {}
    heading = ""
    for block in basket["blocks"]:
        if block["type"] != "section":
            continue
        if block["text"]["type"] == "mrkdwn" and block["text"]["text"].startswith("*"):
            heading = block["text"]["text"]
        else:
            aisles.setdefault(heading, []).extend(block["text"]["text"].splitlines())
    return aisles


def test_vegetarian_in_settings_is_shown_as_said(offline: TestWorld) -> None:
    settled(offline, avoid=text("vegetarian"))
    offline.shop(ISSUE_WEEK)
    offline.run_lazies()
    (basket,) = offline.baskets()
    assert "vegetarian" in context_text(basket)
    assert "no vegetarian" not in context_text(basket)


def test_an_item_claude_keeps_after_being_asked_again_is_flagged(world: TestWorld) -> None:
    """The model writes pork chops for a household that said "pork <!channel>", and again when
    asked once more naming the conflict: the basket shows the bot's flag beside it, and the
    household's words ping nobody."""
    settled(world, avoid=text("pork, <!channel>"))
    chops = Reply(tool_input={"items": [{"name": "pork chops", "quantity": 2, "unit": ""}]})
    world.claude.script(chops, chops)
    world.shop("chops on Friday")
    world.run_lazies()
    (basket,) = world.baskets()
    assert "2 pork chops — contains pork: you said no pork" in section_text(basket)
    assert world.claude.message_calls == 2
    assert "<!channel>" not in world.slack.mentions()
