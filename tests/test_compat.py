"""Every checkpoint deployed code ever wrote still resumes: the compatibility corpus.

``tests/compat/<folder>/*.json`` are checkpoint records exactly as a given version of the code
wrote them to S3 (``tests/compat/write_corpus.py``; ``format1/`` is what main wrote before
checkpoints were versioned). Each is put back at its key, its basket message is in the channel as
that version posted it, and the current code, through the real handler, answers it to the end.
A later format, record version, payload schema or graph adds its own folder; a folder or a file
is removed only with a stated reason (in the commit and in the README's "Changing the workflow").
"""

from __future__ import annotations

import base64
import json
import re
from collections.abc import Iterator
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest

from bot.sandbox.kroger_api import FakeKroger
from bot.slack.basket_message import basket_blocks
from bot.slack.blocks import Ref
from bot.steps.clicks import undone_text
from bot.steps.rules import LAST_BASKET
from tests.bot_kit import CHANNEL, World, context_text, header, objects
from tests.compat.write_corpus import KEY, REQUESTER
from tests.fault_kit import ephemeral_texts, lock_keys
from workflow.persistence.checkpoint import written_with
from workflow.shop.basket import Item
from workflow.shop.records import SHOP_RECORDS


@pytest.fixture
def kroger() -> Iterator[FakeKroger]:
    with FakeKroger() as running:
        yield running


CORPUS = sorted((Path(__file__).parent / "compat").glob("format*/*.json"))
SETTINGS_CORPUS = sorted((Path(__file__).parent / "compat").glob("settings-*/settings.json"))

# What to answer each case with, and what the thread must end with.
PLANS: dict[str, list[tuple[str, str]]] = {
    "pending-round-1": [("approve_basket", "Ordered 5 items.")],
    # Posted with a Change… button by older code: the last basket now refuses a change.
    "pending-round-3": [("last_change", LAST_BASKET), ("approve_basket", "Ordered 3 items.")],
    "revision-failed-at-the-model": [("change_basket", ""), ("approve_basket", "Ordered 7 items.")],
    "answered-in-the-audit-trail": [
        ("change_basket", ""),
        ("reject_basket", "No order placed: rejected"),
    ],
    # Approved by U0CAROL, one of a quorum of two: U0BOB's approval orders it.
    "approved-by-one-of-two": [("approve_basket", "Ordered 5 items.")],
    # Approved by U0CAROL and held for the undo window: U0BOB's Undo, then his approval (no
    # timers here: it orders at once).
    "held-for-undo": [("undo_order", undone_text("U0BOB")), ("approve_basket", "Ordered 5 items.")],
    # Edited by U0BOB with Edit items (its last item removed, oat milk added): approved as edited.
    "edited-by-hand": [("approve_basket", "Ordered 5 items.")],
}
# A case the code could write only from a given folder on, and the environment its plan runs in.
SINCE = {
    "approved-by-one-of-two": "format2-graph2",
    "held-for-undo": "format2-graph3",
    "edited-by-hand": "format2-graph4",
}
# What the basket shows of the household, from ShopRequest@2 on (the workspace's settings).
HOUSEHOLD = "· For 4 · no pork · always oat milk"
ENV = {"approved-by-one-of-two": {"APPROVALS_NEEDED": "2"}}
SAID = {"approved-by-one-of-two": "Approved by <@U0CAROL> and <@U0BOB> · "}  # on the basket


def cases_of(folder: str) -> set[str]:
    """The cases ``folder`` must hold: every case, but those written only since a later one."""
    order = list(FOLDERS)
    return {c for c in PLANS if order.index(SINCE.get(c, order[0])) <= order.index(folder)}


def test_the_corpus_holds_every_case() -> None:
    for folder in FOLDERS:
        names = {path.stem for path in CORPUS if path.parent.name == folder}
        assert names >= cases_of(folder), f"a case of {folder}/ was removed without a reason"


# Each folder, and what its records are: the document format, the record version, the graph,
# and the basket's schema.
FOLDERS = {
    "format1": "before versions · format 1 · record v1 · Basket",
    "format2-graph1": "weekly-shop v1 · format 2 · record v2 · Basket@1 · ShopRequest@1",
    "format2-basket2": "weekly-shop v1 · format 2 · record v2 · Basket@2 · ShopRequest@1",
    "format2-graph2": "weekly-shop v2 · format 2 · record v2 · Basket@2 · ShopRequest@1",
    "format2-request2": "weekly-shop v2 · format 2 · record v2 · Basket@2 · ShopRequest@2",
    "format2-graph3": "weekly-shop v3 · format 2 · record v2 · Basket@2 · ShopRequest@2",
    "format2-graph4": "weekly-shop v4 · format 2 · record v2 · Basket@2 · ShopRequest@2",
    "format2-graph5": (
        "weekly-shop v5 · format 2 · record v2 · Basket@2 · ShopRequest@2 · PricedBasket@1"
    ),
}
NEWEST = "format2-graph5"  # what the current code writes


def described(record: Any) -> str:
    """What a record is, in the words of :data:`FOLDERS`."""
    state = record.state if isinstance(record.state, str) else record.state.decode()
    (basket,) = set(re.findall(r'"t": ?"(Basket(?:@\d+)?)"', state))
    requests = set(re.findall(r'"t": ?"(ShopRequest@\d+)"', state))  # format 1: none in state
    prices = set(re.findall(r'"t": ?"(PricedBasket@\d+)"', state))  # graph 5 on, priced
    said = "".join(f" · {r}" for r in (*sorted(requests), *sorted(prices)))
    return f"{written_with(record.state)} · record v{record.mac} · {basket}{said}"


@pytest.mark.parametrize("path", CORPUS, ids=[f"{p.parent.name}/{p.stem}" for p in CORPUS])
def test_each_corpus_record_is_what_its_folder_says(path: Path) -> None:
    case = json.loads(path.read_text())
    raw = base64.b64decode(case["bytes"])
    record = SHOP_RECORDS.from_bytes(raw, "checkpoint", case["tenant"], case["session"])
    assert described(record) == FOLDERS[path.parent.name]


def put_back(world: World, s3: Any, bucket: str, case: dict[str, Any]) -> dict[str, Any]:
    """The record at its key, and its basket in the channel, as the older code left them."""
    s3.put_object(Bucket=bucket, Key=case["key"], Body=base64.b64decode(case["bytes"]))
    posted = world.slack.method(
        "chat.postMessage",
        {
            "channel": CHANNEL,
            "text": f"Basket {case['round']} of 3",
            "blocks": basket_blocks(
                round=case["round"],
                max_rounds=3,
                items=[  # Basket@1 wrote lines, Basket@2 items
                    Item.named(i) if isinstance(i, str) else Item.from_json(i)
                    for i in case["items"]
                ],
                requested_by=REQUESTER,
                progress="basket written",
                ref=Ref(case["session"], case["request_id"]),
                approvals=("U0CAROL",) if "held_until" in case else (),
                held_until=case.get("held_until"),
            ),
        },
    )
    return dict(posted["message"])


@pytest.mark.parametrize("path", CORPUS, ids=[f"{p.parent.name}/{p.stem}" for p in CORPUS])
def test_a_basket_saved_by_older_code_is_answered_to_the_end(
    world: World, s3: Any, bucket: str, path: Path
) -> None:
    case = json.loads(path.read_text())
    world.boot(CHECKPOINT_SIGNING_KEY=KEY.decode(), **ENV.get(path.stem, {}))
    basket = put_back(world, s3, bucket, case)
    said = 0  # replies in the basket's thread before the step's own
    for action, outcome in PLANS[path.stem]:
        if action == "change_basket":
            world.click(basket, action, user="U0BOB")
            world.submit_change("fewer")
        elif action == "last_change":  # from a modal the old message's Change… opened
            world.click(basket, "change_basket", value=world.buttons(basket)["approve_basket"])
            world.submit_change("fewer")
            world.run_lazies()
            assert ephemeral_texts(world, "U0BOB")[-1] == outcome
            assert world.slack.thread(CHANNEL, basket["ts"]) == []
            continue
        elif action == "undo_order":  # said in the thread; the basket has its buttons again
            world.click(basket, action, user="U0BOB")
            world.run_lazies()
            assert [m["text"] for m in world.slack.thread(CHANNEL, basket["ts"])] == [outcome]
            basket = world.slack.message(CHANNEL, basket["ts"]) or {}
            assert "approve_basket" in world.buttons(basket)
            said = 1  # the next outcome comes after it
            continue
        else:
            world.click(basket, action, user="U0BOB")
        world.run_lazies()
        assert world.slack.violations == []
        replies = [m["text"] for m in world.slack.thread(CHANNEL, basket["ts"])][said:]
        if outcome:
            assert replies == [outcome], replies
        else:  # a change: the next basket is posted, and it is the one to answer now
            assert not replies, replies
            basket = world.baskets()[-1]
            assert header(basket).startswith(f"Basket {case['round'] + 1} of 3")
            shows_household = HOUSEHOLD in json.dumps(basket["blocks"], ensure_ascii=False)
            order = list(FOLDERS)
            since = order.index("format2-request2")
            assert shows_household == (order.index(path.parent.name) >= since)
    if path.stem in SAID:
        answered = world.slack.message(CHANNEL, basket["ts"])
        assert answered is not None and SAID[path.stem] in context_text(answered)
    assert lock_keys(s3, bucket) == []
    (newest, *_) = sorted(k for k in objects(s3, bucket) if k.startswith(case["key"][:-6]))
    record = SHOP_RECORDS.from_bytes(
        s3.get_object(Bucket=bucket, Key=newest)["Body"].read(),
        "checkpoint",
        case["tenant"],
        case["session"],
    )
    priced = " · PricedBasket@1"  # only where the workspace has a store to price at
    assert described(record).removesuffix(priced) == FOLDERS[NEWEST].removesuffix(priced)


ROUND_ONE = [p for p in CORPUS if p.stem == "pending-round-1"]


@pytest.mark.parametrize("path", ROUND_ONE, ids=[p.parent.name for p in ROUND_ONE])
def test_a_basket_saved_before_quorums_needs_the_quorum_set_since(
    world: World, s3: Any, bucket: str, path: Path
) -> None:
    """Graph version 1 is carried to version 2 (``workflow.shop.graph.carry_v1_to_v2``): a
    basket posted before quorums existed, answered once the household asks for two approvals,
    needs two, as a basket posted today would."""
    case = json.loads(path.read_text())
    world.boot(CHECKPOINT_SIGNING_KEY=KEY.decode(), APPROVALS_NEEDED="2")
    basket = put_back(world, s3, bucket, case)
    world.click(basket, "approve_basket", user="U0BOB")
    world.run_lazies()
    now = world.slack.message(CHANNEL, basket["ts"])
    assert now is not None
    assert "Approved by <@U0BOB> · 1 of 2 needed" in context_text(now)
    assert world.slack.thread(CHANNEL, basket["ts"]) == []
    world.click(now, "approve_basket", user="U0CAROL")
    world.run_lazies()
    replies = [m["text"] for m in world.slack.thread(CHANNEL, basket["ts"])]
    assert replies == ["Ordered 5 items."] and world.slack.violations == []
    assert lock_keys(s3, bucket) == []


@pytest.mark.parametrize("path", SETTINGS_CORPUS, ids=[p.parent.name for p in SETTINGS_CORPUS])
def test_a_settings_document_saved_by_older_code_is_read(
    world: World, s3: Any, bucket: str, path: Path
) -> None:
    """A workspace's settings as a shipped version saved them: read (upgraded when older),
    signature checked, and in force on the next click."""
    from bot.handler import cold_start
    from bot.records.settings_upgrades import UPGRADES
    from bot.records.workspace_settings_store import SCHEMA_VERSION, settings_key

    case = json.loads(path.read_text())
    world.boot(CHECKPOINT_SIGNING_KEY=KEY.decode())
    rt, _ = cold_start()
    key = settings_key(rt.records.settings_store.prefix, case["tenant"])
    s3.put_object(Bucket=bucket, Key=key, Body=base64.b64decode(case["bytes"]))
    loaded = rt.records.settings_store.read(case["tenant"])
    assert loaded.problem is None and loaded.saved is not None
    assert loaded.generation == case.get("generation", 0)  # (none signed before generations)
    upgraded = case["settings"]  # an older one: each field added since, with its default
    for older in range(case["schema"], SCHEMA_VERSION):
        upgraded = UPGRADES[older](upgraded)
    assert loaded.saved.to_json() == upgraded
    if case["schema"] < 4:  # no store (schema 4): no prices, no budget
        assert loaded.saved.store is None and loaded.saved.budget_cents is None
    if case["schema"] < 3:  # no choice of where orders go (schema 3): the deploy's
        assert loaded.saved.orders is None
    if case["schema"] < 2:  # no undo window (schema 2): the default one
        assert loaded.saved.order_delay == 120
    basket = world.shop()
    world.run_lazies()
    (basket,) = world.baskets()
    assert header(basket) == f"Basket 1 of {loaded.saved.rounds}"
    world.click(basket, "approve_basket", user="U0BOB")
    world.run_lazies()
    approvers = ", ".join(f"<@{u}>" for u in loaded.saved.approvers)
    assert ephemeral_texts(world, "U0BOB") == [f"Only {approvers} can answer baskets here."]


@pytest.mark.parametrize("path", ROUND_ONE, ids=[p.parent.name for p in ROUND_ONE])
def test_a_basket_saved_by_older_code_can_be_edited(
    world: World, s3: Any, bucket: str, path: Path, kroger: FakeKroger
) -> None:
    """Every version is carried on to graph version 5 (``carry_v4_to_v5`` the last step), so a
    basket posted by any older code is edited like one posted today: its form lists its items
    (a ``Basket@1`` line, with no quantity of its own, can be removed, not given a quantity),
    the edit reaches its message priced at the workspace's store (a basket from before prices
    is priced once it is edited), and it orders as edited."""
    from bot.handler import cold_start
    from bot.records.workspace_settings import ChosenStore
    from tests.test_edit_items import open_edit, removing, submit

    case = json.loads(path.read_text())
    world.boot(
        CHECKPOINT_SIGNING_KEY=KEY.decode(),
        KROGER_CLIENT_ID=kroger.client_id,
        KROGER_CLIENT_SECRET=kroger.client_secret,
        KROGER_API_URL=kroger.url,
    )
    rt, _ = cold_start()
    store = ChosenStore(location_id="01400943", name="Kroger Over-the-Rhine")
    rt.records.settings_store.save(case["tenant"], replace(rt.defaults, store=store), None)
    basket = put_back(world, s3, bucket, case)
    view = open_edit(world, basket)
    assert submit(world, view, **removing(view, "mozzarella")) == {}
    world.run_lazies()
    edited = world.slack.message(CHANNEL, basket["ts"]) or {}
    assert "Basket 1 · edited by <@U0BOB>:" in context_text(edited)
    assert "at Kroger Over-the-Rhine" in context_text(edited)  # priced, whatever wrote it
    assert "mozzarella" not in json.dumps(edited["blocks"]).split("edited by")[0]
    world.click(edited, "approve_basket", user="U0CAROL")
    world.run_lazies()
    assert [m["text"] for m in world.slack.thread(CHANNEL, basket["ts"])] == ["Ordered 4 items."]
    assert world.slack.violations == [] and lock_keys(s3, bucket) == []
