"""The Settings desk a listener hands ``bot.steps.settings``: the runtime's, with the store
and budget part when the deploy has a Kroger app (``bot.steps.settings_store``). Shared by the
Home tab's listeners (opening the modal, a ZIP code's search) and the submission's; Kroger is
asked only when a search runs, in a lazy run, so a save's ack imports no Kroger client."""

from __future__ import annotations

import dataclasses
from typing import TYPE_CHECKING

from bot.runtime import Runtime

if TYPE_CHECKING:
    from bot.orders.kroger_values import Store
    from bot.steps.settings import Desk
    from bot.steps.settings_store import StorePicker


def store_picker(here: Runtime) -> StorePicker | None:
    """The store part's key and Kroger's stores near a ZIP (None: no Kroger app here)."""
    if not here.settings.has_prices:
        return None
    from bot.steps.settings_store import StorePicker

    def near(zip_code: str) -> tuple[Store, ...]:
        kroger = here.shop.kroger()
        if kroger is None:  # (has_prices said there is one)
            return ()
        return kroger[0].locations_near(zip_code)

    return StorePicker(key=here.records.metadata_key, near=near)


def settings_desk(here: Runtime, ack: bool = False) -> Desk:
    """``here.settings_desk(ack)``, with the store part this deploy has."""
    return dataclasses.replace(here.settings_desk(ack=ack), stores=store_picker(here))
