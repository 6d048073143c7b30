"""The weekly-shop workflow against a local fake of the Messages API."""

from __future__ import annotations

import json
from collections.abc import Iterator

import pytest
from hypothesis import given
from hypothesis import strategies as st

from bot.sandbox.anthropic_api import DEFAULT_BASKET, FakeAnthropic, Reply, shorter_revisions
from bot.sandbox.anthropic_tools import tools_problem
from tests.engine_kit import drain, session
from workflow.engine.events import (
    ExecutorFailedEvent,
    OutputEvent,
    RequestInfoEvent,
    WorkflowErrorEvent,
)
from workflow.engine.runner import Run, RunStatus
from workflow.errors import CheckpointCorrupt
from workflow.persistence.memory_store import InMemoryCheckpointStore
from workflow.shop.basket import Item, ShopProgress
from workflow.shop.decision import BasketDecision
from workflow.shop.errors import ShopperReplyUnfit, ShopperStoppedEarly
from workflow.shop.executors import SCOPE, UNCHANGED, UNCHANGED_STEP, change_key
from workflow.shop.graph import build_shop_workflow, shop_registry
from workflow.shop.shopper import (
    BASKET_TOOL,
    CACHED,
    SYSTEM_PROMPT,
    TOOL_CHOICE,
    TOOLS,
    ClaudeShopper,
    items_from_tool,
)


@pytest.fixture
def claude(monkeypatch: pytest.MonkeyPatch) -> Iterator[FakeAnthropic]:
    fake = FakeAnthropic(responder=shorter_revisions).start()
    monkeypatch.setenv("ANTHROPIC_BASE_URL", fake.url)
    monkeypatch.setenv("ANTHROPIC_API_KEY", "test-key-not-real")
    yield fake
    fake.stop()


GOOD = {"name": "chicken thighs", "quantity": 500, "unit": "g"}


@pytest.mark.parametrize(
    ("entry", "line"),
    [
        (GOOD, "500 g chicken thighs"),
        ({"name": "bell peppers", "quantity": 2, "unit": ""}, "2 bell peppers"),
        ({"name": "potatoes", "quantity": 1.5, "unit": "kg"}, "1.5 kg potatoes"),
        ({"name": "milk", "quantity": 0.25, "unit": "l", "note": "oat"}, "0.25 l milk — oat"),
        ({"name": "saffron", "quantity": 0.0004, "unit": "kg"}, "0.0004 kg saffron"),
        ({"name": "flour", "quantity": 1.0005, "unit": "kg"}, "1.0005 kg flour"),
        ({**GOOD, "aisle": "meat and fish", "note": None}, "500 g chicken thighs"),
        ({"name": "~2 pizza bases~", "quantity": 1, "unit": ""}, "1 ~2 pizza bases~"),
    ],
)
def test_a_tool_input_that_fits_becomes_items_shown_quantity_first(
    entry: dict[str, object], line: str
) -> None:
    (item,) = items_from_tool({"items": [entry]})
    assert item.line() == line


@pytest.mark.parametrize(
    ("data", "problem"),
    [
        ("500 g chicken", "an object with exactly one field, items"),
        ({"items": [GOOD], "extra": 1}, "an object with exactly one field, items"),
        ({"items": "500 g chicken"}, "items must be a list, not str"),
        ({"items": [GOOD] * 501}, "items must have at most 500 entries, not 501"),
        ({"items": []}, "items is empty: a basket has at least one item"),
        ({"items": ["500 g chicken"]}, "items[0]: items[0] must be an object, not str"),
        ({"items": [{**GOOD, "quantity": None}]}, "items[0].quantity is required"),
        ({"items": [{"name": "x", "unit": ""}]}, "items[0].quantity is required"),
        ({"items": [{**GOOD, "quantity": "two"}]}, "Item.quantity must be a number, not str"),
        ({"items": [{**GOOD, "quantity": True}]}, "Item.quantity must be a number, not bool"),
        ({"items": [{**GOOD, "quantity": 0}]}, "Item.quantity must be more than 0"),
        ({"items": [{**GOOD, "quantity": -1}]}, "Item.quantity must be more than 0"),
        ({"items": [{**GOOD, "name": ""}]}, "Item.name must have at least 1 character"),
        ({"items": [{**GOOD, "name": "x" * 501}]}, "Item.name must have at most 500 characters"),
        ({"items": [{**GOOD, "unit": None}]}, "Item.unit must be a string, not NoneType"),
        ({"items": [{**GOOD, "aisle": "garden"}]}, "Item.aisle must be one of produce"),
        ({"items": [{**GOOD, "<!channel> price": 1}]}, "items[0]: items[0]"),
    ],
)
def test_a_tool_input_that_does_not_fit_is_refused_naming_what(data: object, problem: str) -> None:
    """Strict tool use makes the API sample only inputs that fit the schema, but the schema
    cannot say "at most 500" or "more than 0" (strict schemas take no bounds), and a checkpoint
    trusts nothing it did not check: every field is checked here, and the message names only
    our own field names, never the model's text."""
    with pytest.raises(ValueError) as refused:
        items_from_tool(data)
    assert problem in str(refused.value)
    assert "<!channel>" not in str(refused.value)


def test_a_basket_saved_as_lines_reads_as_items_that_show_the_same() -> None:
    """Basket@1 (before items had fields) upgrades as it is read: each line is an item's name."""
    old = {"t": "Basket@1", "v": {"items": ["500 g chicken", "2 pizza bases"], "round": 2}}
    basket = shop_registry().decode(old)
    assert basket.lines == ["500 g chicken", "2 pizza bases"] and basket.round == 2
    assert basket.items[0] == Item(name="500 g chicken", quantity=None)
    assert shop_registry().encode(basket)["t"] == "Basket@2"
    with pytest.raises(CheckpointCorrupt, match="Basket@1 could not be upgraded"):
        shop_registry().decode({"t": "Basket@1", "v": {"items": [3], "round": 1}})


def test_the_basket_tool_is_one_the_api_accepts_as_strict() -> None:
    body = {"model": "m", "max_tokens": 1, "messages": [{"role": "user", "content": "x"}]}
    assert tools_problem({**body, "tools": [BASKET_TOOL], "tool_choice": TOOL_CHOICE}) is None
    bounded = json.loads(json.dumps(BASKET_TOOL))
    bounded["input_schema"]["properties"]["items"]["maxItems"] = 500
    assert "'maxItems' is not supported" in str(tools_problem({**body, "tools": [bounded]}))


def test_answers_map_to_decisions() -> None:
    assert BasketDecision.from_answer("y\n", 2) == BasketDecision(approved=True, round=2)
    assert BasketDecision.from_answer("N", 1) == BasketDecision(approved=False, round=1)
    assert BasketDecision.from_answer("", 1) == BasketDecision(approved=False, round=1)
    assert BasketDecision.from_answer(None, 1) == BasketDecision(approved=False, round=1)
    assert BasketDecision.from_answer(" no pizza ", 1).change == "no pizza"


@pytest.mark.parametrize("word", ["y", "Yes", "YES", " approve\n", "ApProVe", "ok", "OK", "Ok"])
def test_an_approve_word_in_any_case_approves(word: str) -> None:
    assert BasketDecision.from_answer(word, 2) == BasketDecision(approved=True, round=2)


@pytest.mark.parametrize("word", ["n", "No", "NO", " reject\n", "ReJeCt", "\n", "   "])
def test_a_reject_word_in_any_case_or_nothing_rejects(word: str) -> None:
    assert BasketDecision.from_answer(word, 2) == BasketDecision(approved=False, round=2)


@pytest.mark.parametrize("text", ["yes please", "okay", "nope", "no pizza", "not ok", "y y"])
def test_a_longer_answer_is_a_change_as_typed(text: str) -> None:
    decision = BasketDecision.from_answer(f" {text} ", 1)
    assert decision == BasketDecision(approved=False, change=text, round=1)


@given(
    approved=st.booleans(),
    change=st.none() | st.text(min_size=1, max_size=20),
    round=st.integers(1, 6),
    max_rounds=st.integers(1, 5),
)
def test_the_two_conditions_never_overlap_and_cover_every_answer(
    approved: bool, change: str | None, round: int, max_rounds: int
) -> None:
    wf = build_shop_workflow(shopper=None, max_rounds=max_rounds)  # type: ignore[arg-type]
    decision = BasketDecision(approved=approved, change=change, round=round)
    taken = [e.target for e in wf.edges_from("approve-basket") if e.condition(decision)]  # type: ignore[misc]
    assert len(taken) == 1
    assert taken[0] == (
        "write-basket" if change is not None and round < max_rounds else "place-order"
    )


async def answer(run: Run, reply: str) -> list[object]:
    """Answer the one pending basket, run on, and return the events."""
    ((request_id, request),) = run.pending_requests.items()
    run.respond(request_id, BasketDecision.from_answer(reply, request.data.round))
    return await drain(run)


async def start(store: InMemoryCheckpointStore) -> tuple[Run, list[object]]:
    run = Run.start(build_shop_workflow(ClaudeShopper()), "dinners this week", session(store))
    return run, await drain(run)


async def test_basket_one_asks_claude_as_configured(claude: FakeAnthropic) -> None:
    run, events = await start(InMemoryCheckpointStore())
    (request,) = [e for e in events if isinstance(e, RequestInfoEvent)]
    assert request.data.round == 1 and request.data.lines[0] == "500 g chicken breast"
    assert request.data.items[0] == Item(
        name="chicken breast", quantity=500, unit="g", aisle="meat and fish"
    )
    assert len(request.data.items) == 10
    (progress,) = [e for e in events if isinstance(e, ShopProgress)]
    assert (progress.step, progress.detail) == ("basket written", "10 items")
    assert progress.output_tokens == 321  # for the logs and make bench, not for the household
    (call,) = claude.requests
    assert call["model"] == "claude-haiku-5-5" and call["max_tokens"] == 4096
    week = "The household's request for this week:\ndinners this week"
    assert call["system"] == [
        {"type": "text", "text": SYSTEM_PROMPT},
        {"type": "text", "text": week, "cache_control": CACHED},  # the end of the cached prefix
    ]
    assert call["messages"] == [{"role": "user", "content": "Write this week's basket."}]
    assert call["tools"] == TOOLS and call["tool_choice"] == TOOL_CHOICE
    sent = claude.headers[0]
    assert "test-key-not-real" in sent.get("x-api-key", "") + sent.get("authorization", "")


async def test_change_then_approve(claude: FakeAnthropic) -> None:
    store = InMemoryCheckpointStore()
    run, _ = await start(store)
    resumed = await Run.resume(build_shop_workflow(ClaudeShopper()), session(store))
    await drain(resumed)  # re-raises basket 1: no model call
    assert claude.message_calls == 1
    events = await answer(resumed, "no pizza")
    (basket2,) = [e.data for e in events if isinstance(e, RequestInfoEvent)]
    assert basket2.round == 2 and len(basket2.items) == 7
    revision = claude.requests[1]["messages"][0]["content"]
    assert "Your last basket:\n- chicken breast: 500 g\n- bell peppers: 2\n" in revision
    assert "The household asks for this change:\nno pizza" in revision
    assert claude.requests[1]["tool_choice"] == {"type": "any"}  # the difference, or a basket
    events = await answer(resumed, "y")
    assert [e.data for e in events if isinstance(e, OutputEvent)] == ["Ordered 7 items."]
    assert [e.step for e in events if isinstance(e, ShopProgress)] == ["order placed"]


async def test_reject(claude: FakeAnthropic) -> None:
    run, _ = await start(InMemoryCheckpointStore())
    events = await answer(run, "n")
    assert [e.data for e in events if isinstance(e, OutputEvent)] == ["No order placed: rejected"]
    assert [e.step for e in events if isinstance(e, ShopProgress)] == ["order skipped"]


async def test_an_expired_basket_is_answered_by_the_bot_and_orders_nothing(
    claude: FakeAnthropic,
) -> None:
    store = InMemoryCheckpointStore()
    run, _ = await start(store)
    ((request_id, request),) = run.pending_requests.items()
    expired = BasketDecision.expired(request.data.round, 1_800_000_000)
    run.respond(request_id, expired, answered_by="weekly-shop")
    events = await drain(run)
    assert [e.data for e in events if isinstance(e, OutputEvent)] == [
        "No order placed: nobody answered in time"
    ]
    answered = run.answered[request_id]
    assert answered.by == "weekly-shop" and answered.response.expired_at == 1_800_000_000
    saved = json.loads(store.latest("T1", "s1").state)
    assert '"t": "BasketDecision@5"' in json.dumps(saved)  # @4: hold_until, undo; @5: edit


def test_a_decision_saved_before_expiry_existed_reads_as_not_expired() -> None:
    old = {"t": "BasketDecision@1", "v": {"approved": True, "change": None, "round": 2}}
    decision = shop_registry().decode(old)
    assert decision == BasketDecision(approved=True, round=2) and decision.expired_at is None


async def test_a_change_on_basket_three_ends_without_an_order(claude: FakeAnthropic) -> None:
    run, _ = await start(InMemoryCheckpointStore())
    await answer(run, "less meat")
    await answer(run, "more fish")
    events = await answer(run, "cheaper please")
    assert [e.data for e in events if isinstance(e, OutputEvent)] == [
        "No order placed: still a change after basket 3: cheaper please"
    ]
    assert claude.message_calls == 3
    assert run.status is RunStatus.IDLE


async def test_a_max_tokens_stop_fails_without_asking_and_leaves_nothing(
    claude: FakeAnthropic,
) -> None:
    claude.script(Reply(text="500 g chick", stop_reason="max_tokens"))
    store = InMemoryCheckpointStore()
    run, events = await start(store)
    assert run.status is RunStatus.FAILED
    (failed,) = [e for e in events if isinstance(e, ExecutorFailedEvent)]
    assert isinstance(failed.error, ShopperStoppedEarly) and "max_tokens" in str(failed.error)
    assert [e for e in events if isinstance(e, WorkflowErrorEvent)]
    assert not [e for e in events if isinstance(e, RequestInfoEvent)]
    assert store.latest("T1", "s1") is None


@pytest.mark.parametrize(
    ("reply", "detail"),
    [
        (Reply(tool_input={"items": [{"name": "milk", "quantity": "2", "unit": "l"}]}), "number"),
        (Reply(tool_input={"basket": []}), "exactly one field, items"),
        (Reply(stop_reason="refusal"), None),
        (Reply(stop_reason="end_turn"), None),
    ],
    ids=["quantity as text", "wrong shape", "refusal", "end_turn"],
)
async def test_a_reply_that_is_not_a_basket_fails_the_round_and_leaves_nothing(
    claude: FakeAnthropic, reply: Reply, detail: str | None
) -> None:
    """A forced tool call ends with stop_reason "tool_use"; any other stop reason, or an input
    that does not fit, writes no basket: the round fails with its own reason."""
    claude.script(reply)
    store = InMemoryCheckpointStore()
    run, events = await start(store)
    assert run.status is RunStatus.FAILED
    (failed,) = [e for e in events if isinstance(e, ExecutorFailedEvent)]
    if detail is None:
        assert isinstance(failed.error, ShopperStoppedEarly)
        assert failed.error.reason == f"the shopper stopped early ({reply.stop_reason})"
    else:
        assert isinstance(failed.error, ShopperReplyUnfit) and detail in str(failed.error)
        assert failed.error.reason == "the shopper's answer did not fit a basket"
    assert store.latest("T1", "s1") is None


async def test_a_529_is_retried_by_the_sdk(claude: FakeAnthropic) -> None:
    claude.script(Reply(status=529), Reply(status=529))
    run, events = await start(InMemoryCheckpointStore())
    assert claude.message_calls == 3
    assert run.status is RunStatus.PENDING_REQUESTS


async def test_a_revision_equal_to_its_basket_is_the_same_round_asked_again(
    claude: FakeAnthropic,
) -> None:
    """Issue 20: a change that changes nothing used up a round. The same basket is asked about
    again (round 1, a new request), the run says so, and no change is kept for later briefs."""
    run, _ = await start(InMemoryCheckpointStore())
    claude.script(Reply(text=DEFAULT_BASKET))  # the model gives basket 1 back as it was
    events = await answer(run, "maybe later")
    (again,) = [e for e in events if isinstance(e, RequestInfoEvent)]
    assert again.data.round == 1 and len(again.data.items) == 10
    steps = [(e.step, e.detail) for e in events if isinstance(e, ShopProgress)]
    assert steps == [(UNCHANGED_STEP, UNCHANGED)]
    assert run.read_state(change_key(1), SCOPE) is None
    events = await answer(run, "less meat")
    (second,) = [e for e in events if isinstance(e, RequestInfoEvent)]
    assert second.data.round == 2 and len(second.data.items) == 7
    assert "maybe later" not in str(claude.requests[-1]["messages"])
