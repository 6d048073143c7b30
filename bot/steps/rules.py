"""Who may answer a basket (``APPROVER_IDS``, empty: anyone; ``NO_SELF_APPROVAL``), and how:
the last basket (``MAX_ROUNDS``) takes no change, and an order takes ``approvals_needed``
different approvers (a quorum, ``workflow.shop.graph`` version 2), counted against the rules at
each click: an approval by someone no longer an approver stops counting.

Checked twice: who may answer at all in the ack path (a Change… from someone else never opens a
modal), and who may give this answer on this basket once its requester is known, in the lazy run.

Closed rules (``closed``: why): the workspace's settings document cannot be read (tampered,
garbled, an older copy put back, or a newer schema's: ``bot.records.workspace_settings_store``).
Nobody may answer then: every click that answers, edits, starts again or retries is told why
before anything is read or locked, so no basket is ordered under the deploy's defaults, which
would relax the household's approvals.
"""

from __future__ import annotations

from dataclasses import dataclass

OWN_BASKET = "You asked for this basket, so someone else has to approve it."
LAST_BASKET = "This is the last basket, so it can't be changed: approve or reject it."
UNREADABLE = (
    "This workspace's settings can't be read, so nothing can be ordered until an admin saves "
    "them again in the Home tab's Settings."
)
NEWER_SETTINGS = (
    "This workspace's settings were saved by a newer version of the app, so nothing can be "
    "ordered until that version is back."
)


def closed_text(problem: str | None) -> str:
    """Why nobody may answer, for a settings document's problem ("" when there is none)."""
    if not problem:
        return ""
    return NEWER_SETTINGS if problem == "newer" else UNREADABLE


@dataclass(frozen=True)
class Rules:
    approvers: frozenset[str] = frozenset()
    no_self_approval: bool = False
    max_rounds: int = 3
    # How many different people must approve a basket before it is ordered: 1 to the number of
    # approvers (with no approvers, "anyone in the channel", still a count of different people).
    approvals_needed: int = 1
    # The undo window: an approval that completes the quorum is held this many seconds before
    # the order goes (0: at once; 0 too where no timers are armed: nothing would release it).
    hold_seconds: int = 0
    # Why nobody may answer at all ("": they may): the settings cannot be read (``closed_text``).
    closed: str = ""

    @property
    def quorum(self) -> int:
        """The approvals a basket needs now: ``approvals_needed``, at least 1, and never more
        than there are approvers to give them (a list shortened since would strand a basket)."""
        needed = max(1, self.approvals_needed)
        return min(needed, len(self.approvers)) if self.approvers else needed

    def counts(self, user: str) -> bool:
        """Whether ``user``'s approval counts toward the quorum now: an approval is counted
        against the settings in force at each click, so one given by someone who is no longer
        an approver stops counting (and a lowered ``approvals_needed`` holds at the next click)."""
        return not self.approvers or user in self.approvers

    def counting(self, approvals: list[str]) -> list[str]:
        """Those of ``approvals`` that count now, in order."""
        return [user for user in approvals if self.counts(user)]

    def may_answer(self, user: str) -> str | None:
        """A refusal for ``user``, or None."""
        if self.closed:
            return self.closed
        if self.approvers and user not in self.approvers:
            names = ", ".join(f"<@{a}>" for a in sorted(self.approvers))
            return f"Only {names} can answer baskets here."
        return None

    def may_give(self, kind: str, user: str, requester: str, round: int) -> str | None:
        """A refusal of answer ``kind`` from ``user`` on basket ``round``, which ``requester``
        asked for. A change of the last basket (from a modal opened on a message posted before
        it was the last, or by older code) would end the week without an order: refused."""
        if self.closed:
            return self.closed
        if self.no_self_approval and kind == "approve" and user == requester:
            return OWN_BASKET
        if kind == "change" and round >= self.max_rounds:
            return LAST_BASKET
        return None
