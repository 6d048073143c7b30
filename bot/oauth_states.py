"""The OAuth flow's state, redeemed once: Bolt's S3 state store reads a state, then deletes it,
so two redemptions of one state at once both pass. Here the delete is conditional.

    redemption A                      redemption B
    GET states/<uuid>  (ETag e)       GET states/<uuid>  (ETag e)
    DELETE If-Match: e  -> 204        DELETE If-Match: e -> 412 / 404: refused, installs nothing

Of any number of redemptions of one state, exactly one deletes it and goes on to Slack's code
exchange; the others get the flow's failure page ("expired or was already used").
"""

from __future__ import annotations

import logging
import time

from botocore.exceptions import BotoCoreError, ClientError
from slack_sdk.oauth.state_store.amazon_s3 import AmazonS3OAuthStateStore

log = logging.getLogger(__name__)


class SingleUseStateStore(AmazonS3OAuthStateStore):
    def consume(self, state: str) -> bool:
        """True for exactly one redemption of an issued, unexpired ``state``."""
        try:
            found = self.s3_client.get_object(Bucket=self.bucket_name, Key=state)
            created = float(found["Body"].read().decode("utf-8"))
            self.s3_client.delete_object(Bucket=self.bucket_name, Key=state, IfMatch=found["ETag"])
        except (ClientError, BotoCoreError, ValueError) as exc:
            # No such state, one redeemed since (412 or 404), or a body that is not a time.
            log.warning("OAuth state refused: %s", type(exc).__name__)
            return False
        return time.time() < created + self.expiration_seconds
