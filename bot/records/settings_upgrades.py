"""Older settings documents' bodies to the next schema version's
(``bot.records.workspace_settings_store``: an older document is upgraded as it is read, one
function per version, oldest first; a function here takes any body its version wrote and
raises ValueError otherwise).

    1 → 2   the undo window (``order_delay``): the default one, 2 minutes
    2 → 3   where orders go (``orders``): None, where the deploy sends them
    3 → 4   the household's store and weekly budget (``store``, ``budget_cents``): none
    4 → 5   a Kroger cart as where orders go, whose and how (``orders.kroger_cart``: "",
            whoever approves last; ``orders.kroger_modality``: PICKUP); only read when orders go
            to a cart, which no older one chose
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from .workspace_settings import DEFAULT_ORDER_DELAY

SCHEMA_VERSION = 5


def _adding(field: str, version: int, value: Any) -> Callable[[dict[str, Any]], dict[str, Any]]:
    def upgrade(body: dict[str, Any]) -> dict[str, Any]:
        if not isinstance(body, dict) or field in body:
            raise ValueError(f"not a version {version} settings document")
        return {**body, field: value}

    upgrade.__name__ = f"_v{version}_to_v{version + 1}"
    return upgrade


UPGRADES: dict[int, Callable[[dict[str, Any]], dict[str, Any]]] = {
    1: _adding("order_delay", 1, DEFAULT_ORDER_DELAY),
    2: _adding("orders", 2, None),
    3: lambda body: _adding("budget_cents", 3, None)(_adding("store", 3, None)(body)),
    4: lambda body: _carts(body),
}


def _carts(body: dict[str, Any]) -> dict[str, Any]:
    """4 → 5: where orders go gains whose Kroger cart ("": none chosen)."""
    orders = body.get("orders") if isinstance(body, dict) else None
    if orders is None:
        if not isinstance(body, dict) or "orders" not in body:
            raise ValueError("not a version 4 settings document")
        return body
    if not isinstance(orders, dict) or "kroger_cart" in orders or "kroger_modality" in orders:
        raise ValueError("not a version 4 settings document")
    return {**body, "orders": {**orders, "kroger_cart": "", "kroger_modality": "PICKUP"}}
