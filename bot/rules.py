"""Who may answer a basket: ``APPROVER_IDS`` (empty: anyone) and ``NO_SELF_APPROVAL``.

Checked twice: who may answer at all in the ack path (a Change… from someone else never opens a
modal), and who may give this answer on this basket once its requester is known, in the lazy run.
"""

from __future__ import annotations

from dataclasses import dataclass

OWN_BASKET = "You asked for this basket, so someone else has to approve it."


@dataclass(frozen=True)
class Rules:
    approvers: frozenset[str] = frozenset()
    no_self_approval: bool = False

    def may_answer(self, user: str) -> str | None:
        """A refusal for ``user``, or None."""
        if self.approvers and user not in self.approvers:
            names = ", ".join(f"<@{a}>" for a in sorted(self.approvers))
            return f"Only {names} can answer baskets here."
        return None

    def may_give(self, kind: str, user: str, requester: str) -> str | None:
        """A refusal of answer ``kind`` from ``user`` on a basket ``requester`` asked for."""
        if self.no_self_approval and kind == "approve" and user == requester:
            return OWN_BASKET
        return None
