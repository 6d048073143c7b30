"""Which checkpoint Slack shows: the bot's receipt, one small S3 object per session.

The workflow writes its checkpoint before the bot posts to Slack, so a process that dies in
between leaves the store ahead of the channel. After posting, the bot records the checkpoint the
channel now shows. A later click (or Lambda's retry of the lost invocation) that finds its request
already answered compares the receipt with the latest checkpoint: the same, and it is a stale
click; different, and it reposts what the latest checkpoint holds (the pending basket, or the
outcome), then writes the receipt.
"""

from __future__ import annotations

import logging
from typing import Any

from botocore.exceptions import BotoCoreError, ClientError

from workflow.s3_client import get_object
from workflow.s3_keys import S3Keys

log = logging.getLogger(__name__)
NAME = "shown"


class Receipts:
    def __init__(self, s3: Any, bucket: str, prefix: str) -> None:
        self.s3 = s3
        self.bucket = bucket
        self.keys = S3Keys(prefix)

    def shown(self, tenant_id: str, session_id: str) -> str | None:
        """The checkpoint ID the channel shows, or None if nothing was recorded."""
        key = self.keys.beside(tenant_id, session_id, NAME)
        found = get_object(self.s3, self.bucket, key, "receipt")
        if found is None:
            return None
        return found[0].decode("ascii", "replace").strip() or None

    def mark_shown(self, tenant_id: str, session_id: str, checkpoint_id: str) -> None:
        """Record what the channel shows now; a failure is logged, never fatal (it only costs a
        repost later)."""
        key = self.keys.beside(tenant_id, session_id, NAME)
        try:
            self.s3.put_object(
                Bucket=self.bucket,
                Key=key,
                Body=checkpoint_id.encode("ascii"),
                ContentType="text/plain",
                ServerSideEncryption="AES256",
            )
        except (ClientError, BotoCoreError) as exc:
            log.error("could not record the shown checkpoint: %s", exc)
