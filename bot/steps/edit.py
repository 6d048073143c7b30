"""Edit items: its form filled in with the basket it edits, and the edit applied to it.

The ack of the Edit items button opens "Reading the basket…" (``bot.listeners.actions``); this
lazy run reads the session's latest checkpoint, without its lock (it writes nothing), finds the
basket waiting for an answer, and fills the modal in by its ``external_id``: the items, and
metadata naming that request and the basket's SHA-256 (``bot.slack.edit_form``). Anything that
stops an edit says so in the modal instead: not an approver, the basket answered or held, a
basket too long for a modal, a checkpoint of a newer or retired version, a damaged one, S3 down.

The submitted edit is an answer like any click (``bot.steps.clicks``, kind ``edit``), under the
lock; the functions at the end are its part of that turn: the edit applied only if the pending
request's basket is the one the form showed (its SHA-256), a retry of the same edit known as
such, and the "edited by" line of the basket it changed.
"""

from __future__ import annotations

import asyncio
import logging
from typing import Any

from slack_sdk import WebClient
from slack_sdk.errors import SlackApiError

from bot.slack.blocks import Ref
from bot.slack.edit_form import MAX_EDITABLE, ItemEdit, edit_metadata, edit_modal, said_modal
from bot.slack.outcome import BROKEN, NEWER, STORE_DOWN, held_text
from bot.slack.payloads import GONE, Click
from workflow.engine.runner import Run
from workflow.errors import (
    CheckpointError,
    CheckpointFromNewerVersion,
    CheckpointNotFound,
    InvalidIdentifier,
    RequestAlreadyAnswered,
    StoreError,
    UnknownRequest,
    WorkflowVersionRemoved,
)
from workflow.persistence.checkpoint import AnsweredRequest, PendingRequest
from workflow.shop.basket import Basket, Item
from workflow.shop.decision import BasketDecision
from workflow.shop.edit import (
    UNCHANGED_EDIT,
    added_item,
    basket_sha256,
    edit_summary,
    edited_items,
)
from workflow.shop.run_state import edit_of, held_of

from .rules import Rules
from .turn import Sessions

log = logging.getLogger(__name__)

EDITED_SINCE = "This basket has changed since: press *Edit items* on the basket as it shows now."
TOO_LONG = (
    f"This basket has more items than Edit items can show ({MAX_EDITABLE}): use *Change…* to "
    "say what should change."
)
RETIRED = "This basket was saved by a retired version of weekly-shop, so it can't be edited."
BROKEN_EDIT = BROKEN.replace("answered", "edited")
STALE_EDIT = (
    "This basket changed since you opened *Edit items*, so your edit was not made: "
    "press *Edit items* on the basket as it shows now."
)
EDIT_MADE = "Your edit is made: the basket above shows it."


def edited_since(by: str) -> str:
    """What a click from a screen showing the basket before someone's edit is told."""
    return (
        f"<@{by}> edited this basket since you saw it: the message shows it now; answer it there."
    )


def show_edit_form(
    sessions: Sessions,
    rules: Rules,
    metadata_key: bytes,
    web: WebClient,
    click: Click,
    external_id: str,
) -> None:
    """Fill in the modal ``external_id`` for ``click`` (a press of Edit items)."""
    view = asyncio.run(edit_form(sessions, rules, metadata_key, click, external_id))
    fill_in(web, external_id, view)


def fill_in(web: WebClient, external_id: str, view: dict[str, Any]) -> None:
    """``views.update`` of the modal the ack opened. Closed meanwhile (Slack answers
    ``not_found``), there is no one to tell; any other failure (after slack_sdk's retries) is
    raised, so that Lambda retries the lazy run and, at the last, the lost-runs queue says in the
    basket's thread that the form was not filled in."""
    try:
        web.views_update(external_id=external_id, view=view)
    except SlackApiError as exc:
        if exc.response.get("error") != "not_found":
            raise
        log.info("the Edit items form was closed before it was filled in")


async def edit_form(
    sessions: Sessions, rules: Rules, metadata_key: bytes, click: Click, external_id: str
) -> dict[str, Any]:
    """The filled-in modal, or the modal saying why this basket cannot be edited."""
    refusal = rules.may_answer(click.user) or (None if click.ref.session_id else GONE)
    if refusal:
        return said_modal(external_id, refusal)
    try:
        run = await Run.resume(
            sessions.workflow(), sessions.checkpoints(click.tenant, click.ref.session_id)
        )
        found = None if run is None else waiting(run, click.ref.request_id)
    except (UnknownRequest, CheckpointNotFound, InvalidIdentifier):
        found = None
    except CheckpointFromNewerVersion:
        return said_modal(external_id, NEWER)
    except WorkflowVersionRemoved:
        return said_modal(external_id, RETIRED)
    except CheckpointError:
        return said_modal(external_id, BROKEN_EDIT)
    except StoreError as exc:
        log.error("reading the basket to edit failed: %s", exc)
        return said_modal(external_id, STORE_DOWN)
    if isinstance(found, str):
        return said_modal(external_id, found)
    if run is None or found is None:
        return said_modal(external_id, GONE)
    held = held_of(run, found.data.round)
    if held is not None:
        return said_modal(external_id, held_text(held.hold_until or 0))
    items = found.data.items
    if len(items) > MAX_EDITABLE:
        return said_modal(external_id, TOO_LONG)
    ref = Ref(click.ref.session_id, found.request_id)
    metadata = edit_metadata(
        metadata_key,
        click.tenant,
        ref,
        click.channel,
        click.message_ts,
        basket_sha256(items),
        len(items),
    )
    return edit_modal(external_id, metadata, items)


def waiting(run: Run, request_id: str) -> PendingRequest | str | None:
    """The basket request ``request_id`` names, if it waits for an answer; or, when it was
    answered but its basket is asked about again unchanged (an approval a quorum still waits
    on), the request now pending for it; or why not (None: it is gone)."""
    try:
        pending = run.pending_request(request_id)
    except RequestAlreadyAnswered:
        done = run.answered[request_id]
        if not isinstance(done.data, Basket):
            return None
        same = basket_sha256(done.data.items)
        for pending in run.pending_requests.values():
            basket = pending.data
            if isinstance(basket, Basket) and basket.round == done.data.round:
                return pending if basket_sha256(basket.items) == same else EDITED_SINCE
        return None
    return pending if isinstance(pending.data, Basket) else None


# The edit answered (``bot.steps.clicks``, kind "edit"): applied only to the basket its form
# showed, and said on the basket it changed.


def edited_for(click: Click, basket: Basket) -> list[Item] | str | None:
    """An edit's items, applied to ``basket`` (the pending request's); or why not, for the
    person: a form of another basket, an edit that changes nothing or leaves no basket. None for
    any other click."""
    edit = click.edit
    if click.kind != "edit":
        return None
    if edit is None or basket_sha256(basket.items) != edit.basket:
        return STALE_EDIT
    try:
        items = apply_item_edit(basket.items, edit)
    except ValueError as exc:
        return str(exc)
    return UNCHANGED_EDIT if items == basket.items else items


def same_edit(click: Click, done: AnsweredRequest) -> bool:
    """Whether ``done`` is ``click``'s edit, made already: the same person's edit of the same
    basket, to the same items (Lambda's retry of the lazy run, or the same form sent twice)."""
    edit, decision, basket = click.edit, done.response, done.data
    if edit is None or not isinstance(decision, BasketDecision) or decision.edit is None:
        return False
    if done.by != click.user or not isinstance(basket, Basket):
        return False
    if basket_sha256(basket.items) != edit.basket:
        return False
    try:
        return apply_item_edit(basket.items, edit) == list(decision.edit)
    except ValueError:
        return False


def apply_item_edit(items: list[Item], edit: ItemEdit) -> list[Item]:
    """``items`` as the submitted form leaves them (``workflow.shop.edit``); a ``ValueError`` in
    the person's words when that is no basket."""
    added = added_item(*edit.add) if edit.add is not None else None
    return edited_items(
        items, removed=frozenset(edit.removed), quantities=dict(edit.quantities), added=added
    )


def edited_by(run: Run) -> tuple[str, str] | None:
    """Who last edited the basket the run asks about, and what they changed, for its message
    ("Basket 1 · edited by @bob: −pizza dough, milk 1 → 2 l"); None when nobody has."""
    pending = [p.data for p in run.pending_requests.values() if isinstance(p.data, Basket)]
    answered = edit_of(run, pending[-1].round) if pending else None
    if answered is None or not isinstance(answered.data, Basket):
        return None
    decision = answered.response
    after = decision.edit if isinstance(decision, BasketDecision) else None
    return answered.by, edit_summary(answered.data.items, list(after or ()))
