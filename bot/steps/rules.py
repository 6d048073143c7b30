"""Who may answer a basket (``APPROVER_IDS``, empty: anyone; ``NO_SELF_APPROVAL``), and how:
the last basket (``MAX_ROUNDS``) takes no change, and an order takes ``approvals_needed``
different approvers (a quorum, ``workflow.shop.graph`` version 2), counted against the rules at
each click: an approval by someone no longer an approver stops counting.

Checked twice: who may answer at all in the ack path (a Change… from someone else never opens a
modal), and who may give this answer on this basket once its requester is known, in the lazy run.
"""

from __future__ import annotations

from dataclasses import dataclass

OWN_BASKET = "You asked for this basket, so someone else has to approve it."
LAST_BASKET = "This is the last basket, so it can't be changed: approve or reject it."


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
        if self.approvers and user not in self.approvers:
            names = ", ".join(f"<@{a}>" for a in sorted(self.approvers))
            return f"Only {names} can answer baskets here."
        return None

    def may_give(self, kind: str, user: str, requester: str, round: int) -> str | None:
        """A refusal of answer ``kind`` from ``user`` on basket ``round``, which ``requester``
        asked for. A change of the last basket (from a modal opened on a message posted before
        it was the last, or by older code) would end the week without an order: refused."""
        if self.no_self_approval and kind == "approve" and user == requester:
            return OWN_BASKET
        if kind == "change" and round >= self.max_rounds:
            return LAST_BASKET
        return None
