"""The Settings modal's "Store and budget" part (pure functions; only in a deploy with a Kroger
app): where baskets are priced and the week's budget.

The admin types a ZIP code and presses Enter (a ``plain_text_input`` whose block dispatches
``block_actions`` on Enter); ``bot.steps.settings_store`` asks Kroger for the stores near it
and updates the modal with them in the select (:func:`with_stores`). The stores offered travel
in the modal's ``private_metadata`` with a MAC over the workspace, the settings' ETag and the
stores (:func:`store_metadata`), so that a save keeps the name and address Kroger gave, and a
location ID that was never offered is refused (:func:`read_store_part`). The select's own
``action_id`` names the stores it lists: Slack keeps what a person chose in an input whose
``block_id`` and ``action_id`` an update leaves alone, and a choice from an older list must not
survive into a new one.
"""

from __future__ import annotations

import base64
import hashlib
import hmac
import json
import re
from decimal import Decimal, InvalidOperation
from typing import Any

from bot.records.workspace_settings import MAX_BUDGET_CENTS, ChosenStore
from workflow.shop.money import money

from .blocks import plain
from .settings_ids import STORE_ZIP

Block = dict[str, Any]
STORE_HEAD = "store_head"
ZIP_BLOCK = STORE_ZIP
SAID_BLOCK = "store_said"
STORE_BLOCK = "store"
BUDGET_BLOCK = "budget"
NO_STORE = "none"
MAX_OFFERED = 10
MAX_LISTED = 2800
MAC_CHARS = 22  # 128 bits, base64url
BUDGET_PROBLEM = "US dollars above 0 and at most $100,000, like 55 or 55.50 (blank: no budget)."
NOT_OFFERED = "Choose one of the stores listed (type a ZIP code and press Enter to list them)."
_BUDGET = re.compile(r"\$?\s*(\d{1,3}(,\d{3})+|\d+)(\.\d+)?")


def store_text(store: ChosenStore) -> str:
    """``Kroger Over-the-Rhine — 1420 Vine St, Cincinnati, OH 45202`` (plain text)."""
    return f"{store.name} — {store.address}" if store.address else store.name


def budget_text(cents: int | None) -> str:
    """What the budget field shows: ``55``, ``55.50``, or "" for none."""
    return "" if cents is None else money(cents).removeprefix("$").replace(",", "")


def _option(value: str, text: str) -> Block:
    return {"text": plain(text, 75), "value": value}


def store_blocks(
    current: ChosenStore | None,
    budget_cents: int | None,
    version: str,
    offered: tuple[ChosenStore, ...] = (),
    said: str = "",
) -> list[Block]:
    """The part's blocks, its inputs named ``version`` (``settings_form.field_id``): the ZIP
    field, what the last search said (``said``), the store select (no store, the current one,
    then ``offered``, the first of them chosen when there are any), the budget."""
    blocks: list[Block] = [
        {"type": "header", "block_id": STORE_HEAD, "text": plain("Store and budget", 150)},
        {
            "type": "input",
            "block_id": ZIP_BLOCK,
            "dispatch_action": True,
            "optional": True,
            "label": plain("Find stores near (ZIP code)", 2000),
            "hint": plain("Type a ZIP code and press Enter: its Kroger stores are listed.", 2000),
            "element": {
                "type": "plain_text_input",
                "action_id": version,
                "max_length": 10,
                "dispatch_action_config": {"trigger_actions_on": ["on_enter_pressed"]},
            },
        },
    ]
    if said:
        blocks.append({"type": "context", "block_id": SAID_BLOCK, "elements": [plain(said, 2000)]})
    blocks += [store_select(current, version, offered), budget_block(budget_cents, version)]
    return blocks


def store_select(
    current: ChosenStore | None, version: str, offered: tuple[ChosenStore, ...]
) -> Block:
    """The select: no store, the current one, the stores offered (the first of them chosen)."""
    listed = [s for s in offered if current is None or s.location_id != current.location_id]
    options = [_option(NO_STORE, "No store (baskets are not priced)")]
    if current is not None:
        options.append(_option(current.location_id, store_text(current)))
    options += [_option(s.location_id, store_text(s)) for s in listed]
    chosen = offered[0].location_id if offered else current.location_id if current else NO_STORE
    names = hashlib.sha256(" ".join(s.location_id for s in offered).encode()).hexdigest()[:8]
    return {
        "type": "input",
        "block_id": STORE_BLOCK,
        "label": plain("Store", 2000),
        "hint": plain("Baskets are priced at this store.", 2000),
        "element": {
            "type": "static_select",
            "action_id": f"{version}-{names}",
            "options": options,
            "initial_option": next(o for o in options if o["value"] == chosen),
        },
    }


def budget_block(cents: int | None, version: str) -> Block:
    element: Block = {"type": "plain_text_input", "action_id": version, "max_length": 20}
    if cents is not None:
        element["initial_value"] = budget_text(cents)
    return {
        "type": "input",
        "block_id": BUDGET_BLOCK,
        "optional": True,
        "label": plain("Weekly budget (US dollars)", 2000),
        "hint": plain("Like 55 or 55.50; blank: no budget. Baskets say how they compare.", 2000),
        "element": element,
    }


def with_stores(
    view: Block,
    version: str,
    current: ChosenStore | None,
    offered: tuple[ChosenStore, ...],
    said: str,
) -> list[Block]:
    """``view``'s blocks (as Slack sent them with a ZIP search) with the search's answer:
    ``said`` under the ZIP field, and a select of ``offered`` beside the saved ``current``
    (none offered: the select as it was). The other inputs keep their IDs, so Slack keeps
    what was typed in them."""
    blocks = [b for b in view.get("blocks") or [] if isinstance(b, dict)]
    kept = [b for b in blocks if b.get("block_id") != SAID_BLOCK]
    at = next((i for i, b in enumerate(kept) if b.get("block_id") == ZIP_BLOCK), None)
    if at is None:
        return blocks
    if said:
        kept.insert(
            at + 1, {"type": "context", "block_id": SAID_BLOCK, "elements": [plain(said, 2000)]}
        )
    if offered:
        select = store_select(current, version, offered)
        kept = [select if b.get("block_id") == STORE_BLOCK else b for b in kept]
    return kept


def _mac(key: bytes, tenant: str, etag: str, offered: list[list[str]]) -> str:
    message = json.dumps([tenant, etag, offered], separators=(",", ":"))
    digest = hmac.new(key, message.encode(), hashlib.sha256).digest()
    return base64.urlsafe_b64encode(digest).decode()[:MAC_CHARS]


def store_metadata(
    key: bytes, tenant: str, etag: str, offered: tuple[ChosenStore, ...]
) -> dict[str, Any]:
    """The fields the modal's ``private_metadata`` carries beside its ETag: the stores offered
    (at most ``MAX_OFFERED``) and their MAC."""
    listed = [[s.location_id, s.name, s.address] for s in offered[:MAX_OFFERED]]
    while len(json.dumps(listed)) > MAX_LISTED:  # (the metadata's 3,000 characters)
        listed.pop()
    return {"stores": listed, "stores_mac": _mac(key, tenant, etag, listed)}


def offered_in(key: bytes, tenant: str, metadata: object) -> tuple[ChosenStore, ...]:
    """The stores this bot offered in the modal whose ``private_metadata`` is ``metadata``
    (none when it holds none, or they are not what this bot wrote for this workspace)."""
    try:
        data = json.loads(metadata) if isinstance(metadata, str) else None
    except ValueError:
        return ()
    if not isinstance(data, dict) or not key:
        return ()
    listed, mac, etag = data.get("stores"), data.get("stores_mac"), data.get("etag", "")
    if not isinstance(listed, list) or not isinstance(mac, str) or not isinstance(etag, str):
        return ()
    if not hmac.compare_digest(mac, _mac(key, tenant, etag, listed)):
        return ()
    try:
        return tuple(ChosenStore(location_id=i, name=n, address=a) for i, n, a in listed)
    except (ValueError, TypeError):
        return ()


def read_budget(raw: object) -> tuple[int | None, str | None]:
    """The budget typed (cents; None: blank), or the problem."""
    text = raw.strip() if isinstance(raw, str) else ""
    if not text:
        return None, None
    found = _BUDGET.fullmatch(text)
    if found is None or len(found.group(3) or "") > 3:  # (more than 2 decimals)
        return None, BUDGET_PROBLEM
    try:
        amount = Decimal(text.lstrip("$").strip().replace(",", ""))
    except InvalidOperation:
        return None, BUDGET_PROBLEM
    if amount <= 0:
        return None, BUDGET_PROBLEM
    cents = int(amount * 100)
    return (cents, None) if cents <= MAX_BUDGET_CENTS else (None, BUDGET_PROBLEM)


def _state(values: dict[str, Any], block: str) -> dict[str, Any]:
    found = values.get(block)
    inputs = [v for v in found.values() if isinstance(v, dict)] if isinstance(found, dict) else []
    return inputs[0] if len(inputs) == 1 else {}


def read_store_part(
    values: Any, current: ChosenStore | None, offered: tuple[ChosenStore, ...]
) -> tuple[ChosenStore | None, int | None, dict[str, str]]:
    """The store and budget a submission asks for, and the problems by block. The store is
    "none", the saved one, or one of ``offered`` (what Kroger answered, from the MACed
    metadata): any other location ID is refused, never saved with a name it came with."""
    values = values if isinstance(values, dict) else {}
    errors: dict[str, str] = {}
    chosen = _state(values, STORE_BLOCK).get("selected_option")
    value = chosen.get("value") if isinstance(chosen, dict) else None
    known = {s.location_id: s for s in offered}
    if current is not None:
        known.setdefault(current.location_id, current)
    store: ChosenStore | None = None
    if isinstance(value, str) and value in known:
        store = known[value]
    elif value != NO_STORE:
        errors[STORE_BLOCK] = NOT_OFFERED
    budget, problem = read_budget(_state(values, BUDGET_BLOCK).get("value"))
    if problem:
        errors[BUDGET_BLOCK] = problem
    return store, budget, errors
