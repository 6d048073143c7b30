"""Where a session's objects live in the bucket. One place, so the store and the lock agree.

    <prefix><tenant>/s/<session>/cp/<999999 - sequence>   checkpoints, newest first in a listing
    <prefix><tenant>/s/<session>/lock                     the session lock
    <prefix><tenant>/r/<run>/<session>                    one marker per run, for list_by_run

Sequences are inverted so that a LIST with ``MaxKeys=1`` returns the newest checkpoint: ``latest``
costs one LIST and one GET however many checkpoints the session holds.
"""

from __future__ import annotations

from dataclasses import dataclass

from .store import validate_id

MAX_SEQUENCE = 999_999


@dataclass(frozen=True)
class S3Keys:
    prefix: str = "weekly-shop/"

    def __post_init__(self) -> None:
        if self.prefix and not self.prefix.endswith("/"):
            object.__setattr__(self, "prefix", self.prefix + "/")

    def tenant(self, tenant_id: str) -> str:
        return f"{self.prefix}{validate_id(tenant_id, 'tenant ID')}/"

    def session(self, tenant_id: str, session_id: str) -> str:
        return f"{self.tenant(tenant_id)}s/{validate_id(session_id, 'session ID')}/"

    def checkpoints(self, tenant_id: str, session_id: str) -> str:
        return self.session(tenant_id, session_id) + "cp/"

    def checkpoint(self, tenant_id: str, session_id: str, sequence: int) -> str:
        return f"{self.checkpoints(tenant_id, session_id)}{MAX_SEQUENCE - sequence:06d}"

    def lock(self, tenant_id: str, session_id: str) -> str:
        return self.session(tenant_id, session_id) + "lock"

    def runs(self, tenant_id: str, run_id: str) -> str:
        return f"{self.tenant(tenant_id)}r/{validate_id(run_id, 'run ID')}/"

    def run_marker(self, tenant_id: str, run_id: str, session_id: str) -> str:
        return self.runs(tenant_id, run_id) + validate_id(session_id, "session ID")

    @staticmethod
    def sequence_from_key(key: str) -> int:
        return MAX_SEQUENCE - int(key.rsplit("/", 1)[-1])
