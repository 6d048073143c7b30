"""The basket's feedback buttons ("Good basket" / "Not good"): Slack's ``feedback_buttons`` in a
``context_actions`` block, and what each button's value carries. Pure functions of data; nothing
here reads S3 or imports the workflow, so the ack can parse a click.

Slack's reference (docs.slack.dev, reference/block-kit/blocks/context-actions-block and
block-elements/feedback-buttons-element): ``feedback_buttons`` lives only in a ``context_actions``
block (at most 5 elements); ``positive_button`` and ``negative_button`` are both required, each
a ``plain_text`` text of at most 75 characters, a ``value`` of at most 2,000 and an optional
``accessibility_label`` of at most 75; ``action_id`` at most 255. A ``block_id`` "should be
unique for each message and each iteration of a message. If a message is updated, use a new
block_id": none is set, so Slack makes a new one at each update. The click arrives as a
``block_actions`` whose action has type ``feedback_buttons`` and the pressed button's ``value``
(bolt-js ``FeedbackButtonsAction``). The element is a toggle in Slack's clients: a click sends
the pressed button's value with no "current state" and no "unpressed" signal (gitlab-org/gitlab
merge request 244668, "last-write-wins"), so the last click a person made is their verdict.

A value names the session, the round (which basket of the week) and the verdict, as compact
JSON (``{"s":…,"n":2,"v":"good"}``, well under 2,000 characters: a session ID is at most 128).
Where the click came from is checked against our own records in the lazy run
(``bot.steps.feedback``): a value is a claim, not a proof.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Literal

from workflow.errors import InvalidIdentifier
from workflow.persistence.store import validate_id

from .blocks import Block, plain

FEEDBACK = "basket_feedback"  # the action ID of the feedback buttons on every basket
Verdict = Literal["good", "bad"]
VERDICTS: tuple[Verdict, ...] = ("good", "bad")
MAX_ROUND = 99  # a week has a few rounds (Settings: 1 to 5); anything above is not ours

GOOD_TEXT, BAD_TEXT = "Good basket", "Not good"


@dataclass(frozen=True)
class FeedbackValue:
    """What a feedback button carries: which session, which basket (round), which verdict."""

    session_id: str
    round: int
    verdict: Verdict

    def to_value(self) -> str:
        body = {"s": self.session_id, "n": self.round, "v": self.verdict}
        return json.dumps(body, separators=(",", ":"))

    @classmethod
    def from_value(cls, value: object) -> FeedbackValue | None:
        """The feedback a button value names, or None if it is not one of ours (not JSON, a
        field missing or of the wrong type, a session ID unsafe in a key, a round out of
        range, an unknown verdict)."""
        if not isinstance(value, str) or len(value) > 2000:
            return None
        try:
            data = json.loads(value)
        except ValueError:
            return None
        if not isinstance(data, dict) or set(data) != {"s", "n", "v"}:
            return None
        session, round, verdict = data["s"], data["n"], data["v"]
        if not isinstance(round, int) or isinstance(round, bool) or not 1 <= round <= MAX_ROUND:
            return None
        if verdict not in VERDICTS or not isinstance(session, str):
            return None
        try:
            validate_id(session, "session ID")
        except InvalidIdentifier:
            return None
        return cls(session, round, "good" if verdict == "good" else "bad")


def feedback_block(session_id: str, round: int) -> Block:
    """The ``context_actions`` block under a basket: "Good basket" and "Not good", each naming
    the session, the basket's round and its verdict."""

    def one(text: str, verdict: Verdict, label: str) -> Block:
        value = FeedbackValue(session_id, round, verdict).to_value()
        return {"text": plain(text, 75), "value": value, "accessibility_label": label[:75]}

    return {
        "type": "context_actions",
        "elements": [
            {
                "type": "feedback_buttons",
                "action_id": FEEDBACK,
                "positive_button": one(GOOD_TEXT, "good", f"Basket {round} was a good basket"),
                "negative_button": one(BAD_TEXT, "bad", f"Basket {round} was not good"),
            }
        ],
    }


def noted(verdict: Verdict, round: int) -> str:
    """What the person who pressed sees (ephemeral): ours, no user text."""
    said = "a good basket" if verdict == "good" else "not a good basket"
    return f"Thanks: noted that basket {round} was {said}. Press the other button to change it."


NOT_NOTED = "That feedback button isn't one I can match to a basket here, so nothing was noted."
NOT_SAVED = "I couldn't save your feedback just now. Press the button again in a minute."
