"""Money as the bot writes it: US dollars from cents (Kroger's stores are all in the US, and its
API answers in dollars). Imports nothing, so a Settings save's ack can write a budget without
the shop's modules (``tests/test_bot_lambda``)."""

from __future__ import annotations


def money(cents: int) -> str:
    """``$61.40``, ``$55`` (whole dollars without cents), ``$1,234.50``, ``-$3.20``."""
    dollars, rest = divmod(abs(cents), 100)
    sign = "-" if cents < 0 else ""
    return f"{sign}${dollars:,}" if rest == 0 else f"{sign}${dollars:,}.{rest:02d}"
