"""The weekly-shop workflow against a local fake of the Messages API."""

from __future__ import annotations

import json
from collections.abc import Iterator

import pytest
from hypothesis import given
from hypothesis import strategies as st

from bot.sandbox.anthropic_api import FakeAnthropic, Reply, shorter_revisions
from tests.engine_kit import drain, session
from workflow.events import ExecutorFailedEvent, OutputEvent, RequestInfoEvent, WorkflowErrorEvent
from workflow.memory_store import InMemoryCheckpointStore
from workflow.runner import Run, RunStatus
from workflow.shop.basket import Basket, BasketDecision, ShopProgress
from workflow.shop.errors import ShopperStoppedEarly
from workflow.shop.graph import build_shop_workflow, shop_registry
from workflow.shop.shopper import SYSTEM_PROMPT, ClaudeShopper


@pytest.fixture
def claude(monkeypatch: pytest.MonkeyPatch) -> Iterator[FakeAnthropic]:
    fake = FakeAnthropic(responder=shorter_revisions).start()
    monkeypatch.setenv("ANTHROPIC_BASE_URL", fake.url)
    monkeypatch.setenv("ANTHROPIC_API_KEY", "test-key-not-real")
    yield fake
    fake.stop()


def test_basket_parsing_trims_bullets_and_drops_empty_lines() -> None:
    basket = Basket.parse("  - 2 eggs \n\n* milk\n• 1 loaf bread\n   \n-\nflour  ", round=1)
    assert basket.items == ["2 eggs", "milk", "1 loaf bread", "flour"]
    assert basket.round == 1


@pytest.mark.parametrize(
    ("line", "item"),
    [
        ("Here is your basket:", None),
        ("Here's the list for the week", None),
        ("## Produce", None),
        ("**Dairy**", None),
        ("*Pantry*", None),
        ("Enjoy your meals!", None),
        ("Let me know if you want changes.", None),
        ("Anything else?", None),
        ("I've left out the rice you have", None),
        ("1. 500 g chicken", "500 g chicken"),
        ("12) 2 leeks", "2 leeks"),
        ("(3) 1 lemon", "1 lemon"),
        ("- [ ] 1 loaf bread", "1 loaf bread"),
        ("1.5 kg potatoes", "1.5 kg potatoes"),
        ("2 pizza bases", "2 pizza bases"),
        ("**2 pizza bases**", "**2 pizza bases**"),
        ("*bold* _italic_ ~strike~ `code`", "*bold* _italic_ ~strike~ `code`"),
        ("~2 pizza bases~", "~2 pizza bases~"),
        ("salt & pepper", "salt & pepper"),
    ],
)
def test_only_items_become_items(line: str, item: str | None) -> None:
    """What is ordered is what is listed; a reply's other lines are not items."""
    assert Basket.parse(line, round=1).items == ([item] if item else [])


def test_answers_map_to_decisions() -> None:
    assert BasketDecision.from_answer("y\n", 2) == BasketDecision(approved=True, round=2)
    assert BasketDecision.from_answer("N", 1) == BasketDecision(approved=False, round=1)
    assert BasketDecision.from_answer("", 1) == BasketDecision(approved=False, round=1)
    assert BasketDecision.from_answer(None, 1) == BasketDecision(approved=False, round=1)
    assert BasketDecision.from_answer(" no pizza ", 1).change == "no pizza"


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
    assert request.data.round == 1 and request.data.items[0] == "500 g chicken breast"
    assert len(request.data.items) == 10
    (progress,) = [e for e in events if isinstance(e, ShopProgress)]
    assert (progress.step, progress.detail) == ("basket written", "10 items, 321 output tokens")
    (call,) = claude.requests
    assert call["model"] == "claude-haiku-5-5" and call["max_tokens"] == 4096
    assert call["system"] == SYSTEM_PROMPT
    assert call["messages"] == [{"role": "user", "content": "dinners this week"}]
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
    prompt = claude.requests[1]["messages"][0]["content"]
    assert "Your last basket:\n500 g chicken breast\n2 bell peppers" in prompt
    assert "The household asks for this change:\nno pizza" in prompt
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
    assert '"t": "BasketDecision@2"' in json.dumps(saved)


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


async def test_a_529_is_retried_by_the_sdk(claude: FakeAnthropic) -> None:
    claude.script(Reply(status=529), Reply(status=529))
    run, events = await start(InMemoryCheckpointStore())
    assert claude.message_calls == 3
    assert run.status is RunStatus.PENDING_REQUESTS
