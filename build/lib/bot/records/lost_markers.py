"""The lost-runs queue's markers: one object per failed request ID,
``<prefix><tenant>/lost/<request ID>``, so a lost run is told once and never left untold.

The marker has two states, so that a process killed anywhere never leaves a lost run untold
(SQS delivers a record again when its processing did not finish: it was not deleted)::

    A: PUT lost/<id> If-None-Match:* "claimed"  -> 200, ETag e1
       (A killed here, or Slack refuses A: nobody was told; the redelivery B gets 412, reads
        "claimed", and tells)
    A: tells the person
    A: PUT lost/<id> If-Match:e1 "told"          -> 200; a later delivery reads "told": nothing
"""

from __future__ import annotations

import logging
from dataclasses import dataclass
from typing import Any

from workflow.errors import StoreError
from workflow.persistence.s3_client import claim_marker, get_object, replace_marker
from workflow.persistence.store import validate_id

log = logging.getLogger(__name__)

CLAIMED, TOLD = b"claimed", b"told"  # the marker's two states


@dataclass(frozen=True)
class Claim:
    """A lost run this delivery is to tell: its marker, "claimed" at ``etag``."""

    key: str
    etag: str


class LostMarkers:
    def __init__(self, s3: Any, bucket: str, prefix: str) -> None:
        self.s3, self.bucket, self.prefix = s3, bucket, prefix

    def claim(self, tenant: str, request_id: str) -> Claim | None:
        """The marker to tell under, unless this failed request was told before (SQS delivers
        at least once): a new marker "claimed", or one a delivery claimed and never marked told
        (it died, or Slack refused it)."""
        tenant, request_id = validate_id(tenant, "tenant ID"), validate_id(request_id, "request ID")
        key = f"{self.prefix}{tenant}/lost/{request_id}"
        etag = claim_marker(self.s3, self.bucket, key, CLAIMED, "lost-run marker")
        if etag is not None:
            return Claim(key, etag)
        found = get_object(self.s3, self.bucket, key, "lost-run marker")
        if found is None:  # removed between the two requests: the next delivery claims it
            raise StoreError("the lost-run marker vanished")
        return Claim(key, found.etag) if found.body == CLAIMED else None

    def told(self, claim: Claim) -> None:
        """Mark the claim told. If that fails the person was told all the same: the record is
        done (SQS deletes it), and only a concurrent delivery could tell once more."""
        try:
            replace_marker(self.s3, self.bucket, claim.key, TOLD, claim.etag, "lost-run marker")
        except StoreError as exc:
            log.error("told, but the lost-run marker could not say so: %s", exc)
