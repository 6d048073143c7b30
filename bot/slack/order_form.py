"""The Settings modal's "Where orders go": the destination, Instacart's server, the webhook's URL,
and the write-only keys (Block Kit, pure functions; read back by ``bot.slack.settings_submission``).

A key's input is always empty: a saved key is never sent to Slack again, not even in part; the
hint says whether one is saved and since when. Block Kit has no password input, so a key is
visible while it is typed and in the submission Slack sends us once; it is stored encrypted
(``bot.records.workspace_secrets``) and never shown, logged or put in a checkpoint.
"""

from __future__ import annotations

from collections.abc import Mapping
from datetime import datetime
from typing import Any
from urllib.parse import urlsplit

from bot.records.order_choice import MAX_URL, OrderChoice

from .blocks import escape, plain

Block = dict[str, Any]
MAX_KEY = 512
MIN_SECRET = 16  # a webhook signing secret: as hard to guess as Slack's own (32 hex)
MIN_API_KEY = 8
# The key inputs' block_ids, by the name the key is kept under.
KEY_BLOCKS = {"instacart-api-key": "instacart_key", "webhook-signing-secret": "webhook_secret"}
DESTINATION_TEXT = {
    "canvas": "A Slack canvas checklist in the basket's channel",
    "instacart": "An Instacart shopping-list page (Open in Instacart)",
    "webhook": "A signed webhook (Home Assistant, n8n, Zapier, your shop's API)",
    "kroger": "A Kroger cart, with the products the basket was priced with",
}
CART_HINT = (
    "Empty: the cart of whoever approves the basket last. The person connects their Kroger "
    "account on weekly-shop's Home tab; the basket's products are added to their cart once, and "
    "they check out at Kroger."
)
SERVER_TEXT = {
    "development": "Development (a development key)",
    "production": "Production (a production key)",
}
NO_KEYS_HERE = (
    "This deploy keeps no keys of its own for a workspace (WORKSPACE_SECRETS_PATH is unset): "
    "Instacart and the webhook use the deploy's."
)


def _select(texts: Mapping[str, str], chosen: str, leave: tuple[str, ...] = ()) -> Block:
    """A select of ``texts``, ``chosen`` chosen; ``leave`` out (``chosen`` is always there)."""
    options = [
        {"text": plain(text, 75), "value": value}
        for value, text in texts.items()
        if value not in leave or value == chosen
    ]
    initial = next(o for o in options if o["value"] == chosen)
    return {"type": "static_select", "options": options, "initial_option": initial}


def _input(block_id: str, label: str, element: Block, hint: str, optional: bool = False) -> Block:
    return {
        "type": "input",
        "block_id": block_id,
        "label": plain(label, 2000),
        "element": {**element, "action_id": "value"},
        "hint": plain(hint, 2000),
        "optional": optional,
    }


UNKNOWN = object()  # a key's metadata SSM did not give just now


def key_hint(saved: datetime | object | None, deploy_has_one: bool, what: str) -> str:
    """What a key's input says of the key it replaces (never any of the key)."""
    if saved is UNKNOWN:
        return (
            f"I couldn't check just now whether a {what} is saved: leave this empty to keep any "
            "saved one, or type one to replace it."
        )
    if isinstance(saved, datetime):
        return (
            f"A {what} is saved (since {saved:%-d %b %Y}). It is never shown again: type a new "
            "one to replace it, or leave this empty to keep it."
        )
    if deploy_has_one:
        return f"None saved: the deploy's {what} is used. Type one to use your own."
    return "None saved yet. It is stored encrypted and never shown again."


def order_blocks(
    choice: OrderChoice,
    saved: Mapping[str, datetime | object | None] | None,
    deploy_keys: frozenset[str] = frozenset(),
    kroger: bool = False,
) -> list[Block]:
    """The section's blocks, pre-filled with ``choice``; ``saved`` says which keys the
    workspace saved, when (None: this deploy keeps none, so there is nothing to type).
    A Kroger cart is offered, with whose, only in a deploy with a Kroger app (``kroger``)."""
    url: Block = {"type": "plain_text_input", "max_length": MAX_URL}
    if choice.webhook_url:
        url["initial_value"] = choice.webhook_url
    blocks = [
        {"type": "header", "text": plain("Where orders go", 150)},
        _input(
            "destination",
            "Approved baskets go to",
            _select(DESTINATION_TEXT, choice.destination, () if kroger else ("kroger",)),
            "Each approved basket is placed there once.",
        ),
        *(cart_inputs(choice) if kroger else []),
        _input(
            "instacart_server",
            "Instacart server",
            _select(SERVER_TEXT, choice.instacart_server),
            "Instacart's development and production servers take different keys.",
        ),
        _input(
            "webhook_url",
            "Webhook URL",
            url,
            "https:// only, to a public address; redirects are not followed.",
            optional=True,
        ),
    ]
    if saved is None:
        note = {"type": "mrkdwn", "text": NO_KEYS_HERE}
        return [*blocks, {"type": "context", "elements": [note]}]
    key: Block = {"type": "plain_text_input", "max_length": MAX_KEY}
    for name, label, what in (
        ("instacart-api-key", "Instacart API key", "key"),
        ("webhook-signing-secret", "Webhook signing secret", "signing secret"),
    ):
        hint = key_hint(saved.get(name), name in deploy_keys, what)
        if name == "webhook-signing-secret":
            hint += f" At least {MIN_SECRET} characters; the receiver checks it."
        blocks.append(_input(KEY_BLOCKS[name], label, key, hint, optional=True))
    return blocks


MODALITY_TEXT = {"PICKUP": "Pickup at the store", "DELIVERY": "Delivery"}


def cart_inputs(choice: OrderChoice) -> list[Block]:
    """Whose Kroger cart (one person, or none: whoever approves last), and pickup or delivery."""
    people: Block = {"type": "multi_users_select", "max_selected_items": 1}
    if choice.kroger_cart:
        people["initial_users"] = [choice.kroger_cart]
    return [
        _input("kroger_cart", "Whose Kroger cart", people, CART_HINT, optional=True),
        _input(
            "kroger_modality",
            "Kroger order",
            _select(MODALITY_TEXT, choice.kroger_modality),
            "How the cart's items are to be had: the person chooses the time at Kroger.",
        ),
    ]


def order_line(choice: OrderChoice) -> str:
    """The summary's line: where orders go (mrkdwn; the URL's host only; a user ID the
    settings checked, so the mention is one Slack gave)."""
    if choice.destination == "kroger":
        whose = f"<@{choice.kroger_cart}>'s" if choice.kroger_cart else "the last approver's"
        return f"*Orders go to:* {whose} Kroger cart, for {choice.kroger_modality.lower()}"
    if choice.destination == "instacart":
        return f"*Orders go to:* an Instacart shopping-list page ({choice.instacart_server})"
    if choice.destination == "webhook":
        try:
            host = urlsplit(choice.webhook_url).hostname or ""
        except ValueError:
            host = ""
        return f"*Orders go to:* a signed webhook at {escape(host[:100])}"
    return "*Orders go to:* a Slack canvas checklist in the basket's channel"
