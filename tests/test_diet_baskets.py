"""Issue 33, 1 to 4, through the workflow as deployed (``build_edit_workflow``: write-basket,
edit-basket and the bot's check after every shopper): what a household doesn't eat holds for the
offline shopper and for Claude; changes by category work like names, and a part that could not
be made is said; "we have" holds; a staple is an item like any other.

The Claude path runs against the fake Messages API at ``ANTHROPIC_BASE_URL``
(``bot.sandbox.anthropic_api``): the second ask names each conflict, and what the model still
gets wrong is flagged on the item ("contains pork: you said no pork"), the bot's words."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from bot.sandbox.anthropic_api import FakeAnthropic, Reply, prompt_of
from tests.engine_kit import drain, session
from workflow.engine.events import RequestInfoEvent, WorkflowEvent
from workflow.engine.runner import Run
from workflow.persistence.memory_store import InMemoryCheckpointStore
from workflow.shop.basket import Basket, Item, ShopProgress, ShopRequest
from workflow.shop.check import week_diet
from workflow.shop.decision import BasketDecision
from workflow.shop.diet import conflicts
from workflow.shop.edit import added_item, edited_items
from workflow.shop.executors import UNCHANGED, UNCHANGED_STEP
from workflow.shop.graph import build_edit_workflow
from workflow.shop.household import AVOID_ASK, STAPLES_ASK, Household
from workflow.shop.offline import OfflineShopper
from workflow.shop.shopper import CONFLICT_OPENING, ClaudeShopper, Shopper

ISSUE_WEEK = "spaghetti bolognese on Monday, chicken curry on Wednesday, stir fry on Friday"
ISSUE_HOME = Household(people=3, avoid="meat, fish", staples="bread, milk")


async def started(
    text: str, home: Household | None = None, shopper: Shopper | None = None
) -> tuple[Run, Basket, list[WorkflowEvent]]:
    workflow = build_edit_workflow(shopper or OfflineShopper())
    request = ShopRequest(text=text, household=home or Household())
    run = Run.start(workflow, request, session(InMemoryCheckpointStore()))
    events = await drain(run)
    return run, asked(events), events


def asked(events: list[WorkflowEvent]) -> Basket:
    (request,) = [e for e in events if isinstance(e, RequestInfoEvent)]
    assert isinstance(request.data, Basket)
    return request.data


async def answered(run: Run, decision: BasketDecision) -> tuple[Basket, list[WorkflowEvent]]:
    ((request_id, _),) = run.pending_requests.items()
    run.respond(request_id, decision)
    events = await drain(run)
    return asked(events), events


async def changed(run: Run, basket: Basket, text: str) -> tuple[Basket, list[WorkflowEvent]]:
    return await answered(run, BasketDecision.from_answer(text, basket.round))


def lines(basket: Basket) -> list[str]:
    return [item.line() for item in basket.items]


def named(basket: Basket, *words: str) -> list[str]:
    """The items whose name holds one of ``words`` (a swap's note names what it replaced)."""
    return [item.name for item in basket.items if any(w in item.name for w in words)]


def broken(basket: Basket, home: Household, *said: str) -> list[str]:
    """The items that break the week's rules without saying so on the basket."""
    diet = week_diet(home, said)
    return [
        item.line()
        for item in basket.items
        if conflicts(item.name, diet) and not (item.note or "").startswith("contains ")
    ]


HOUSEHOLDS = [
    ISSUE_HOME,
    Household(people=2, avoid="vegetarian"),
    Household(avoid="vegan"),
    Household(avoid="no pork please"),
    Household(people=4, avoid="gluten, nuts (allergy)"),
    Household(avoid="dairy and eggs", staples="milk, eggs"),  # staples that break a rule
    Household(),
]
WEEKS = [
    ISSUE_WEEK,
    "salmon on Thursday, tacos on Friday, carbonara on Sunday",
    "pad thai on Monday, sausages and mash on Tuesday, fish pie on Friday for 4",
    "lasagne on Monday, pizza on Friday, we have cheddar",
]
CHANGES = ["no fish, add oat milk", "we are vegetarian: no meat please", "more rice", "no dairy"]


@pytest.mark.parametrize("change", CHANGES)
@pytest.mark.parametrize("week", WEEKS)
@pytest.mark.parametrize("home", HOUSEHOLDS, ids=lambda h: h.line() or "nothing said")
async def test_no_basket_shows_an_item_the_household_doesnt_eat_as_if_it_fit(
    home: Household, week: str, change: str
) -> None:
    """Every household × week × change through the offline shopper and the bot's check: an item
    that breaks a rule (the household's or the week's) is swapped, left out, or flagged; the
    offline shopper itself leaves nothing but a staple to flag."""
    run, first, _ = await started(week, home)
    assert broken(first, home, week) == []
    flagged = [i.name for i in first.items if (i.note or "").startswith("contains ")]
    assert set(flagged) <= {"milk", "eggs"}  # only staples the household asked for itself
    second, _ = await changed(run, first, change)
    assert broken(second, home, week, change) == []
    if change.startswith("no fish"):
        assert named(second, "salmon", "fish ") == []
        assert any("oat milk" in line for line in lines(second))


async def test_the_issues_household_gets_no_meat_or_fish_and_its_staples_as_items() -> None:
    """Issue 33, 1 and 4: "For 3 · no meat, fish" with 450 g beef mince and 600 g chicken
    thighs; "1 bread — always" in Other, then in Bakery in basket 2."""
    run, first, _ = await started(ISSUE_WEEK, ISSUE_HOME)
    assert ISSUE_HOME.line() == "For 3 · no meat, fish · always bread, milk"
    shown = lines(first)
    assert named(first, "beef", "chicken") == []
    assert "450 g soya mince — instead of beef mince: you said no meat" in shown
    assert "600 g tofu — instead of chicken thighs: you said no meat" in shown
    staples = [(i.line(), i.name, i.aisle) for i in first.items if i.note == "always"]
    assert staples == [
        ("1 loaf bread — always", "bread", "bakery"),
        ("1 l milk — always", "milk", "dairy and eggs"),
    ]
    second, _ = await changed(run, first, "more rice")
    again = [(i.line(), i.name, i.aisle) for i in second.items if i.note == "always"]
    assert again == staples  # the same item in the same aisle in basket 2


async def test_we_are_vegetarian_as_a_change_takes_the_meat_out_in_a_new_round() -> None:
    """Issue 33, 1: the change gave the same meat and used a round."""
    run, first, _ = await started(ISSUE_WEEK)
    assert "450 g beef mince" not in lines(first) and "300 g beef mince" in lines(first)
    second, _ = await changed(run, first, "we are vegetarian: no meat please")
    assert second.round == 2
    assert named(second, "beef", "chicken") == []
    assert "300 g soya mince — instead of beef mince: you said vegetarian" in lines(second)


@pytest.mark.parametrize("change", ["no fish, add oat milk", "no fish"])
async def test_a_change_by_category_works_like_a_name(change: str) -> None:
    """Issue 33, 2: "no fish, add oat milk" kept 2 salmon fillets; "no fish" alone changed
    nothing, while "no salmon" worked."""
    run, first, _ = await started("salmon on Thursday, tacos on Friday")
    assert "2 salmon fillets" in lines(first)
    second, events = await changed(run, first, change)
    assert second.round == 2 and named(second, "salmon") == []
    assert ("1 l oat milk" in lines(second)) == ("oat milk" in change)
    (progress,) = [e for e in events if isinstance(e, ShopProgress)]
    assert "couldn't apply" not in progress.detail


async def test_a_part_that_could_not_be_made_is_said_and_nothing_changed_uses_no_round() -> None:
    """Issue 33, 2: the part is said ("couldn't apply: …"); with nothing changed the same
    basket is asked about again, the same round (what the README promises)."""
    run, first, _ = await started("salmon on Thursday, tacos on Friday")
    same, events = await changed(run, first, "make it cheaper")
    assert same.round == 1 and same.items == first.items
    (progress,) = [e for e in events if isinstance(e, ShopProgress)]
    assert (progress.step, progress.detail) == (
        UNCHANGED_STEP,
        f"Couldn't apply: make it cheaper. {UNCHANGED}",
    )
    second, events = await changed(run, same, "no fish, make it cheaper")
    (progress,) = [e for e in events if isinstance(e, ShopProgress)]
    assert second.round == 2 and progress.detail.endswith(" · couldn't apply: make it cheaper")
    third, events = await changed(run, second, "no fish")  # none left: it holds, nothing to say
    (progress,) = [e for e in events if isinstance(e, ShopProgress)]
    assert third.round == 2 and progress.detail == UNCHANGED


async def test_what_the_household_has_is_not_bought() -> None:
    """Issue 33, 3: "salmon and rice on Thursday, we have rice and onions" listed 1 kg rice."""
    _, first, _ = await started("salmon and rice on Thursday, we have rice and onions")
    assert "2 salmon fillets" in lines(first)
    assert not [i.name for i in first.items if "rice" in i.name or "onion" in i.name]


async def test_an_edit_is_checked_and_an_added_item_gets_its_aisle() -> None:
    """Issue 33, 1 and 4: a person's edit is checked like a shopper's basket (bacon in a no-pork
    week is flagged, not refused: it is theirs); the item added is in its aisle."""
    home = Household(avoid="pork")
    run, first, _ = await started("salmon on Thursday", home)
    bacon = added_item("smoked bacon", 200, "g")
    assert (bacon.aisle, added_item("birthday candles", 1, "").aisle) == ("other", "other")
    assert added_item("oat milk", 1, "l").aisle == "dairy and eggs"
    items = tuple(edited_items(first.items, added=bacon))
    edited, _ = await answered(run, BasketDecision(approved=False, round=1, edit=items))
    assert edited.items[-1].line() == "200 g smoked bacon — contains pork: you said no pork"
    old = [Item(name="500 g chicken", quantity=None)]  # a basket from before aisles
    assert edited_items(old, added=added_item("oat milk", 1, "l"))[-1].aisle is None


@pytest.fixture
def claude(monkeypatch: pytest.MonkeyPatch) -> Iterator[FakeAnthropic]:
    fake = FakeAnthropic().start()
    monkeypatch.setenv("ANTHROPIC_BASE_URL", fake.url)
    monkeypatch.setenv("ANTHROPIC_API_KEY", "test-key-not-real")
    yield fake
    fake.stop()


def basket_of(*items: tuple[str, int, str]) -> Reply:
    given = [{"name": n, "quantity": q, "unit": u, "aisle": "other"} for n, q, u in items]
    return Reply(tool_input={"items": given})


PORK = basket_of(("pork chops", 2, ""), ("rice", 1, "kg"))


async def test_claude_is_asked_again_naming_the_conflict_and_what_remains_is_flagged(
    claude: FakeAnthropic,
) -> None:
    """The bot's check, not the model's promise: the household's rule is in the prompt, the
    basket that breaks it is asked for once more with the conflict named, and the item the model
    still gets wrong shows "contains pork: you said no pork"."""
    claude.script(PORK, basket_of(("bacon", 150, "g"), ("rice", 1, "kg")))
    _, basket, _ = await started("chops on Friday", Household(avoid="pork"), ClaudeShopper())
    assert claude.message_calls == 2
    assert AVOID_ASK in str(claude.requests[0]["system"])
    again = prompt_of(claude.requests[1])
    assert f"{CONFLICT_OPENING}\n- pork chops: contains pork: you said no pork" in again
    assert lines(basket) == ["150 g bacon — contains pork: you said no pork", "1 kg rice"]


async def test_claude_asked_again_can_put_it_right(claude: FakeAnthropic) -> None:
    claude.script(PORK, basket_of(("tofu", 400, "g"), ("rice", 1, "kg")))
    _, basket, _ = await started("chops on Friday", Household(avoid="pork"), ClaudeShopper())
    assert claude.message_calls == 2 and lines(basket) == ["400 g tofu", "1 kg rice"]


async def test_a_basket_that_fits_is_asked_for_once(claude: FakeAnthropic) -> None:
    claude.script(basket_of(("tofu", 400, "g")))
    _, basket, _ = await started("tofu on Friday", Household(avoid="pork"), ClaudeShopper())
    assert claude.message_calls == 1 and lines(basket) == ["400 g tofu"]


async def test_a_failed_second_ask_leaves_the_first_basket_flagged(claude: FakeAnthropic) -> None:
    """The first answer is a basket; the second ask failing (here a 400) does not lose it."""
    claude.script(PORK, Reply(status=400))
    _, basket, _ = await started("chops on Friday", Household(avoid="pork"), ClaudeShopper())
    assert lines(basket) == ["2 pork chops — contains pork: you said no pork", "1 kg rice"]


async def test_a_change_claude_revises_is_checked_against_the_rule_it_states(
    claude: FakeAnthropic,
) -> None:
    """ "no fish" as a change is a rule for the week: salmon the model keeps is asked about
    again, then flagged."""
    salmon = basket_of(("salmon fillets", 2, ""), ("rice", 1, "kg"))
    claude.script(salmon)
    run, first, _ = await started("salmon on Friday", Household(), ClaudeShopper())
    kept = Reply(tool="revise_basket", tool_input={"remove": ["rice"], "set": [], "add": []})
    claude.script(kept, kept)
    second, _ = await changed(run, first, "no fish, less rice")
    assert claude.message_calls == 3
    assert "salmon fillets: contains fish: you said no fish" in prompt_of(claude.requests[2])
    assert lines(second) == ["2 salmon fillets — contains fish: you said no fish"]


async def test_claude_is_told_the_households_rules_cover_dishes_and_staples_are_items(
    claude: FakeAnthropic,
) -> None:
    """Claude reads the household as the bot does: categories cover what is made of them, and
    a staple is an item with its reason as a note (issue 33, 4: "— always" reached Instacart)."""
    claude.script(basket_of(("loaf bread", 1, ""), ("tofu", 400, "g")))
    home = Household(people=3, avoid="meat, fish", staples="bread, milk")
    await started("tofu on Friday", home, ClaudeShopper())
    system = "\n".join(block["text"] for block in claude.requests[0]["system"])
    assert "We are 3. We don't eat: meat, fish. Always include: bread, milk." in system
    assert AVOID_ASK in system and STAPLES_ASK in system


async def test_we_are_vegetarian_said_to_claude_is_checked_on_the_next_basket(
    claude: FakeAnthropic,
) -> None:
    """Issue 33, 1: "we are vegetarian: no meat please" gave the same meat. The model that keeps
    the chicken is asked once more naming it, then the chicken is flagged."""
    claude.script(basket_of(("chicken thighs", 600, "g"), ("rice", 1, "kg")))
    run, first, _ = await started("chicken curry on Wednesday", Household(), ClaudeShopper())
    assert lines(first) == ["600 g chicken thighs", "1 kg rice"]
    kept = Reply(tool="revise_basket", tool_input={"remove": [], "set": [], "add": []})
    claude.script(kept, kept)
    second, _ = await changed(run, first, "we are vegetarian: no meat please")
    named = "chicken thighs: contains poultry: you said vegetarian"
    assert named in prompt_of(claude.requests[2])
    assert second.round == 2  # the flag changed the basket: it is shown as a new one
    assert lines(second)[0] == "600 g chicken thighs — contains poultry: you said vegetarian"


async def test_a_rule_said_in_a_change_that_changed_nothing_still_holds_all_week() -> None:
    """Cold review: "we are vegetarian" on a basket with no meat changed nothing, so it was not
    kept, and bacon added afterwards (by a change or by hand) went unflagged, though a rule said
    holds for the rest of the week. Now it is kept as what that basket was asked."""
    run, first, _ = await started("lentil soup on Monday, pasta on Tuesday")
    assert broken(first, Household(), "vegetarian") == []
    same, _ = await changed(run, first, "we are vegetarian")
    assert same.round == 1 and same.items == first.items
    bacon = added_item("smoked bacon", 200, "g")
    items = tuple(edited_items(same.items, added=bacon))
    edited, _ = await answered(run, BasketDecision(approved=False, round=1, edit=items))
    assert edited.items[-1].line().endswith("— contains pork: you said vegetarian")
    second, _ = await changed(run, edited, "add oat milk")
    assert second.round == 2
    (kept,) = [i for i in second.items if "bacon" in i.name]
    assert (kept.note or "").startswith("contains pork")
