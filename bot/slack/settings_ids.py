"""What the ack path needs of the Settings modal: its IDs and the loading view, and nothing that
reads or checks settings (``bot.slack.settings_form`` imports the records; an ack imports only
this, so that every cold ack stays as light as before the settings existed)."""

from __future__ import annotations

from typing import Any

from .blocks import plain

SETTINGS_MODAL = "workspace_settings_modal"
OPEN_SETTINGS = "open_settings"
STORE_ZIP = "store_zip"  # the block of the ZIP code field, whose Enter lists stores


def loading_modal(external_id: str) -> dict[str, Any]:
    """What opens in the ack (the trigger works once, for about three seconds); the lazy run,
    which reads the settings, replaces it by its ``external_id``."""
    return {
        "type": "modal",
        "external_id": external_id,
        "title": plain("Weekly shop settings", 24),
        "close": plain("Close", 24),
        "blocks": [{"type": "section", "text": plain("Reading the settings…", 3000)}],
    }
