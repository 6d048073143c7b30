"""The household's store and weekly budget in the Settings modal (issue 34, item 1).

Through the real handler (signed requests), moto's S3, the fake Web API and the local Kroger
stand-in (``bot.sandbox.kroger_api``: stores near 45202, 30308, 98109 and 80202, none near any
other ZIP). What Slack does that these tests rely on, from its docs (docs.slack.dev):

- an ``input`` block with ``dispatch_action: true`` sends ``block_actions`` when its
  ``plain_text_input`` says so (``dispatch_action_config.trigger_actions_on``:
  ``on_enter_pressed``); the payload carries the view, its ``hash`` and its whole state;
- ``views.update`` keeps what was typed in an input whose ``block_id`` and ``action_id`` the new
  view leaves the same ("Preserving input entry"), and refuses a ``hash`` that is not the
  view's current one with ``hash_conflict`` (views.update's errors), as the fake does.
"""

from __future__ import annotations

import base64
import json
from collections.abc import Iterator
from typing import Any

import pytest

from bot.records.workspace_settings import ChosenStore, WorkspaceSettings
from bot.sandbox.anthropic_api import Reply
from bot.sandbox.kroger_api import FakeKroger
from bot.slack.settings_store import BUDGET_PROBLEM, NOT_OFFERED
from bot.steps.settings_store import FOUND, KROGER_DOWN, NO_STORES, NOT_A_ZIP, OUT_OF_CALLS
from tests.bot_kit import World, context_text
from tests.settings_kit import open_settings, option, save, text, zip_entered, zip_event

TENANT = "T0TEAM"
WEEK = "1.5 lb chicken thighs\n1 gal whole milk"


@pytest.fixture
def kroger(world: World) -> Iterator[FakeKroger]:
    """The stand-in running, the deploy booted with its Kroger app, Carol a workspace admin."""
    with FakeKroger() as running:
        world.boot(
            KROGER_CLIENT_ID=running.client_id,
            KROGER_CLIENT_SECRET=running.client_secret,
            KROGER_API_URL=running.url,
        )
        world.slack.set_person("U0CAROL", is_admin=True)
        yield running


def saved(world: World) -> WorkspaceSettings | None:
    from bot.handler import cold_start

    rt, _ = cold_start()
    return rt.records.settings_store.read(TENANT).saved


def body_of(event: dict[str, Any]) -> str:
    """An API Gateway event's body, as the function reads it."""
    body = str(event["body"])
    return base64.b64decode(body).decode() if event.get("isBase64Encoded") else body


def block(view: dict[str, Any], block_id: str) -> dict[str, Any]:
    return next(b for b in view["blocks"] if b.get("block_id") == block_id)


def said(view: dict[str, Any]) -> str:
    found = [b for b in view["blocks"] if b.get("block_id") == "store_said"]
    return found[0]["elements"][0]["text"] if found else ""


def options(view: dict[str, Any]) -> list[str]:
    return [o["text"]["text"] for o in block(view, "store")["element"]["options"]]


def test_an_admin_lists_the_stores_near_a_zip_chooses_one_and_a_basket_is_priced_there(
    world: World, kroger: FakeKroger
) -> None:
    form = open_settings(world, "U0CAROL")
    assert form is not None
    select = block(form, "store")["element"]
    assert select["initial_option"]["value"] == "none"  # nothing chosen yet
    zip_field = block(form, "store_zip")
    assert zip_field["dispatch_action"] is True
    assert zip_field["element"]["dispatch_action_config"] == {
        "trigger_actions_on": ["on_enter_pressed"]
    }
    before = {b["block_id"]: b["element"]["action_id"] for b in form["blocks"] if "element" in b}

    listed = zip_entered(world, "U0CAROL", form, "45202", people=text("3"))
    assert listed is not None and said(listed) == FOUND.format(zip="45202")
    assert options(listed)[1:] == [
        "Kroger - Over-the-Rhine — 1420 Vine St, Cincinnati, OH 45202",
        "Kroger - Corryville — 100 E Corry St, Cincinnati, OH 45202",
        "Kroger - Walnut Hills — 2620 Victory Pkwy, Cincinnati, OH 45202",
    ]
    assert block(listed, "store")["element"]["initial_option"]["value"] == "01400943"
    after = {b["block_id"]: b["element"]["action_id"] for b in listed["blocks"] if "element" in b}
    # Every other input keeps its IDs, so Slack keeps what was typed in it (people: 3).
    assert {k: v for k, v in after.items() if k != "store"} == {
        k: v for k, v in before.items() if k != "store"
    }
    assert after["store"] != before["store"]  # a new list: no choice from the old one kept
    assert kroger.calls("locations") == 1 and world.slack.violations == []

    answer = save(world, "U0CAROL", listed, store=option("01400376"), budget=text("55"))
    assert answer == {}, answer
    settings = saved(world)
    assert settings is not None and settings.budget_cents == 5500
    assert settings.store is not None and settings.store.location_id == "01400376"
    assert settings.store.name.endswith("Corryville") and "100 E Corry St" in settings.store.address
    assert settings.changes[0].what == "store, weekly budget"

    world.claude.script(Reply(text=WEEK))
    world.shop()
    world.run_lazies()
    (basket,) = world.baskets()
    context = context_text(basket)
    assert f"at {settings.store.name}" in context and "this week's $55" in context

    home = json.dumps((world.open_home("U0CAROL") or {}).get("blocks", []), ensure_ascii=False)
    assert "*Store:* Kroger - Corryville, 100 E Corry St" in home
    assert "*weekly budget:* $55" in home and "changed store, weekly budget" in home
    seen = open_settings(world, "U0BOB")  # a member reads the same
    assert seen is not None and "Corryville" in json.dumps(seen["blocks"])

    again = open_settings(world, "U0CAROL")  # the saved store and budget, chosen and filled in
    assert again is not None
    assert block(again, "store")["element"]["initial_option"]["value"] == "01400376"
    assert block(again, "budget")["element"]["initial_value"] == "55"
    assert save(world, "U0CAROL", again, store=option("none"), budget=text("")) == {}
    cleared = saved(world)
    assert cleared is not None and cleared.store is None and cleared.budget_cents is None
    assert cleared.changes[0].what == "store, weekly budget"


@pytest.mark.parametrize(
    ("zip_code", "reason", "asked"),
    [("4520x", NOT_A_ZIP, 0), ("452021", NOT_A_ZIP, 0), ("10001", NO_STORES, 1)],
)
def test_a_zip_that_is_not_one_or_has_no_stores_is_said_under_it_and_nothing_is_lost(
    world: World, kroger: FakeKroger, zip_code: str, reason: str, asked: int
) -> None:
    form = open_settings(world, "U0CAROL")
    assert form is not None
    shown = zip_entered(world, "U0CAROL", form, zip_code)
    named = f"“{zip_code}”" if reason == NOT_A_ZIP else zip_code
    assert shown is not None and said(shown) == reason.format(zip=named)
    assert len(options(shown)) == 1  # still only "No store"
    assert kroger.calls("locations") == asked and saved(world) is None
    assert world.slack.violations == []


def test_kroger_down_is_said_and_the_stores_listed_before_stay(
    world: World, kroger: FakeKroger
) -> None:
    form = open_settings(world, "U0CAROL")
    assert form is not None
    listed = zip_entered(world, "U0CAROL", form, "45202")
    assert listed is not None
    kroger.answer_next(503, times=10)
    down = zip_entered(world, "U0CAROL", listed, "30308")
    assert down is not None and said(down) == KROGER_DOWN.format(zip="30308")
    assert options(down) == options(listed)  # the Cincinnati stores are still offered
    answer = save(world, "U0CAROL", down, store=option("01400441"))
    assert answer == {} and (saved(world) or WorkspaceSettings()).store is not None


def test_kroger_out_of_calls_is_said(world: World, kroger: FakeKroger) -> None:
    form = open_settings(world, "U0CAROL")
    assert form is not None
    kroger.answer_next(429, times=10)
    shown = zip_entered(world, "U0CAROL", form, "45202")
    assert (
        shown is not None
        and said(shown) == OUT_OF_CALLS.format(zip="45202")
        and len(options(shown)) == 1
    )


def test_a_stale_search_is_refused_by_its_hash_and_the_first_answer_stands_naming_its_zip(
    world: World, kroger: FakeKroger
) -> None:
    form = open_settings(world, "U0CAROL")
    assert form is not None
    first = zip_entered(world, "U0CAROL", form, "45202")
    assert first is not None
    late = zip_entered(world, "U0CAROL", form, "30308")  # sent with the view before the first
    assert late is not None and said(late) == FOUND.format(zip="45202")
    assert "Atlanta" not in json.dumps(late["blocks"])


def test_a_store_never_offered_or_a_forged_list_is_refused(
    world: World, kroger: FakeKroger
) -> None:
    form = open_settings(world, "U0CAROL")
    assert form is not None
    answer = save(world, "U0CAROL", form, store=option("01400441"))
    assert answer["errors"] == {"store": NOT_OFFERED} and saved(world) is None
    listed = zip_entered(world, "U0CAROL", form, "45202")
    assert listed is not None
    metadata = json.loads(listed["private_metadata"])
    metadata["stores"][0][1] = "Free Groceries <!channel>"  # the MAC no longer matches
    answer = save(world, "U0CAROL", listed, json.dumps(metadata), store=option("01400943"))
    assert answer["errors"] == {"store": NOT_OFFERED} and saved(world) is None
    assert kroger.calls("locations") == 1


@pytest.mark.parametrize(
    ("typed", "cents"),
    [("55", 5500), ("55.50", 5550), ("$1,200.5", 120050), (" ", None), ("100000", 10_000_000)],
)
def test_the_weekly_budget_is_saved_in_cents(
    world: World, kroger: FakeKroger, typed: str, cents: int | None
) -> None:
    form = open_settings(world, "U0CAROL")
    assert form is not None
    answer = save(world, "U0CAROL", form, budget=text(typed), people=text("2"))
    assert answer == {}, answer
    settings = saved(world)
    assert settings is not None and settings.budget_cents == cents


@pytest.mark.parametrize("typed", ["-5", "0", "0.00", "100000.01", "55.505", "55.5.5", "lots"])
def test_a_budget_that_is_not_one_is_refused_under_its_field(
    world: World, kroger: FakeKroger, typed: str
) -> None:
    form = open_settings(world, "U0CAROL")
    assert form is not None
    answer = save(world, "U0CAROL", form, budget=text(typed))
    assert answer == {"response_action": "errors", "errors": {"budget": BUDGET_PROBLEM}}
    assert saved(world) is None


def test_without_a_kroger_app_there_is_no_store_part_and_a_save_keeps_the_older_values(
    world: World,
) -> None:
    from bot.handler import cold_start

    store = ChosenStore(
        location_id="01400943", name="Kroger Over-the-Rhine", address="1420 Vine St"
    )
    world.slack.set_person("U0CAROL", is_admin=True)
    rt, _ = cold_start()
    rt.records.settings_store.save(TENANT, WorkspaceSettings(store=store, budget_cents=4000), None)
    form = open_settings(world, "U0CAROL")
    assert form is not None
    ids = {b.get("block_id") for b in form["blocks"]}
    assert not ids & {"store_head", "store_zip", "store", "budget"}
    assert save(world, "U0CAROL", form, people=text("4")) == {}
    settings = saved(world)
    assert settings is not None and settings.household.people == 4
    assert settings.store == store and settings.budget_cents == 4000


def test_a_key_typed_before_the_search_travels_to_no_lazy_run(
    world: World, kroger: FakeKroger
) -> None:
    """A ZIP search's block_actions carry the modal's whole state, an Instacart key typed into
    it included; Bolt's Lambda runner would send that event whole to the search's lazy run
    (and Lambda, should it fail, to the lost-runs queue). The key input is emptied there, as
    for a save (``bot.listeners.keyless``), and the body signed again still verifies."""
    import boto3

    key = "ic-dev-store-search-0123456789"
    arn = str(boto3.client("kms").create_key(Description="weekly-shop keys")["KeyMetadata"]["Arn"])
    world.boot(WORKSPACE_SECRETS_PATH="/weekly-shop/test", WORKSPACE_SECRETS_KEY=arn)
    form = open_settings(world, "U0CAROL")
    assert form is not None and any(b.get("block_id") == "instacart_key" for b in form["blocks"])
    event = zip_event("U0CAROL", form, "45202", instacart_key=text(key))
    assert key in body_of(event)
    assert world.send(event)["statusCode"] == 200
    (lazy,) = world.lam.take()
    assert lazy.payload["headers"]["x-slack-bolt-lazy-function-name"] == "run_store_search"
    assert key not in body_of(lazy.payload) and key not in json.dumps(lazy.payload)
    assert world.send(lazy.payload)["statusCode"] == 200  # re-signed: it verifies and runs
    shown = world.slack.open_view("U0CAROL")
    assert shown is not None and said(shown) == FOUND.format(zip="45202")
