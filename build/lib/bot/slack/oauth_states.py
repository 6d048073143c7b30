"""The OAuth flow's state: signed, not stored, and redeemed once.

Bolt's S3 state store writes one object per ``GET /slack/install``, a request anyone may send:
a loop of them grows the bucket without bound. Here issuing a state writes nothing. The state
carries its own proof, in characters that need no escaping in a URL or a cookie:

    <issued at, unix seconds>.<nonce: 16 random bytes>.<HMAC-SHA256 of "<issued at>.<nonce>">

(nonce and MAC in unpadded base64url), under a key derived from the Slack client secret for
this purpose alone (``PURPOSE``), so no other MAC made with that secret is ever a valid state.

Redeeming checks the form, the MAC (in constant time) and the age (``expiration_seconds``,
600 s) without a word to S3: a forged, malformed or expired state is refused having written
and read nothing. A state that passes is then made single-use by one conditional create:

    redemption A                                   redemption B
    PUT states/used/<nonce>  If-None-Match: *      PUT states/used/<nonce>  If-None-Match: *
      -> 200: goes on to Slack's code exchange       -> 412: refused, installs nothing

Of any number of redemptions of one state, exactly one creates the marker; the others get the
flow's failure page ("expired or was already used"). So only a state this app issued, redeemed
within its 600 s, writes anything: one empty object per state at most. The markers need to
outlive their state's 600 s only; the bucket's lifecycle rule on ``states/`` (``serverless.yml``,
``expire-oauth-states``) deletes them after a day.

The store stays an ``AmazonS3OAuthStateStore`` (its S3 client and bucket hold the markers):
``LambdaS3OAuthFlow`` replaces any state store that is not one with Bolt's own.
"""

from __future__ import annotations

import base64
import hashlib
import hmac
import logging
import re
import secrets
import time
from collections.abc import Callable
from typing import Any

from slack_sdk.oauth.state_store.amazon_s3 import AmazonS3OAuthStateStore

from workflow.errors import StoreError
from workflow.persistence.s3_client import create_marker

log = logging.getLogger(__name__)

PURPOSE = b"weekly-shop oauth state v1"
USED = "used/"  # under the store's own prefix (<install prefix>states/)
NONCE_BYTES = 16
# A state issued by another container whose clock runs a little ahead is still good.
CLOCK_SKEW_SECONDS = 30
_FORM = re.compile(r"([0-9]{1,12})\.([A-Za-z0-9_-]{22})\.([A-Za-z0-9_-]{43})", re.ASCII)


def _b64(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode("ascii")


class SingleUseStateStore(AmazonS3OAuthStateStore):
    """Bolt's ``OAuthStateStore``: ``issue()`` signs a state (no S3 call), ``consume()`` is True
    for exactly one redemption of a state it issued, within ``expiration_seconds``."""

    def __init__(
        self,
        *,
        client_secret: str,
        s3_client: Any,
        bucket_name: str,
        expiration_seconds: int,
        clock: Callable[[], float] = time.time,
    ) -> None:
        if not client_secret:
            raise ValueError("signed OAuth states need the Slack client secret")
        super().__init__(
            s3_client=s3_client, bucket_name=bucket_name, expiration_seconds=expiration_seconds
        )
        self._key = hmac.new(client_secret.encode(), PURPOSE, hashlib.sha256).digest()
        self.clock = clock

    def _mac(self, issued: str, nonce: str) -> str:
        return _b64(hmac.new(self._key, f"{issued}.{nonce}".encode(), hashlib.sha256).digest())

    def issue(self, *args: Any, **kwargs: Any) -> str:
        """A new state, signed now; nothing is written."""
        issued, nonce = str(int(self.clock())), _b64(secrets.token_bytes(NONCE_BYTES))
        return f"{issued}.{nonce}.{self._mac(issued, nonce)}"

    def nonce_of(self, state: object) -> str | None:
        """The nonce of ``state`` if this store issued it and it has not expired, else None."""
        found = _FORM.fullmatch(state) if isinstance(state, str) else None
        if found is None:
            return None
        issued, nonce, mac = found.groups()
        # Both ASCII by the pattern; bytes, as compare_digest refuses non-ASCII str.
        if not hmac.compare_digest(self._mac(issued, nonce).encode(), mac.encode()):
            return None
        age = self.clock() - int(issued)
        return nonce if -CLOCK_SKEW_SECONDS <= age < self.expiration_seconds else None

    def consume(self, state: str) -> bool:
        """True for exactly one redemption of an issued, unexpired ``state``. A state that is
        not one costs no S3 call; a valid one, one conditional PUT of its used-marker."""
        nonce = self.nonce_of(state)
        if nonce is None:
            log.warning("OAuth state refused: forged, malformed or expired")
            return False
        try:
            first = create_marker(self.s3_client, self.bucket_name, USED + nonce, "OAuth state")
        except StoreError as exc:
            # Real S3's 409 (another redemption of it in flight) lands here too: refused.
            log.warning("OAuth state refused: %s", exc)
            return False
        if not first:
            log.warning("OAuth state refused: already redeemed")
        return first
