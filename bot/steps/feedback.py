"""Where a press of a basket's feedback buttons ("Good basket" / "Not good") is kept: a step of
its own, outside the session's lock and turn, because it changes nothing of the session (no
checkpoint, no receipt, no message): one record beside the basket's outcome
(``bot.records.feedback``), one metric, one ephemeral word to the person.

    1. the button's value (``bot.slack.feedback_buttons``) names a session, a round, a verdict;
       one that is not ours is refused, nothing written
    2. the session must be one this channel showed, and the round one of its baskets: its
       receipt (one HEAD) names its channel, its latest round and that basket's message; a
       session that ended without one is found among the outcome records (one LIST, one GET).
       The round the receipt or the outcome names must be the message clicked; an earlier
       round of the same session in the same channel is accepted (its message is not kept).
       Anything else (another channel's session, a basket that never was) is refused, nothing
       written
    3. the record is read (one GET) and written (one PUT; a change of mind, Lambda's retry or a
       second press: the same key again), and ``BasketFeedbackGood`` or ``BasketFeedbackBad``
       counted when the person's verdict is new or changed (a retry or the same press again:
       nothing)
    4. the person is told, ephemerally, what was noted (Slack's own toggle shows which button
       they pressed; it sends no state, so the last press is the verdict)

A store that cannot be read or written is said to the person ("press again"), and nothing is
counted: the click did nothing, as they are told.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass
from typing import TYPE_CHECKING

from bot import metrics
from bot.records.feedback import Said, feedback_name
from bot.records.history import session_of
from bot.slack.feedback_buttons import NOT_NOTED, NOT_SAVED, FeedbackValue, noted
from workflow.errors import StoreError

if TYPE_CHECKING:
    from bot.records.feedback import S3Feedback
    from bot.records.history import History
    from bot.records.receipts import Receipts
    from bot.slack.outbox import Outbox

log = logging.getLogger(__name__)

LISTED = 1000  # outcome names listed to find an ended session's record (one LIST page)
METRICS = {"good": "BasketFeedbackGood", "bad": "BasketFeedbackBad"}


@dataclass(frozen=True)
class FeedbackDesk:
    """What a feedback press needs, and no more."""

    receipts: Receipts
    history: History
    feedback: S3Feedback | None
    outbox: Outbox


@dataclass(frozen=True)
class Pressed:
    """A feedback press as Slack sent it: who, where (the message clicked), the value."""

    tenant: str
    user: str
    channel: str
    ts: str
    value: str


def shown_here(desk: FeedbackDesk, tenant: str, said: FeedbackValue, channel: str, ts: str) -> bool:
    """Whether basket ``said.round`` of ``said.session_id`` was shown in ``channel`` (as
    message ``ts`` when our records name that round's message)."""
    waiting = desk.receipts.basket(tenant, said.session_id)
    if waiting is not None and waiting.channel == channel:
        if said.round == waiting.round:
            return waiting.ts == ts
        return said.round < waiting.round
    for name in desk.history.names(tenant, LISTED):
        if session_of(name) != said.session_id:
            continue
        ended = desk.history.read_name(tenant, name)
        if ended is None or ended.channel != channel:
            return False
        return said.round < ended.round or (said.round == ended.round and ended.ts == ts)
    return False


def record_feedback(desk: FeedbackDesk, pressed: Pressed, now: float) -> bool:
    """Keep one press of a basket's feedback buttons (steps 1 to 4 above); whether it was."""
    said = FeedbackValue.from_value(pressed.value)
    tell = desk.outbox.tell
    if said is None:
        log.info("a feedback press that is not ours: nothing noted")
        tell(pressed.channel, pressed.user, NOT_NOTED)
        return False
    try:
        if desk.feedback is None or not shown_here(
            desk, pressed.tenant, said, pressed.channel, pressed.ts
        ):
            log.info("feedback on a basket not shown here (%s): nothing noted", said.session_id)
            tell(pressed.channel, pressed.user, NOT_NOTED)
            return False
        record = Said(
            session=said.session_id,
            round=said.round,
            user=pressed.user,
            verdict=said.verdict,
            at=int(now),
            channel=pressed.channel,
            ts=pressed.ts,
        )
        name = feedback_name(said.session_id, said.round, pressed.user)
        before = desk.feedback.read_name(pressed.tenant, name)
        desk.feedback.write(pressed.tenant, record)
    except StoreError as exc:
        log.warning("feedback could not be kept: %s", exc, exc_info=exc)
        tell(pressed.channel, pressed.user, NOT_SAVED)
        return False
    if before is None or before.verdict != said.verdict:  # a press again, or a retry: once
        metrics.count(METRICS[said.verdict])
    log.info("feedback kept: %s round %s %s", said.session_id, said.round, said.verdict)
    tell(pressed.channel, pressed.user, noted(said.verdict, said.round))
    return True
