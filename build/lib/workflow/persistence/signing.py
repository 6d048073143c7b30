"""HMAC signatures over checkpoints: tampering is detected, never shown to the approver.

The MAC covers the state bytes and the record's identity (tenant, session, checkpoint, parent,
run, sequence), so a checkpoint copied into another session or tenant does not verify either.

A signature is HMAC-SHA256 truncated to its first 128 bits, 22 characters of base64url (RFC 2104
section 5 and NIST SP 800-107 allow truncation; 128 bits leave a forger a 2^-128 chance a try). It
is stored in every checkpoint: 16 incompressible bytes where the full MAC would take 32.
"""

from __future__ import annotations

import base64
import hashlib
import hmac
from datetime import UTC, datetime, timedelta

from .store import CheckpointRecord

MAC_BYTES = 16  # 128 bits
CURRENT_MAC = 2
_EPOCH = datetime(1970, 1, 1, tzinfo=UTC)


class CheckpointSigner:
    def __init__(self, key: bytes) -> None:
        if len(key) < 16:
            raise ValueError("a checkpoint signing key needs at least 16 bytes")
        self._key = key

    @classmethod
    def derived(cls, secret: str, purpose: str = "weekly-shop checkpoints v1") -> CheckpointSigner:
        """A key derived from another secret (e.g. the Slack signing secret) for one purpose."""
        return cls(hmac.new(secret.encode(), purpose.encode(), hashlib.sha256).digest())

    def _mac(self, record: CheckpointRecord, version: int) -> str:
        fields = [
            record.tenant_id,
            record.session_id,
            record.checkpoint_id,
            record.parent_checkpoint_id or "",
            record.run_id,
            str(record.sequence),
        ]
        if version >= 2:
            at_ms = (record.created_at - _EPOCH) // timedelta(milliseconds=1)
            fields = ["mac2", *fields, record.id, str(at_ms)]
        head = "\n".join([*fields, ""]).encode()
        digest = hmac.new(self._key, head + record.state.encode(), hashlib.sha256).digest()
        return base64.urlsafe_b64encode(digest[:MAC_BYTES]).rstrip(b"=").decode()

    def mac_of(self, purpose: str, data: bytes) -> str:
        """A MAC of ``data`` for something else that crosses a trust boundary (the console's
        outcome log), under a key derived from this one for ``purpose`` alone."""
        key = hmac.new(self._key, purpose.encode(), hashlib.sha256).digest()
        return hmac.new(key, data, hashlib.sha256).hexdigest()

    def sign(self, record: CheckpointRecord) -> str:
        """The signature of ``record`` under the current MAC version (2)."""
        return self._mac(record, CURRENT_MAC)

    def verify(self, record: CheckpointRecord) -> bool:
        if record.mac not in (1, CURRENT_MAC):
            return False
        # As bytes: compare_digest refuses str with non-ASCII characters, and this one is read back.
        expected = self._mac(record, record.mac).encode()
        return hmac.compare_digest(expected, record.signature.encode())
