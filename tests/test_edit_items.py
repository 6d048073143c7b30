"""Edit items (issue 23, part 1): a basket changed by hand, with no model call.

Through the real handler, with S3 in moto, the fake Slack Web API (which refuses Block Kit that
Slack would: a modal of more than 100 blocks, a select menu of more than 100 options, option text
over 75 characters, ``world.slack.violations``) and the fake Messages API (whose request count
proves no model call). Slack facts used here (docs.slack.dev): a ``view_submission`` ack may
answer ``response_action: errors`` with a message per input ``block_id``, and the modal stays
open; a ``number_input``'s value arrives as a string; ``multi_static_select`` sends
``selected_options`` with each option's ``value``; a trigger ID works once, for 3 seconds, so the
modal opens in the ack and is filled in by ``views.update`` with its ``external_id``.
"""

from __future__ import annotations

import json
import time
from decimal import Decimal
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from bot.sandbox.block_kit import parsed_texts
from bot.sandbox.slack_requests import view_submission
from bot.slack import edit_form
from bot.slack.blocks import Ref
from bot.slack.edit_form import EDIT_MODAL, MAX_EDITABLE
from bot.slack.modal import ModalTarget
from bot.steps.edit import EDIT_MADE, EDITED_SINCE, STALE_EDIT, edited_since
from tests.bot_kit import (
    CHANNEL,
    SECRET,
    World,
    change,
    context_text,
    header,
    objects,
    start_basket,
)
from tests.fault_kit import ephemeral_texts, lock_keys, s3_of, session_of, thread_texts
from tests.settings_kit import submitted
from tests.test_quorum import latest_doc, orders
from workflow.shop import basket as shop_basket
from workflow.shop import edit as shop_edit
from workflow.shop.edit import EMPTY, edit_summary, edited_items
from workflow.shop.executors import EDIT_BASKET


def now(world: World, basket: dict[str, Any]) -> dict[str, Any]:
    found = world.slack.message("C0SHOP", basket["ts"])
    assert found is not None
    return found


def open_edit(world: World, basket: dict[str, Any], user: str = "U0BOB") -> dict[str, Any]:
    """Press Edit items: the ack opens "Reading the basket…"; the lazy run fills it in."""
    ack = world.click(basket, "edit_basket", user=user)
    assert ack["statusCode"] == 200 and not ack.get("body"), ack
    (opened,) = [c.args["view"] for c in world.slack.calls_to("views.open")][-1:]
    opened = json.loads(opened) if isinstance(opened, str) else opened
    assert opened["blocks"][0]["text"]["text"] == "Reading the basket…"
    world.run_lazies()
    view = world.slack.open_view(user)
    assert view is not None
    return view


def positions(view: dict[str, Any], *names: str) -> list[str]:
    (remove,) = [b for b in view["blocks"] if b.get("block_id") == "remove"]
    options = remove["element"]["options"]
    return [o["value"] for o in options for n in names if o["text"]["text"].endswith(n)]


def submit(
    world: World,
    view: dict[str, Any],
    user: str = "U0BOB",
    metadata: str | None = None,
    **changes: Any,
) -> dict[str, Any]:
    """Submit the Edit items form; the ack's answer ({} when it closes the modal)."""
    ack = world.send(
        view_submission(
            SECRET,
            callback_id=EDIT_MODAL,
            private_metadata=view["private_metadata"] if metadata is None else metadata,
            values=submitted(view, **changes),
            user_id=user,
        )
    )
    assert ack["statusCode"] == 200, ack
    return json.loads(ack["body"]) if ack.get("body") else {}


def removing(view: dict[str, Any], *names: str) -> dict[str, Any]:
    chosen = [
        {"text": {"type": "plain_text", "text": n}, "value": v}
        for n, v in zip(names, positions(view, *names), strict=True)
    ]
    return {"remove": {"selected_options": chosen}}


def quantity(view: dict[str, Any], name: str, value: str) -> dict[str, Any]:
    (position,) = positions(view, name)
    return {f"qty-{position}": {"value": value}}


def test_the_form_lists_each_item_with_its_quantity_and_a_remove_menu(world: World) -> None:
    basket = start_basket(world)
    assert "edit_basket" in world.buttons(basket)
    view = open_edit(world, basket)
    assert view["title"]["text"] == "Edit items" and view["submit"]["text"] == "Save"
    (remove,) = [b for b in view["blocks"] if b.get("block_id") == "remove"]
    assert remove["element"]["type"] == "multi_static_select"
    assert len(remove["element"]["options"]) == 10
    quantities = [b for b in view["blocks"] if b.get("block_id", "").startswith("qty-")]
    assert len(quantities) == 10
    pizza = quantities[7]
    assert pizza["label"]["text"] == "pizza bases"
    assert pizza["element"] == {
        "type": "number_input",
        "action_id": "quantity",
        "is_decimal_allowed": True,
        "initial_value": "2",
        "max_value": "100000",
    }
    assert [b["label"]["text"] for b in quantities[:1]] == ["chicken breast (g)"]
    assert world.slack.violations == []


def test_an_edit_updates_the_message_in_place_with_no_model_call(world: World) -> None:
    """ "Basket 1 · edited by @bob: −pizza bases, mozzarella 250 → 500 g, +oat milk 1 l": the same
    message, the same round, new buttons; no new basket, nothing in the thread."""
    basket = start_basket(world)
    calls = world.claude.message_calls
    view = open_edit(world, basket)
    answer = submit(
        world,
        view,
        **removing(view, "pizza bases"),
        **quantity(view, "mozzarella", "500"),
        add_name={"value": "oat milk"},
        add_quantity={"value": "1"},
        add_unit={"value": "l"},
    )
    assert answer == {}
    world.run_lazies()
    shown = now(world, basket)
    assert header(shown) == "Basket 1 of 3"
    assert len(world.baskets()) == 1 and thread_texts(world, basket) == []
    assert world.claude.message_calls == calls  # no model call at all
    text = json.dumps(shown["blocks"])
    assert "pizza bases" not in text.split("edited by")[0]
    assert "500 g mozzarella" in text and "1 l oat milk" in text
    assert "Basket 1 · edited by <@U0BOB>:" in context_text(shown)
    assert "−pizza bases, mozzarella 250 → 500 g, +oat milk 1 l" in context_text(shown)
    assert "basket edited: 10 items" in context_text(shown)
    assert world.buttons(shown)["approve_basket"] != world.buttons(basket)["approve_basket"]
    bucket = world.env["CHECKPOINT_BUCKET"]
    assert lock_keys(world.s3, bucket) == []
    doc = latest_doc(world.s3, bucket, session_of(world, shown))
    (answered,) = doc["answered"].values()
    assert answered["by"] == "U0BOB"  # the audit trail names who edited
    assert answered["response"]["t"] == "BasketDecision@5"
    assert [i["name"] for i in answered["response"]["v"]["edit"]][-1] == "oat milk"
    assert doc["workflow"]["version"] == 5
    assert world.slack.violations == []

    world.click(shown, "approve_basket", user="U0CAROL")
    world.run_lazies()
    assert thread_texts(world, basket) == ["Ordered 10 items."]
    assert "oat milk" in json.dumps(world.slack.thread("C0SHOP", basket["ts"])[0]["blocks"])


def test_an_edit_uses_no_round_and_works_on_the_last_basket(world: World) -> None:
    basket = start_basket(world)
    view = open_edit(world, basket)
    submit(world, view, **quantity(view, "carrots", "4"))
    world.run_lazies()
    change(world, now(world, basket), "no pizza")
    change(world, world.baskets()[-1], "no mushrooms")
    last = world.baskets()[-1]
    assert header(last).startswith("Basket 3 of 3")  # two changes after an edit: 3 of 3
    assert "change_basket" not in world.buttons(last) and "edit_basket" in world.buttons(last)
    view = open_edit(world, last)
    submit(world, view, **quantity(view, "carrots", "6"))
    world.run_lazies()
    assert "6 carrots" in json.dumps(now(world, last)["blocks"])
    assert "Basket 3 · edited by <@U0BOB>:" in context_text(now(world, last))


def test_approvals_so_far_start_again_after_an_edit(world: World) -> None:
    world.boot(APPROVALS_NEEDED="2")
    basket = start_basket(world)
    world.click(basket, "approve_basket", user="U0CAROL")
    world.run_lazies()
    assert "Approved by <@U0CAROL> · 1 of 2 needed" in context_text(now(world, basket))
    view = open_edit(world, now(world, basket))  # opened after Carol's approval re-asked it
    submit(world, view, **quantity(view, "carrots", "5"))
    world.run_lazies()
    assert "Approved by" not in context_text(now(world, basket))
    world.click(now(world, basket), "approve_basket", user="U0CAROL")
    world.run_lazies()
    assert "1 of 2 needed" in context_text(now(world, basket)) and orders(world) == []
    world.click(now(world, basket), "approve_basket", user="U0DAVE")
    world.run_lazies()
    assert orders(world) == ["Ordered 10 items."]


@pytest.mark.parametrize(
    ("typed", "why"),
    [
        ("0", edit_form.A_NUMBER),
        ("-1", edit_form.A_NUMBER),
        ("two", edit_form.A_NUMBER),
        ("100001", edit_form.A_NUMBER),
        ("", edit_form.A_NUMBER),
        ("1e3", edit_form.A_NUMBER),
    ],
)
def test_a_quantity_that_is_no_positive_number_is_answered_under_its_field(
    world: World, typed: str, why: str
) -> None:
    basket = start_basket(world)
    view = open_edit(world, basket)
    before = objects(world.s3, world.env["CHECKPOINT_BUCKET"])
    (field,) = quantity(view, "carrots", typed)
    answer = submit(world, view, **{field: {"value": typed or None}})
    assert answer == {"response_action": "errors", "errors": {field: why}}
    assert world.lam.invocations == []  # no lazy run: nothing is read or written
    assert objects(world.s3, world.env["CHECKPOINT_BUCKET"]) == before


def test_an_edit_that_empties_the_basket_or_names_no_item_is_refused_in_the_modal(
    world: World,
) -> None:
    basket = start_basket(world)
    view = open_edit(world, basket)
    every = [o["text"]["text"] for o in view["blocks"][1]["element"]["options"]]
    names = [n.split(" ", 1)[-1] for n in every]
    chosen = {
        "remove": {
            "selected_options": [
                {"text": {"type": "plain_text", "text": t}, "value": str(i)}
                for i, t in enumerate(every)
            ]
        }
    }
    assert len(names) == 10
    assert submit(world, view, **chosen) == {
        "response_action": "errors",
        "errors": {"remove": EMPTY},
    }
    assert submit(world, view, add_unit={"value": "kg"}) == {
        "response_action": "errors",
        "errors": {"add_name": edit_form.NAME_IT},
    }
    long = "x" * 5000  # a forged submission: the input's max_length is 500
    assert submit(world, view, add_name={"value": long}) == {
        "response_action": "errors",
        "errors": {"add_name": edit_form.LONG_NAME},
    }
    assert submit(world, view, add_name={"value": "rice"}, add_quantity={"value": "0"}) == {
        "response_action": "errors",
        "errors": {"add_quantity": edit_form.A_NUMBER},
    }
    assert world.lam.invocations == [] and len(world.baskets()) == 1


def test_a_form_whose_metadata_the_bot_did_not_write_is_refused(world: World) -> None:
    basket = start_basket(world)
    view = open_edit(world, basket)
    forged = json.loads(view["private_metadata"])
    forged["b"] = "0" * 64  # another basket's digest, the MAC unchanged
    answer = submit(world, view, metadata=json.dumps(forged), **quantity(view, "carrots", "9"))
    assert answer["errors"] == {"remove": "This basket is no longer waiting for an answer."}
    change_metadata = {k: v for k, v in forged.items() if k not in ("b", "n")}
    answer = submit(world, view, metadata=json.dumps(change_metadata))
    assert answer["response_action"] == "errors"
    assert world.lam.invocations == []


def test_a_form_opened_on_an_older_basket_changes_nothing_and_says_why(world: World) -> None:
    """Carol and Bob open Edit items on the same basket; Carol saves first. Bob's form was of
    the basket before her edit: refused with the reason, her edit stands. A form opened before
    a Change… is of basket 1, not basket 2: refused too."""
    basket = start_basket(world)
    bobs = open_edit(world, basket, user="U0BOB")
    carols = open_edit(world, basket, user="U0CAROL")
    submit(world, carols, user="U0CAROL", **quantity(carols, "carrots", "7"))
    world.run_lazies()
    bucket = world.env["CHECKPOINT_BUCKET"]
    before = objects(world.s3, bucket)
    submit(world, bobs, **quantity(bobs, "carrots", "8"))
    world.run_lazies()
    assert ephemeral_texts(world, "U0BOB") == [STALE_EDIT]
    assert objects(world.s3, bucket) == before and lock_keys(world.s3, bucket) == []
    assert "7 carrots" in json.dumps(now(world, basket)["blocks"])

    again = open_edit(world, basket, user="U0BOB")  # from the stale screen: says so
    assert again["blocks"][0]["text"]["text"] == EDITED_SINCE and "submit" not in again
    fresh = open_edit(world, now(world, basket), user="U0BOB")
    change(world, now(world, basket), "no pizza", user="U0CAROL")
    submit(world, fresh, **quantity(fresh, "carrots", "9"))
    world.run_lazies()
    assert ephemeral_texts(world, "U0BOB")[-1] == STALE_EDIT
    assert "9 carrots" not in json.dumps(world.baskets()[-1]["blocks"])


def test_an_approval_from_a_screen_showing_the_basket_before_an_edit_approves_nothing(
    world: World,
) -> None:
    basket = start_basket(world)  # as Carol's screen still shows it
    view = open_edit(world, basket)
    submit(world, view, **removing(view, "pizza bases"))
    world.run_lazies()
    world.click(basket, "approve_basket", user="U0CAROL")
    world.run_lazies()
    assert ephemeral_texts(world, "U0CAROL") == [edited_since("U0BOB")]
    assert orders(world) == []


def test_a_retry_of_the_edit_lazy_run_makes_the_edit_once(world: World) -> None:
    """Lambda retries an async invocation that failed: the same submission's lazy run, twice."""
    basket = start_basket(world)
    view = open_edit(world, basket)
    submit(world, view, **quantity(view, "carrots", "4"))
    (lazy,) = world.lam.take()
    world.send(lazy.payload)
    bucket = world.env["CHECKPOINT_BUCKET"]
    before = objects(world.s3, bucket)
    world.send(lazy.payload)
    assert objects(world.s3, bucket) == before
    assert ephemeral_texts(world, "U0BOB") == [EDIT_MADE]
    doc = latest_doc(world.s3, bucket, session_of(world, now(world, basket)))
    assert len(doc["answered"]) == 1


def test_who_may_not_answer_is_told_in_the_modal(world: World) -> None:
    world.boot(APPROVER_IDS="U0CAROL")
    basket = start_basket(world)
    view = open_edit(world, basket, user="U0BOB")
    assert "Only <@U0CAROL> can answer baskets here." in view["blocks"][0]["text"]["text"]
    assert "submit" not in view


def test_names_in_an_edit_cannot_ping_anyone_or_change_how_an_item_looks(world: World) -> None:
    """Slack parses mentions and formatting only in mrkdwn (and the message's ``text``): the
    added item's name shows in plain_text, in the items and in the "edited by" summary."""
    basket = start_basket(world)
    view = open_edit(world, basket)
    submit(world, view, add_name={"value": "<!channel> *free* <@U0BOSS>"})
    world.run_lazies()
    shown = now(world, basket)
    (edited,) = [b for b in shown["blocks"] if "edited by" in json.dumps(b)]
    assert edited["elements"][1] == {
        "type": "plain_text",
        "text": "+<!channel> *free* <@U0BOSS> 1",
        "emoji": False,
    }
    parsed = "\n".join(parsed_texts(shown["blocks"])) + shown["text"]
    assert "<!channel>" not in parsed and "U0BOSS" not in parsed and "*free*" not in parsed
    assert "<!channel> *free* <@U0BOSS>" in json.dumps(shown["blocks"])  # shown as written
    assert world.slack.violations == []


def test_a_basket_too_long_for_a_modal_is_told_to_use_change(world: World) -> None:
    lines = "\n".join(f"{n + 1} item number {n}" for n in range(MAX_EDITABLE + 1))
    from bot.sandbox.anthropic_api import Reply

    world.claude.script(Reply(lines))
    basket = start_basket(world)
    view = open_edit(world, basket)
    assert "use *Change…*" in view["blocks"][0]["text"]["text"]
    assert world.slack.violations == []


def test_the_form_and_the_workflow_agree_on_the_limits() -> None:
    assert edit_form.MAX_NAME == shop_basket.MAX_ITEM_LENGTH
    assert edit_form.MAX_UNIT == shop_basket.MAX_UNIT_LENGTH
    assert edit_form.MAX_QUANTITY == shop_basket.MAX_QUANTITY
    assert Decimal(str(shop_basket.MIN_QUANTITY)) == edit_form.MIN_QUANTITY
    assert edit_form.A_NUMBER == shop_edit.A_NUMBER
    assert EDIT_BASKET == "edit-basket"


def test_edited_items_and_the_summary() -> None:
    items = [
        shop_basket.Item(name="milk", quantity=1, unit="l"),
        shop_basket.Item(name="pizza dough", quantity=1),
        shop_basket.Item(name="500 g flour", quantity=None),  # a Basket@1 line
    ]
    after = edited_items(items, removed=frozenset({1}), quantities={0: 2, 2: 9})
    assert [i.line() for i in after] == ["2 l milk", "500 g flour"]
    assert edit_summary(items, after) == "−pizza dough, milk 1 → 2 l"
    with pytest.raises(ValueError, match="empty"):
        edited_items(items, removed=frozenset({0, 1, 2}))
    with pytest.raises(ValueError, match="another basket"):
        edited_items(items, removed=frozenset({3}))


def test_the_form_and_the_edit_work_each_in_a_fresh_process(served: World) -> None:
    """The form is filled in, and the edit made, each by a lazy run in a new interpreter: all
    they need is in the checkpoint and the modal's metadata, nothing in memory."""
    world = served
    basket = start_basket(world)
    ack = world.click(basket, "edit_basket")
    assert ack["statusCode"] == 200
    world.run_lazies(fresh_process=True)
    view = world.slack.open_view("U0BOB")
    assert view is not None and view["callback_id"] == EDIT_MODAL
    submit(world, view, **removing(view, "mushrooms"), **quantity(view, "carrots", "2.5"))
    world.run_lazies(fresh_process=True)
    shown = now(world, basket)
    assert "−mushrooms, carrots 3 → 2.5" in context_text(shown)
    assert "2.5 carrots" in json.dumps(shown["blocks"])


EDIT_POINTS = ["lock-taken", "checkpoint-read", "between-saves", "checkpoint-written", "posted"]


@pytest.mark.parametrize("recovery", ["lambda retry", "next click"])
@pytest.mark.parametrize("point", EDIT_POINTS)
def test_an_edit_killed_at_each_point_is_made_once(
    served: World, point: str, recovery: str
) -> None:
    """The edit's lazy run dies (``os._exit``, as a killed Lambda) at each point of its turn.
    Lambda's retry of the same event makes the edit, once, and shows it; or, before any retry,
    Carol presses Approve on the basket as her screen still shows it: an edit that was saved is
    shown to her and nothing is approved; one that was not, was never made, and her approval
    orders the basket she saw."""
    from tests.test_crash_points import LEASE, check_session

    world = served
    world.boot(LOCK_TTL_SECONDS=str(LEASE))
    basket = start_basket(world)
    session = session_of(world, basket)
    view = open_edit(world, basket)
    submit(world, view, **removing(view, "mushrooms"))
    (lost,) = world.lam.take()
    world.in_fresh_process(lost.payload, crash_at=point)
    time.sleep(LEASE + 0.2)  # the dead process's lease passes
    if recovery == "lambda retry":
        world.in_fresh_process(lost.payload)
        world.in_fresh_process(lost.payload)  # delivered once more: nothing new
    else:
        world.click(basket, "approve_basket", user="U0CAROL")
        world.run_lazies(fresh_process=True)
    check_session(world, session)
    saved = point not in ("lock-taken", "checkpoint-read")
    shown = now(world, basket)
    if recovery == "lambda retry" or saved:
        assert "Basket 1 · edited by <@U0BOB>:" in context_text(shown)
        assert orders(world) == []
        doc = latest_doc(s3_of(world), "bot-bucket", session)
        assert [a["by"] for a in doc["answered"].values()] == ["U0BOB"]  # one edit
    else:
        assert orders(world) == ["Ordered 10 items."] and "edited by" not in context_text(shown)


def test_a_lost_edit_is_said_in_the_baskets_thread(world: World) -> None:
    """Lambda gave up on the edit's lazy run (every attempt failed): the lost-runs queue says so
    where the modal's MACed metadata says the basket is; and on the form's, in its thread too."""
    from bot.sandbox.aws_events import lambda_context, lost_run_record, sqs_event

    basket = start_basket(world)
    world.click(basket, "edit_basket")
    (form,) = world.lam.take()
    world.send(form.payload)
    view = world.slack.open_view("U0BOB")
    assert view is not None
    submit(world, view, **quantity(view, "carrots", "4"))
    (edit,) = world.lam.take()
    from bot.handler import handler

    for lost in (form, edit):
        handler(sqs_event(lost_run_record(lost.payload)), lambda_context())
    assert thread_texts(world, basket) == [
        "<@U0BOB> The Edit items form of basket 1 couldn't be filled in — press Edit items again.",
        "<@U0BOB> Your edit didn't go through — press Edit items again.",
    ]


@given(st.floats(min_value=0.0001, max_value=100_000, allow_nan=False, allow_infinity=False))
def test_every_quantity_the_form_shows_reads_back_as_the_same_number(quantity: float) -> None:
    """The form pre-fills each quantity as the basket writes it (``Item.quantity_text``: no
    exponent, never rounded); submitted unchanged, it must read back as the number it was, or
    an untouched field would refuse the whole edit."""
    item = shop_basket.Item(name="flour", quantity=quantity)
    opened = edit_form.EditTarget(ModalTarget(Ref("s", "r"), "C0SHOP", "1.2"), "sha", 1)
    values = {"qty-0": {"quantity": {"type": "number_input", "value": item.quantity_text}}}
    edit = edit_form.read_edit_state(opened, values)
    assert isinstance(edit, edit_form.ItemEdit)
    assert edit.quantities == ((0, quantity),)


def test_a_form_closed_before_it_was_filled_in_is_left_and_slack_down_is_retried(
    world: World,
) -> None:
    """``views.update`` answers ``not_found`` for a modal the person closed (nobody to tell: the
    lazy run ends); a Slack failure that outlasts slack_sdk's retries raises, so Lambda retries
    the lazy run (``bot.sandbox.lambda_async``), and the retry fills the form in."""
    basket = start_basket(world)
    world.click(basket, "edit_basket")
    world.slack.fail_next("views.update", error="not_found")
    (run,) = world.run_async()
    assert run.errors == [""] and world.slack.open_view("U0BOB") is not None
    world.click(basket, "edit_basket")
    world.slack.fail_next("views.update", error="internal_error")
    (run,) = world.run_async()
    assert run.errors == ["LazyRunFailed", ""]
    view = world.slack.open_view("U0BOB")
    assert view is not None and view.get("submit", {}).get("text") == "Save"


def test_adding_an_item_already_in_the_basket_or_changing_nothing_is_told_and_writes_nothing(
    world: World,
) -> None:
    """The ack does not know the basket's names (it reads no S3): the lazy run, which does,
    tells the person, under the lock, and writes nothing."""
    basket = start_basket(world)
    bucket = world.env["CHECKPOINT_BUCKET"]
    before = objects(world.s3, bucket)
    view = open_edit(world, basket)
    submit(world, view, add_name={"value": "  Carrots "})
    world.run_lazies()
    submit(world, view)  # every field as it was
    world.run_lazies()
    assert ephemeral_texts(world, "U0BOB") == [
        "Carrots is in the basket already: change its quantity.",
        "That edit changed nothing: the basket is as it was.",
    ]
    assert objects(world.s3, bucket) == before and "edited by" not in context_text(
        now(world, basket)
    )


CONTROL_NAME = "\x00\x1b[31moat\u202e milk\u2066\x85"


def test_control_characters_in_an_added_name_reach_neither_the_checkpoint_nor_slack(
    world: World, s3: Any, bucket: str
) -> None:
    """C0 (``\\x00``, ``\\x1b`` opening a terminal escape), C1 (U+0085) and bidirectional
    controls (U+202E, U+2066) are dropped as the item is made (``workflow.shop.text``): the
    checkpoint, the items shown and the "edited by" line hold the name without them."""
    basket = start_basket(world)
    session = session_of(world, basket)
    view = open_edit(world, basket)
    assert submit(world, view, add_name={"value": CONTROL_NAME}) == {}
    world.run_lazies()
    doc = latest_doc(s3, bucket, session)
    names = [i["name"] for r in doc["requests"] for i in r["data"]["v"]["items"]]
    assert "[31moat milk" in names
    raw = json.dumps(doc) + json.dumps(world.slack.messages(CHANNEL))
    for control in ("\\u0000", "\\u001b", "\\u202e", "\\u2066", "\\u0085"):
        assert control not in raw
    assert "edited by <@U0BOB>" in context_text(now(world, basket))


@pytest.mark.parametrize("typed", ["0.000000001", "0.00001", "0.00009"])
def test_a_quantity_below_the_least_is_refused_under_its_field(world: World, typed: str) -> None:
    """The least quantity a person may type is 0.0001 (0.1 g written as kg): below it is a
    mistake or a probe, answered under the field; the modal stays open, nothing runs."""
    basket = start_basket(world)
    view = open_edit(world, basket)
    added = submit(world, view, add_name={"value": "salt"}, add_quantity={"value": typed})
    assert added == {"response_action": "errors", "errors": {"add_quantity": edit_form.A_NUMBER}}
    changed = submit(world, view, **quantity(view, "carrots", typed))
    (block,) = changed["errors"]
    assert changed["errors"][block] == edit_form.A_NUMBER
    assert edit_form.A_NUMBER == "Enter a number of at least 0.0001 and at most 100,000."
    assert world.lam.invocations == []
