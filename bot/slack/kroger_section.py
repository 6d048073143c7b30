"""Block Kit for the Home tab's "Kroger cart" section, for the person viewing it: a pure function
of what ``bot.steps.kroger_connect`` read (shown only when the deploy has a Kroger app)::

    Kroger cart
    (what connecting is for)
    Not connected   → Connect your Kroger account   (a link button: the bot's confirmation page)
    Connected       → connected as of <date>         Disconnect (``KROGER_DISCONNECT``)
    Unknown         → it cannot tell just now        (no button: never "not connected")

Slack sends a ``block_actions`` for a link button too (``KROGER_CONNECT``): it is acked and
ignored, the browser opens the link. Everything here is our own text; the link is the bot's
own ``/kroger/connect`` page (``bot.steps.kroger_confirm``: whose connection it is, then on to
Kroger's authorize URL, built by ``bot.orders.kroger_cart``).
"""

from __future__ import annotations

from datetime import datetime

from .blocks import Block, context, plain, slack_date

KROGER_CONNECT = "home_kroger_connect"  # a link button: acked and ignored
KROGER_DISCONNECT = "home_kroger_disconnect"
FOR_WHAT = (
    "Connecting your Kroger account lets weekly-shop add approved baskets to your Kroger cart "
    "when the household sends its orders there. You can disconnect at any time."
)
UNKNOWN = (
    "I can't tell just now whether your Kroger account is connected. Open this tab again in "
    "a minute."
)


def _section(text: str) -> Block:
    return {"type": "section", "text": {"type": "mrkdwn", "text": text}}


ENDED = "Kroger no longer accepts your earlier connection, so it was forgotten: connect again."


def kroger_rows(
    connected: datetime | None, *, known: bool = True, connect_url: str = "", ended: bool = False
) -> list[Block]:
    """The section: ``connected`` is when the person's token was last saved, None if they have
    not connected; ``known`` False when that could not be read; ``connect_url`` is where
    Connect goes (needed only when not connected). The date is "as of", not "since": a token
    renewed before it expires is saved again, so the date is the last connect or renewal.
    ``ended``: Kroger refused the saved connection as this tab was drawn (said above Connect)."""
    rows: list[Block] = [_section("*Kroger cart*"), context(FOR_WHAT)]
    if not known:
        rows.append(_section(UNKNOWN))
    elif connected is not None:
        row = _section(
            f"Your Kroger account is connected (as of {slack_date(int(connected.timestamp()))})."
        )
        row["accessory"] = {
            "type": "button",
            "text": plain("Disconnect", 75),
            "action_id": KROGER_DISCONNECT,
            "value": "disconnect",
        }
        rows.append(row)
    else:
        row = _section(f"{ENDED}\n" * ended + "Your Kroger account is not connected.")
        row["accessory"] = {
            "type": "button",
            "text": plain("Connect your Kroger account", 75),
            "action_id": KROGER_CONNECT,
            "url": connect_url,
            "style": "primary",
        }
        rows.append(row)
    return rows
