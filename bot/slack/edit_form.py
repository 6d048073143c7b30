"""The Edit items modal: its blocks, its MACed ``private_metadata``, and reading a submission.

Edit items opens a modal in the click's ack ("Reading the basket…": the trigger ID works once,
within about three seconds, and the ack reads no S3); the lazy run reads the basket's latest
checkpoint and fills the modal in by its ``external_id`` (``bot.steps.edit``). The form:

    Remove            one multi_static_select of the items (Block Kit's checkboxes take at most
                      10 options, a select menu 100: docs.slack.dev, block-elements)
    <each item>       a number_input (decimals allowed) holding its quantity
    Add an item       a name, a quantity and a unit, all optional

A modal holds at most 100 blocks (``bot.sandbox.block_kit``): two for the note and Remove, three
for the add row, one a quantity, so at most :data:`MAX_EDITABLE` items are shown; a longer
basket is told to use Change… instead.

The metadata names the session, request, channel and message like the change modal's, plus the
basket's SHA-256 (``workflow.shop.edit.basket_sha256``): an edit is applied only to the basket
it was opened on, and the item positions it names are that basket's. Everything here is checked
in the ack (``response_action: errors`` under the field), with no S3 and no workflow import;
the lazy run applies the edit to the checkpoint's basket and checks it again there.
"""

from __future__ import annotations

import hashlib
import re
from dataclasses import dataclass
from decimal import Decimal, InvalidOperation
from typing import TYPE_CHECKING, Any

from workflow.shop.text import one_line

from .blocks import Ref, plain
from .modal import ModalTarget, metadata_with, read_metadata_with

if TYPE_CHECKING:  # the workflow: imported by the lazy run that fills the modal in, not an ack
    from workflow.shop.basket import Item

EDIT_MODAL = "edit_basket_modal"
REMOVE_BLOCK = "remove"
REMOVE_INPUT = "remove_items"
QUANTITY_INPUT = "quantity"
ADD_NAME = "add_name"
ADD_QUANTITY = "add_quantity"
ADD_UNIT = "add_unit"
NAME_INPUT = "name"
UNIT_INPUT = "unit"
MAX_EDITABLE = 90  # items a modal shows: 100 blocks, less the note, Remove and the add row
# As workflow.shop.basket's (MAX_ITEM_LENGTH, MAX_UNIT_LENGTH, MAX_QUANTITY; the ack imports no
# workflow): tests/test_edit_items.py checks that they agree.
MAX_NAME = 500
MAX_UNIT = 30
MAX_QUANTITY = 100_000
MIN_QUANTITY = Decimal("0.0001")  # workflow.shop.basket's, for a quantity typed or changed

A_NUMBER = f"Enter a number of at least {MIN_QUANTITY} and at most {MAX_QUANTITY:,}."
EMPTY = "That would leave the basket empty: keep at least one item, or reject the basket."
NAME_IT = "Name the item to add."
LONG_NAME = f"An item's name has at most {MAX_NAME} characters."
LONG_UNIT = f"A unit has at most {MAX_UNIT} characters."
NOTE = "Change a quantity, remove items or add one. Approvals so far start again."
_NUMBER = re.compile(r"\s*\d{1,9}(\.\d{1,30})?\s*")


def quantity_block(position: int) -> str:
    return f"qty-{position}"


def edit_view_id(trigger_id: str) -> str:
    """The modal's ``external_id`` (unique per workspace) from the trigger that opened it: the
    lazy run of the same click fills the modal in by it, without its view ID."""
    return "edit-" + hashlib.sha256(trigger_id.encode()).hexdigest()[:32]


@dataclass(frozen=True)
class EditTarget:
    """What an edit modal was opened on: the request and message (as a change modal's), the
    basket's SHA-256 and how many items it has."""

    target: ModalTarget
    basket: str
    items: int


@dataclass(frozen=True)
class ItemEdit:
    """A submitted edit, by position in the basket it was opened on (``basket``: its SHA-256):
    the items removed, each shown item's quantity, and the item added (name, quantity, unit)."""

    basket: str
    removed: tuple[int, ...] = ()
    quantities: tuple[tuple[int, int | float], ...] = ()
    add: tuple[str, int | float, str] | None = None


def edit_metadata(
    key: bytes, tenant: str, ref: Ref, channel: str, message_ts: str, basket: str, items: int
) -> str:
    """The modal's ``private_metadata``: the change modal's, the basket's SHA-256 and how many
    items it has (so the ack can tell an edit that removes them all)."""
    return metadata_with(key, tenant, ref, channel, message_ts, b=basket, n=str(items))


def read_edit_metadata(key: bytes, tenant: str, value: object) -> EditTarget | None:
    """What an edit modal was opened on, if this bot wrote its metadata for ``tenant``."""
    read = read_metadata_with(key, tenant, value, "b", "n")
    if read is None or not read[1]["n"].isdigit():
        return None
    target, extra = read
    return EditTarget(target, extra["b"], int(extra["n"]))


def _frame(external_id: str, blocks: list[dict[str, Any]], **more: Any) -> dict[str, Any]:
    return {
        "type": "modal",
        "callback_id": EDIT_MODAL,
        "external_id": external_id,
        "title": plain("Edit items", 24),
        "close": plain("Cancel", 24),
        "blocks": blocks,
        **more,
    }


def loading_edit_modal(external_id: str) -> dict[str, Any]:
    """What the ack opens: the lazy run fills it in (or says why it cannot)."""
    return _frame(external_id, [_section("Reading the basket…")])


def said_modal(external_id: str, text: str) -> dict[str, Any]:
    """The modal when the basket cannot be edited: why (our words), and no Save."""
    return {**_frame(external_id, [_section(text)]), "close": plain("Close", 24)}


def _section(text: str) -> dict[str, Any]:
    return {"type": "section", "text": {"type": "mrkdwn", "text": text}}


def _short(text: str, limit: int) -> str:
    return text if len(text) <= limit else text[: limit - 1] + "…"


def edit_modal(external_id: str, metadata: str, items: list[Item]) -> dict[str, Any]:
    """The form for ``items`` (at most :data:`MAX_EDITABLE`): plain_text labels and options,
    so the model's and people's words show as written."""
    options = [
        {"text": plain(_short(item.line(), 75), 75), "value": str(i)}
        for i, item in enumerate(items)
    ]
    remove = {
        "type": "input",
        "block_id": REMOVE_BLOCK,
        "optional": True,
        "label": plain("Remove", 2000),
        "element": {
            "type": "multi_static_select",
            "action_id": REMOVE_INPUT,
            "placeholder": plain("Items to take out", 150),
            "options": options,
        },
    }
    quantities = [
        {
            "type": "input",
            "block_id": quantity_block(i),
            "label": plain(
                _short(f"{item.name} ({item.unit})" if item.unit else item.name, 2000), 2000
            ),
            "element": {
                "type": "number_input",
                "action_id": QUANTITY_INPUT,
                "is_decimal_allowed": True,
                "initial_value": item.quantity_text,
                "max_value": str(MAX_QUANTITY),
            },
        }
        for i, item in enumerate(items)
        if item.quantity is not None
    ]
    add = [
        _text_input(ADD_NAME, "Add an item", NAME_INPUT, MAX_NAME, "oat milk"),
        {
            "type": "input",
            "block_id": ADD_QUANTITY,
            "optional": True,
            "label": plain("How many (of the unit)", 2000),
            "element": {
                "type": "number_input",
                "action_id": QUANTITY_INPUT,
                "is_decimal_allowed": True,
                "max_value": str(MAX_QUANTITY),
            },
            "hint": plain("Empty: 1.", 2000),
        },
        _text_input(ADD_UNIT, "Unit", UNIT_INPUT, MAX_UNIT, "l, g, pack; empty: pieces"),
    ]
    return _frame(
        external_id,
        [_section(NOTE), remove, *quantities, *add],
        private_metadata=metadata,
        submit=plain("Save", 24),
    )


def _text_input(block: str, label: str, action: str, limit: int, example: str) -> dict[str, Any]:
    return {
        "type": "input",
        "block_id": block,
        "optional": True,
        "label": plain(label, 2000),
        "element": {
            "type": "plain_text_input",
            "action_id": action,
            "max_length": limit,
            "placeholder": plain(example, 150),
        },
    }


def _dict(value: object) -> dict[str, Any]:
    return value if isinstance(value, dict) else {}


def _number(value: object) -> int | float | None:
    """A quantity as a number_input sends it ("2", "1.5"); None for anything else, under
    ``MIN_QUANTITY`` or too large (a number_input's value is a string; a forged one may be
    anything)."""
    if not isinstance(value, str) or not _NUMBER.fullmatch(value):
        return None
    try:
        number = Decimal(value.strip())
    except InvalidOperation:
        return None
    if not MIN_QUANTITY <= number <= MAX_QUANTITY:
        return None
    return int(number) if number == number.to_integral_value() else float(number)


def read_edit_state(opened: EditTarget, values: object) -> ItemEdit | dict[str, str]:
    """The edit in a submission's ``state.values``, or the errors to show, by block ID."""
    values = _dict(values)
    errors: dict[str, str] = {}
    chosen = _dict(_dict(values.get(REMOVE_BLOCK)).get(REMOVE_INPUT)).get("selected_options")
    removed: set[int] = set()
    for option in chosen if isinstance(chosen, list) else []:
        value = _dict(option).get("value")
        if isinstance(value, str) and value.isdigit() and int(value) < opened.items:
            removed.add(int(value))
    quantities: list[tuple[int, int | float]] = []
    for block, actions in values.items():
        if not (isinstance(block, str) and block.startswith("qty-") and block[4:].isdigit()):
            continue
        position = int(block[4:])
        if position in removed or position >= opened.items:
            continue
        number = _number(_dict(_dict(actions).get(QUANTITY_INPUT)).get("value"))
        if number is None:
            errors[block] = A_NUMBER
        else:
            quantities.append((position, number))
    add = _read_add(values, errors)
    if len(removed) >= opened.items and add is None and ADD_NAME not in errors:
        errors[REMOVE_BLOCK] = EMPTY
    if errors:
        return errors
    return ItemEdit(opened.basket, tuple(sorted(removed)), tuple(sorted(quantities)), add)


def _read_add(
    values: dict[str, Any], errors: dict[str, str]
) -> tuple[str, int | float, str] | None:
    def text(block: str, action: str) -> str:
        value = _dict(_dict(values.get(block)).get(action)).get("value")
        return " ".join(one_line(value).split()) if isinstance(value, str) else ""

    name, unit = text(ADD_NAME, NAME_INPUT), text(ADD_UNIT, UNIT_INPUT)
    typed = _dict(_dict(values.get(ADD_QUANTITY)).get(QUANTITY_INPUT)).get("value")
    quantity = _number(typed) if typed not in (None, "") else 1
    if len(name) > MAX_NAME:
        errors[ADD_NAME] = LONG_NAME
    if len(unit) > MAX_UNIT:
        errors[ADD_UNIT] = LONG_UNIT
    if quantity is None:
        errors[ADD_QUANTITY] = A_NUMBER
    if not name and (unit or typed not in (None, "")):
        errors[ADD_NAME] = NAME_IT
    if not name or ADD_NAME in errors or ADD_UNIT in errors or quantity is None:
        return None
    return name, quantity, unit
