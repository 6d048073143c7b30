"""The price-basket step (graph version 5, issue 34 item 2): each item matched to a product at the
household's store through the bot's Kroger pricer and the real client, against the local Kroger
stand-in over loopback HTTP; its result in the checkpoint, a chunk a superstep, so a crash in the
middle resumes from what was matched; an edit or a change re-matches only what changed; and the
faults (no store, Kroger down, past its daily limit, a store it no longer has) leave the basket
asked about without the missing prices, saying why."""

from __future__ import annotations

import asyncio
from collections.abc import Iterator, Sequence
from typing import Any

import pytest

from bot.orders.kroger import KrogerClient, KrogerConfig
from bot.orders.kroger_prices import BUSY, DOWN, KrogerPricer, ProductCache, store_gone
from bot.sandbox.clock import PlayedClock
from bot.sandbox.kroger_api import FakeKroger
from bot.sandbox.kroger_catalogue import CATALOGUE
from bot.slack.basket_items import prices_block, prices_said, product_said
from workflow.engine.runner import Run, RunStatus
from workflow.persistence.memory_store import InMemoryCheckpointStore
from workflow.persistence.session import SessionCheckpoints
from workflow.persistence.signing import CheckpointSigner
from workflow.shop.basket import Basket, Item
from workflow.shop.decision import BasketDecision
from workflow.shop.graph import build_priced_workflow
from workflow.shop.pricing import CHUNK, NO_STORE, PricedBasket, Pricer, Where
from workflow.shop.run_state import prices_of
from workflow.shop.shopper import Brief, ShopperReply

STORE = Where("01400943", "Kroger Over-the-Rhine")  # ZIP 45202
OTHER = Where("01400376", "Kroger Corryville")
SIGNER = CheckpointSigner(b"pricing-test-key-0123456789abcd")
# What the catalogue sells, one item each, as a US shopper writes them.
NAMES = sorted({product.description.split(" ", 1)[1] for product in CATALOGUE})


@pytest.fixture
def kroger() -> Iterator[FakeKroger]:
    with FakeKroger(clock=PlayedClock()) as running:
        yield running


def pricer_at(kroger: FakeKroger, where: Where | None, cache: ProductCache | None = None) -> Any:
    client = KrogerClient(KrogerConfig(kroger.client_id, kroger.client_secret, kroger.url))
    return KrogerPricer(client, where, cache or ProductCache())


class Shopper:
    """Writes ``items``; a change drops the last item."""

    label = "test"

    def __init__(self, items: Sequence[Item]) -> None:
        self.items = list(items)

    async def write(self, brief: Brief) -> ShopperReply:
        items = self.items if brief.change is None else list(brief.last_items)[:-1]
        return ShopperReply(items=items, output_tokens=1)


class Crashing:
    """A pricer that dies (as a Lambda timeout would) on its ``at``-th call."""

    def __init__(self, inner: KrogerPricer, at: int) -> None:
        self.inner, self.at, self.calls = inner, at, 0

    def where(self) -> Where | None:
        return self.inner.where()

    async def offers(self, items: Sequence[Item]) -> list[Any]:
        self.calls += 1
        if self.calls == self.at:
            raise TimeoutError("Task timed out after 60.00 seconds")
        return await self.inner.offers(items)


def items_of(names: Sequence[str], quantity: int = 1) -> list[Item]:
    return [Item(name=name, quantity=quantity, unit="") for name in names]


def run_to_port(
    pricer: Pricer | None, items: Sequence[Item], store: InMemoryCheckpointStore
) -> Run:
    async def go() -> Run:
        workflow = build_priced_workflow(Shopper(items), 3, pricer)
        run = Run.start(workflow, "dinners", SessionCheckpoints(store, SIGNER, "T1", "s1"))
        [e async for e in run.watch()]
        return run

    return asyncio.run(go())


def resume(
    pricer: Pricer | None,
    store: InMemoryCheckpointStore,
    answer: BasketDecision | None = None,
) -> Run:
    async def go() -> Run:
        workflow = build_priced_workflow(Shopper([]), 3, pricer)
        run = await Run.resume(workflow, SessionCheckpoints(store, SIGNER, "T1", "s1"))
        assert run is not None
        if answer is not None:
            ((request_id, _),) = run.pending_requests.items()
            run.respond(request_id, answer, answered_by="U0BOB")
        [e async for e in run.watch()]
        return run

    return asyncio.run(go())


def asked(run: Run) -> Basket:
    ((_, request),) = run.pending_requests.items()
    assert isinstance(request.data, Basket)
    return request.data


def test_a_basket_of_17_is_priced_in_one_step_with_one_call_an_item(kroger: FakeKroger) -> None:
    """Every item has its line (a product and cost, or why not); 17 searches, one superstep's
    checkpoint after writing and one after pricing; the total is the lines' sum."""
    store = InMemoryCheckpointStore()
    run = run_to_port(pricer_at(kroger, STORE), items_of(NAMES[:17]), store)
    prices = prices_of(run)
    assert prices is not None and prices.complete(asked(run)) and prices.problem is None
    assert kroger.calls("products") == 17
    assert len(store.list("T1", "s1")) == 3  # started, written, priced
    total = prices.total(asked(run).items)
    assert total.cents == sum(line.cost_cents or 0 for line in prices.lines) > 0
    assert total.unpriced == sum(1 for line in prices.lines if line.offer is None)


def test_200_items_are_priced_a_chunk_a_superstep_each_search_once(kroger: FakeKroger) -> None:
    """200 items (100 names at two quantities) are 8 chunks of 25, a checkpoint after each; a
    name is searched once, the cache answering its second quantity."""
    store = InMemoryCheckpointStore()
    items = items_of(NAMES[:100]) + items_of(NAMES[:100], quantity=3)
    run = run_to_port(pricer_at(kroger, STORE), items, store)
    prices = prices_of(run)
    assert prices is not None and prices.complete(asked(run)) and len(prices.lines) == 200
    assert kroger.calls("products") == 100
    assert len(store.list("T1", "s1")) == 2 + 200 // CHUNK  # started, written, 8 chunks


def test_a_crash_in_the_middle_resumes_from_what_was_matched(kroger: FakeKroger) -> None:
    """An edit to 100 items is priced in 4 chunks. A crash in the third (a Lambda timeout: the
    run resumed for the edit fails there) keeps the two before it: resumed again, in a process
    with nothing cached, the run searches only the items not matched yet."""
    store = InMemoryCheckpointStore()
    run = run_to_port(pricer_at(kroger, STORE), items_of(NAMES[:1]), store)
    crashing = Crashing(pricer_at(kroger, STORE), at=3)
    run = resume(crashing, store, BasketDecision.edited_to(items_of(NAMES[:100]), 1))
    assert run.status is RunStatus.FAILED
    searched = kroger.calls("products")
    assert searched == 1 + 2 * CHUNK  # basket 1's one item (kept by the edit), two chunks

    fresh = ProductCache()
    run = resume(pricer_at(kroger, STORE, fresh), store)
    prices = prices_of(run)
    assert prices is not None and prices.complete(asked(run)) and len(prices.lines) == 100
    assert fresh.calls == kroger.calls("products") - searched == 100 - 1 - 2 * CHUNK


def test_an_edit_re_matches_only_the_item_it_changed(kroger: FakeKroger) -> None:
    store = InMemoryCheckpointStore()
    items = items_of(NAMES[:17])
    run = run_to_port(pricer_at(kroger, STORE), items, store)
    basket, before = asked(run), prices_of(run)
    assert before is not None
    edited = [*basket.items[:-1], Item(name=NAMES[40], quantity=2, unit="")]
    cache = ProductCache()
    run = resume(
        pricer_at(kroger, STORE, cache), store, BasketDecision.edited_to(edited, basket.round)
    )
    after = prices_of(run)
    assert after is not None and after.complete(asked(run))
    assert cache.calls == 1  # the one new item; the other 16 kept their match
    assert after.line_for(edited[0]) == before.line_for(items[0])


def test_a_change_re_matches_nothing_it_kept_and_another_store_re_matches_all(
    kroger: FakeKroger,
) -> None:
    store = InMemoryCheckpointStore()
    run = run_to_port(pricer_at(kroger, STORE), items_of(NAMES[:5]), store)
    change = BasketDecision(approved=False, change="one less", round=1)
    cache = ProductCache()
    run = resume(pricer_at(kroger, STORE, cache), store, change)
    assert asked(run).round == 2 and cache.calls == 0  # 4 items, each matched before
    other = ProductCache()
    change = BasketDecision(approved=False, change="one less again", round=2)
    run = resume(pricer_at(kroger, OTHER, other), store, change)
    prices = prices_of(run)
    assert prices is not None and prices.store_id == OTHER.store_id and other.calls == 3


def test_no_store_chosen_says_how_to_choose_one_and_asks_nothing(kroger: FakeKroger) -> None:
    store = InMemoryCheckpointStore()
    run = run_to_port(pricer_at(kroger, None), items_of(NAMES[:3]), store)
    prices = prices_of(run)
    assert prices == PricedBasket(round=1, problem=NO_STORE)
    assert kroger.calls("products") == 0 and asked(run).round == 1
    assert prices_said(prices, asked(run).items) == NO_STORE


def test_a_deploy_without_kroger_prices_nothing_and_shows_nothing() -> None:
    run = run_to_port(None, items_of(NAMES[:3]), InMemoryCheckpointStore())
    assert prices_of(run) is None and asked(run).round == 1
    assert prices_block(None, asked(run).items) == []


@pytest.mark.parametrize(
    ("fault", "said"),
    [
        ("down", DOWN),  # Kroger answers 503 (a later try may work)
        ("limit", BUSY),  # 429 past the day's 10,000 product calls
        ("gone", store_gone(STORE.store)),  # 400: the locationId is no store now
    ],
)
def test_kroger_failing_leaves_the_basket_asked_about_without_prices_saying_why(
    kroger: FakeKroger, fault: str, said: str
) -> None:
    """Nothing blocks the approval: the basket waits at the port, its prices say why they are
    missing, and an approval orders it."""
    store = InMemoryCheckpointStore()
    where = Where("09999999", STORE.store) if fault == "gone" else STORE
    if fault == "down":
        kroger.answer_next(503, times=50)
    if fault == "limit":
        kroger.products_limit = 0
    run = run_to_port(pricer_at(kroger, where), items_of(NAMES[:4]), store)
    prices = prices_of(run)
    assert prices is not None and prices.problem == said and prices.lines == ()
    assert prices_said(prices, asked(run).items).endswith(said)
    approve = BasketDecision(approved=True, round=1, approvals=("U0BOB",), needed=1)
    run = resume(pricer_at(kroger, where), store, approve)
    assert run.status is RunStatus.IDLE and run.outputs == ["Ordered 4 items."]


def test_what_the_basket_shows_is_the_store_s_text_in_plain_text(kroger: FakeKroger) -> None:
    """A product's description is the store's text: shown beside the item in plain_text (so a
    ``<!channel>`` in it pings no one), with the count, the size and the cost; the line under
    the items is the total at the store and the budget against it."""
    store = InMemoryCheckpointStore()
    where = Where(STORE.store_id, STORE.store, budget_cents=1_000)
    run = run_to_port(pricer_at(kroger, where), items_of(NAMES[:6], quantity=2), store)
    prices = prices_of(run)
    assert prices is not None
    line = next(line for line in prices.lines if line.offer is not None)
    said = product_said(line)
    assert line.offer is not None and line.offer.description in said and "$" in said
    total = prices.total(asked(run).items)
    text = prices_said(prices, asked(run).items)
    assert text.startswith(f"≈ ${total.cents // 100}") and "this week's $10" in text
    (block,) = prices_block(prices, asked(run).items)
    assert block["elements"][0]["type"] == "plain_text"


def test_the_searches_are_counted_in_the_log_without_a_secret_or_token(
    kroger: FakeKroger, caplog: pytest.LogCaptureFixture
) -> None:
    """An operator sees how many Kroger calls a basket made (10,000 a day per app), and how
    many the container's cache answered; never the app's secret or a token."""
    caplog.set_level("INFO")
    cache = ProductCache()
    run_to_port(pricer_at(kroger, STORE, cache), items_of(NAMES[:4] * 2), InMemoryCheckpointStore())
    assert "priced 4 items: 4 Kroger searches, 0 answered from the cache" in caplog.text
    kroger.products_limit = 0
    run_to_port(pricer_at(kroger, STORE), items_of(NAMES[5:6]), InMemoryCheckpointStore())
    assert "at the day's limit (retry after" in caplog.text
    assert kroger.client_secret not in caplog.text and "Bearer" not in caplog.text


def test_a_basket_edited_many_times_never_runs_out_of_supersteps(kroger: FakeKroger) -> None:
    """The engine's bound on supersteps (100) is each run's, not the session's: a basket edited
    40 times, each edit three supersteps (edit, price, ask), is still answered. With a bound
    over the session's life, the 33rd edit failed the basket."""
    from workflow.engine.runner import DEFAULT_MAX_SUPERSTEPS

    store, pricer = InMemoryCheckpointStore(), pricer_at(kroger, STORE)
    run = run_to_port(pricer, items_of(NAMES[:2]), store)
    for n in range(40):
        edited = items_of(NAMES[:2], quantity=n + 2)
        run = resume(pricer, store, BasketDecision.edited_to(edited, 1))
        assert run.status is RunStatus.PENDING_REQUESTS, (n, run.error)
    assert run.superstep > DEFAULT_MAX_SUPERSTEPS


class Fixed:
    """A pricer at STORE whose every item is offered ``offer``."""

    def __init__(self, offer: Any) -> None:
        self.offer = offer

    def where(self) -> Where:
        return STORE

    async def offers(self, items: Sequence[Item]) -> list[Any]:
        return [[self.offer] for _ in items]


def test_a_product_s_text_cannot_ping_or_format_and_its_cost_always_shows() -> None:
    """A description is the store's text: beside the item in plain_text (Slack parses no
    mention or formatting there, so ``<!channel>`` and ``*bold*`` show as typed), clipped so
    that the cost after it always shows. A "promotion" above the regular price is no offer."""
    from workflow.shop.products import Offer

    long = "<!channel> *Kroger* " + "Very " * 50 + "Long Chicken Thighs"
    offer = Offer(
        product_id="0001111000001",
        upc="0001111000001",
        description=long,
        size="1 lb",
        regular_cents=499,
        promo_cents=599,
    )
    thighs = [Item(name="chicken thighs", quantity=1, unit="lb")]
    run = run_to_port(Fixed(offer), thighs, InMemoryCheckpointStore())
    prices = prices_of(run)
    assert prices is not None
    (line,) = prices.lines
    said = product_said(line)
    assert said.startswith(" → <!channel> *Kroger* Very") and said.endswith("…, 1 lb · $4.99")
    from bot.slack.basket_items import item_sections

    (section,) = item_sections(asked(run).items, prices)
    assert section["text"]["type"] == "plain_text" and "$4.99" in section["text"]["text"]


def test_one_search_refused_is_no_product_found_and_one_name_is_searched_once(
    kroger: FakeKroger,
) -> None:
    """Kroger answering one search 400 (a term it will not take: unconfirmed) leaves that item
    without a product, not the whole basket "store gone"; two items of one name (two
    quantities) in one chunk are one search."""
    kroger.answer_next(400)
    items = items_of(NAMES[:3]) + items_of(NAMES[:3], quantity=2)
    run = run_to_port(pricer_at(kroger, STORE), items, InMemoryCheckpointStore())
    prices = prices_of(run)
    assert prices is not None and prices.problem is None and prices.complete(asked(run))
    assert kroger.calls("products") == 3
    assert sum(1 for line in prices.lines if line.reason == "no product found") == 2


def test_an_answer_the_client_cannot_read_leaves_the_basket_unpriced_never_failed() -> None:
    """A price Python's JSON reader takes but no price is (``1e999``, ``NaN``) reads as none;
    and whatever else a search raises (an answer nested too deep to read, a bug) leaves the
    basket asked about without prices, saying Kroger didn't answer: never "No basket"."""
    from bot.orders.kroger import _readable

    entry = {
        "upc": "0001111000001",
        "description": "Kroger Milk",
        "items": [{"size": "1 gal", "price": {"regular": float("inf"), "promo": float("nan")}}],
    }
    offer = _readable(entry)
    assert offer is not None and offer.price_cents is None

    class Broken:
        def products(self, term: str, location_id: str, limit: int) -> Any:
            raise RecursionError("maximum recursion depth exceeded while decoding a JSON object")

    pricer = KrogerPricer(Broken(), STORE, ProductCache())  # type: ignore[arg-type]
    run = run_to_port(pricer, items_of(NAMES[:2]), InMemoryCheckpointStore())
    prices = prices_of(run)
    assert run.status is RunStatus.PENDING_REQUESTS
    assert prices is not None and prices.problem == DOWN
