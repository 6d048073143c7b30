"""Where a session's objects live in the bucket. One place, so the store and the lock agree.

    <prefix><tenant>/s/<session>/cp/<999999 - sequence>   checkpoints, newest first in a listing
    <prefix><tenant>/s/<session>/lock                     the session lock
    <prefix><tenant>/s/<session>/<name>                   other per-session objects (``beside``)

Sequences are inverted so that a LIST with ``MaxKeys=1`` returns the newest checkpoint: ``latest``
costs one LIST and one GET however many checkpoints the session holds.
"""

from __future__ import annotations

from dataclasses import dataclass

from .store import validate_id

MAX_SEQUENCE = 999_999


def sibling_prefix(prefix: str, name: str) -> str:
    """A prefix beside ``prefix`` for what must not share its lifecycle rules (S3 applies the
    shortest of overlapping expirations): ``weekly-shop/`` → ``weekly-shop-<name>/``, and
    ``<name>/`` for the bucket's root."""
    return f"{prefix.rstrip('/')}-{name}/" if prefix else f"{name}/"


@dataclass(frozen=True)
class S3Keys:
    prefix: str  # the application's folder in the bucket ("" for the bucket's root)

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

    def beside(self, tenant_id: str, session_id: str, name: str) -> str:
        """A key for another per-session object (e.g. the bot's receipt), never ``cp/…``."""
        if name in ("cp", "lock") or not name.isidentifier():
            raise ValueError(f"{name!r} is not a free per-session object name")
        return self.session(tenant_id, session_id) + name

    @staticmethod
    def is_checkpoint_key(key: str) -> bool:
        """Whether ``key`` (under a session's ``cp/``) names a checkpoint: six digits."""
        name = key.rsplit("/", 1)[-1]
        return len(name) == 6 and name.isascii() and name.isdigit()

    @staticmethod
    def sequence_from_key(key: str) -> int:
        return MAX_SEQUENCE - int(key.rsplit("/", 1)[-1])
