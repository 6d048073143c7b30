"""What the thread says once a basket is approved: where its order went, or why it did not.

    placed, a canvas      "Ordered 17 items."  [Open the shopping list]   then the items
    placed, Instacart     "Ordered 17 items."  [Open in Instacart]        then the items
    placed, a webhook     "Ordered 17 items."  sent to the household's webhook
    placed, a Kroger cart "Approved: 14 products added to @carol's Kroger cart."
                          [Open the Kroger cart]  "Not in the cart (…): saffron, …"  the items
    not placed            "Approved, but the order did not go through: <reason>."  [Retry]
                          (a cart's: whose cart it was for)

The link is a link button (``url``: Slack opens it and still sends the bot a block_actions
payload, which the bot acks and ignores). The reason is ours (``bot.orders``: never the
destination's own words, which could carry anything), escaped all the same; the names of the
items a cart was not sent (the model's words) are plain text. A cart's person is a user ID the
order record checked, so the mention is one Slack gave.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

from .basket_items import item_sections
from .blocks import OPEN_ORDER, RETRY_ORDER, Block, button, count, escape, plain, section
from .outcome import OrderShown

if TYPE_CHECKING:
    from workflow.shop.basket import Item

OPEN_TEXT = {
    "canvas": "Open the shopping list",
    "instacart": "Open in Instacart",
    "kroger": "Open the Kroger cart",
}
MAX_SECTION = 3000  # a section's text (Block Kit)
SENT_TEXT = {"webhook": "Sent to the household's webhook."}


def not_placed_text(order: OrderShown) -> str:
    return f"Approved, but the order did not go through: {escape(order.failed)}."


def whose_cart(order: OrderShown) -> str:
    return f"<@{order.person}>'s Kroger cart" if order.person else "the Kroger cart"


def order_text(ordered: str, order: OrderShown | None) -> str:
    """The message's text (notifications, screen readers): ``ordered``, what went to a cart,
    or the failure."""
    if order is not None and order.failed:
        return not_placed_text(order)
    if order is not None and order.destination == "kroger":
        return f"Approved: {count(order.products, 'product')} added to {whose_cart(order)}."
    return ordered


def cart_blocks(order: OrderShown) -> list[Block]:
    """Under a cart's order: whose cart a failure was for, or what the cart was not sent."""
    if order.destination != "kroger":
        return []
    if order.failed:
        said = {"type": "mrkdwn", "text": f"For {whose_cart(order)}."}
        return [{"type": "context", "elements": [said]}]
    if not order.left_out:
        return []
    head = f"Not in the cart (no product at the store, {count(len(order.left_out))}): "
    names = ", ".join(order.left_out)  # the model's words: plain text, formatting nothing
    if len(head) + len(names) > MAX_SECTION:
        names = names[: MAX_SECTION - len(head) - 1].rsplit(", ", 1)[0] + "…"
    return [section(head + names, "plain_text")]


def ordered_blocks(
    text: str, items: Sequence[Item], order: OrderShown | None = None
) -> list[Block]:
    """The outcome of an approved basket: ``text`` (ours), where it went, and what was ordered,
    grouped as the basket showed it."""
    blocks = [section(text)]
    if order is not None and order.failed:
        if order.retry:
            retry = button("Retry", RETRY_ORDER, order.retry, style="primary")
            blocks.append({"type": "actions", "block_id": "order_actions", "elements": [retry]})
    elif order is not None and order.url and order.destination in OPEN_TEXT:
        link: Block = {
            "type": "button",
            "text": plain(OPEN_TEXT[order.destination], 75),
            "action_id": OPEN_ORDER,
            "url": order.url,
        }
        blocks.append({"type": "actions", "block_id": "order_actions", "elements": [link]})
    elif order is not None and order.destination in SENT_TEXT:
        said = {"type": "mrkdwn", "text": SENT_TEXT[order.destination]}
        blocks.append({"type": "context", "elements": [said]})
    if order is not None:
        blocks.extend(cart_blocks(order))
    return [*blocks, *item_sections(items)]
