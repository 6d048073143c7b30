"""The Settings modal's store and budget (issue 34, item 1), in a deploy with a Kroger app.

Finding stores (``find_stores``, the lazy run of a ZIP code typed and Enter pressed; its ack
said nothing):

    1 the ZIP typed (``actions[0].value``) and the modal as Slack sent it (its blocks, ID,
      ``hash`` and metadata)
    2 Kroger: the stores near it (``KrogerClient.locations_near``, at most ``MAX_OFFERED``)
    3 views.update of that view, with its ``hash``: the stores in the select, the first chosen,
      and in the metadata with their MAC; or, for a ZIP that is not one, none near it, or
      Kroger down or out of calls, one plain sentence under the ZIP field. Every other input
      keeps its block and action IDs, so Slack keeps what was typed in it.

A search that Slack answers ``hash_conflict`` lost to a change of the modal made since (another
search's answer, say): the first answer to reach Slack stands and this one is dropped; two
quick searches carry the same hash, so the first to finish wins, and each sentence names the
ZIP it answers. Saving (``bot.steps.settings``)
reads the store from the stores offered in the metadata, never from the submission's text.
"""

from __future__ import annotations

import json
import logging
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from slack_sdk import WebClient
from slack_sdk.errors import SlackApiError

from bot.records.workspace_settings import MAX_STORE_TEXT, ChosenStore, WorkspaceSettings
from bot.slack.settings_form import field_id
from bot.slack.settings_store import (
    MAX_OFFERED,
    ZIP_BLOCK,
    offered_in,
    read_store_part,
    store_blocks,
    store_metadata,
    with_stores,
)
from bot.slack.settings_submission import etag_of

if TYPE_CHECKING:  # (the shop's modules stay out of a save's ack: tests/test_bot_lambda)
    from bot.orders.kroger_values import Store

log = logging.getLogger(__name__)

NO_STORES = "Kroger has no stores near {zip}. Try another ZIP code."
# Each sentence names the ZIP it answers: two quick searches share the view's hash, and the
# first answer to reach Slack stands, so what is shown says which ZIP it is about.
NOT_A_ZIP = "{zip} is not a ZIP code: a ZIP code is five digits, like 45202."
KROGER_DOWN = (
    "I couldn't reach Kroger just now to find stores near {zip}. Press Enter to try again."
)
OUT_OF_CALLS = "Kroger's calls for today are used up, so no stores near {zip}: try again later."
FOUND = "The Kroger stores near {zip}, nearest first: choose one below."
MAX_SHOWN_ZIP = 12  # of what was typed, in the sentence under the field (plain text)


@dataclass(frozen=True)
class StorePicker:
    """What the store part needs: the key that MACs the stores offered, and Kroger's stores
    near a ZIP code (called only in a lazy run, never in an ack)."""

    key: bytes
    near: Callable[[str], tuple[Store, ...]]


def store_part(
    picker: StorePicker | None, tenant: str, s: WorkspaceSettings, etag: str | None
) -> tuple[list[dict[str, Any]] | None, dict[str, Any] | None]:
    """The form's "Store and budget" blocks and metadata (None, None without a Kroger app)."""
    if picker is None:
        return None, None
    blocks = store_blocks(s.store, s.budget_cents, field_id(etag))
    return blocks, store_metadata(picker.key, tenant, etag or "", ())


def read_store(
    picker: StorePicker | None, tenant: str, view: dict[str, Any], current: WorkspaceSettings
) -> tuple[ChosenStore | None, int | None, dict[str, str]]:
    """The store and budget a submission asks for (without a Kroger app: as saved)."""
    if picker is None:
        return current.store, current.budget_cents, {}
    state = view.get("state")
    offered = offered_in(picker.key, tenant, view.get("private_metadata"))
    values = state.get("values") if isinstance(state, dict) else None
    return read_store_part(values, current.store, offered)


def _chosen(store: Store) -> ChosenStore | None:
    try:
        return ChosenStore(
            location_id=store.location_id,
            name=store.name[:MAX_STORE_TEXT],
            address=store.address[:MAX_STORE_TEXT],
        )
    except ValueError:  # (a location ID that is not one: not offered)
        return None


def search(picker: StorePicker, zip_code: str) -> tuple[tuple[ChosenStore, ...], str]:
    """The stores near ``zip_code`` and what to say of them (a lazy run's work)."""
    from bot.orders.kroger_values import BadZip, KrogerError, RateLimited

    typed = zip_code.strip()
    shown = typed if len(typed) <= MAX_SHOWN_ZIP else typed[: MAX_SHOWN_ZIP - 1] + "…"
    try:
        found = picker.near(typed)
    except BadZip:
        return (), NOT_A_ZIP.format(zip=f"“{shown}”")
    except RateLimited:
        return (), OUT_OF_CALLS.format(zip=shown)
    except KrogerError as exc:
        log.warning("Kroger's stores could not be listed: %s", type(exc).__name__)
        return (), KROGER_DOWN.format(zip=shown)
    offered = tuple(c for c in map(_chosen, found) if c is not None)[:MAX_OFFERED]
    return offered, (FOUND if offered else NO_STORES).format(zip=typed)


def find_stores(
    picker: StorePicker, web: WebClient, tenant: str, current: WorkspaceSettings, body: Any
) -> None:
    """A ZIP code's Enter: the modal updated with its stores, or with why there are none."""
    body = body if isinstance(body, dict) else {}
    view = body.get("view") if isinstance(body.get("view"), dict) else {}
    (action, *_) = body.get("actions") or [{}]
    typed = action.get("value") if isinstance(action, dict) else None
    view_id, hash_ = view.get("id"), view.get("hash")
    if not isinstance(view_id, str) or action.get("block_id") != ZIP_BLOCK:
        log.warning("malformed store search ignored")
        return
    offered, said = search(picker, typed if isinstance(typed, str) else "")
    etag = etag_of(view.get("private_metadata"))
    listed = store_metadata(picker.key, tenant, etag or "", offered)
    offered = offered[: len(listed["stores"])]
    if not offered:  # (the stores offered before stay offered)
        listed = {}
    keep = ("type", "callback_id", "title", "submit", "close")
    updated = {k: view[k] for k in keep if k in view}
    updated["blocks"] = with_stores(view, field_id(etag), current.store, offered, said)
    try:
        metadata = json.loads(view.get("private_metadata") or "{}")
    except ValueError:
        metadata = {}
    metadata = metadata if isinstance(metadata, dict) else {}
    updated["private_metadata"] = json.dumps({**metadata, "etag": etag or "", **listed})
    try:
        web.views_update(
            view_id=view_id, hash=hash_ if isinstance(hash_, str) else None, view=updated
        )
    except SlackApiError as exc:  # (hash_conflict: an answer that reached Slack first stands)
        log.warning("the store search's views.update failed: %s", exc.response.get("error"))
