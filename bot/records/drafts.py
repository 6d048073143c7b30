"""Which Slack message shows a basket while it is written: one small object per session.

A ``/shop``'s first basket is shown while the model writes it (``bot.slack.draft``): one message,
posted before the model is asked and updated as items come, which becomes the basket itself once
it is whole and checked. Slack's ``chat.postMessage`` has no idempotency key, so the message is
claimed here first: ``<prefix><tenant>/s/<session>/draft``, created with ``If-None-Match: *``
(of any number of deliveries of one start, exactly one creates it), then rewritten with the
message's ``ts`` once Slack has answered. What a later delivery (Lambda's retry of a run that
died) finds:

    Fresh()        nothing: this delivery claimed it, and posts the message
    Known(ts)      a message was posted and recorded: it is used again, never a second one
                   (and, once it is marked as becoming the basket, never said to have failed)
    Unknown()      claimed, but no ts: the delivery that claimed it died between posting and
                   recording, or before posting. Whether a message exists is not known; this
                   delivery shows no draft (the basket is posted as a new message, as before).
                   A message that was posted says only who asked and what (it is updated only
                   after its ts is recorded), which stays true.

A change (Change…) shows the basket it asks for the same way, in a message of its own: the object
is named for the request the change answers (:func:`change_draft`), so each change has its own
and a later change of the same basket (after one that changed nothing) never finds an earlier
one's message.

The object lives beside the session's checkpoints, so the bucket's 30-day rule removes it with
them. Failures are StoreError; the caller then shows no draft.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from botocore.exceptions import BotoCoreError, ClientError

from workflow.persistence.s3_client import claim_marker, get_object, store_error
from workflow.persistence.s3_keys import S3Keys

NAME = "draft"
CLAIMED = b"claimed"
BASKET = "basket "  # the recorded message is (becoming) the basket: nothing may say it failed


def change_draft(request_id: str) -> str:
    """The object of the draft of the basket a change of request ``request_id`` asks for."""
    if not (len(request_id) == 32 and request_id.isascii() and request_id.isalnum()):
        raise ValueError("not a request id")  # the engine's: uuid4().hex
    return f"{NAME}_{request_id.lower()}"


@dataclass(frozen=True)
class Fresh:
    """This delivery claimed the session's draft message: it posts it."""


@dataclass(frozen=True)
class Known:
    """The session's draft message, posted and recorded."""

    ts: str


@dataclass(frozen=True)
class Unknown:
    """Claimed by a delivery that never recorded a message."""


Claim = Fresh | Known | Unknown


def _ts(body: bytes) -> str | None:
    """A message ts as recorded ("1700000000.000100", or "basket 1700000000.000100" once the
    basket goes there), or None for a claim without one."""
    text = body.decode("ascii", "replace").strip().removeprefix(BASKET)
    seconds, dot, fraction = text.partition(".")
    if dot and seconds.isdigit() and fraction.isdigit() and len(text) <= 32:
        return text
    return None


class S3Drafts:
    def __init__(self, bucket: str, prefix: str, s3_client: Any) -> None:
        self.s3 = s3_client
        self.bucket = bucket
        self.keys = S3Keys(prefix)

    def claim(self, tenant_id: str, session_id: str, name: str = NAME) -> Claim:
        """Claim the session's draft message, or say what an earlier delivery left."""
        key = self.keys.beside(tenant_id, session_id, name)
        if claim_marker(self.s3, self.bucket, key, CLAIMED, "draft claim") is not None:
            return Fresh()
        found = get_object(self.s3, self.bucket, key, "draft claim")
        ts = None if found is None else _ts(found[0])
        return Unknown() if ts is None else Known(ts)

    def record(
        self, tenant_id: str, session_id: str, ts: str, basket: bool = False, name: str = NAME
    ) -> None:
        """The draft message Slack posted (its ``ts``), for a later delivery to use again; with
        ``basket``, written before the basket goes there (so a lost run's report never
        overwrites a basket someone may be approving: :meth:`becomes_basket`)."""
        if _ts(ts.encode("ascii", "replace")) is None:
            raise ValueError("not a message ts")
        key = self.keys.beside(tenant_id, session_id, name)
        try:
            self.s3.put_object(
                Bucket=self.bucket,
                Key=key,
                Body=((BASKET if basket else "") + ts).encode("ascii"),
                ContentType="text/plain",
                ServerSideEncryption="AES256",
            )
        except (ClientError, BotoCoreError) as exc:
            raise store_error("put draft", exc) from exc

    def forget(self, tenant_id: str, session_id: str, name: str = NAME) -> None:
        """No basket came of a change's draft, and its message says so: a later change of the
        same basket (a new click) posts a draft of its own, never rewrites this one."""
        key = self.keys.beside(tenant_id, session_id, name)
        try:
            self.s3.delete_object(Bucket=self.bucket, Key=key)
        except (ClientError, BotoCoreError) as exc:
            raise store_error("delete draft", exc) from exc

    def shown(self, tenant_id: str, session_id: str, name: str = NAME) -> str | None:
        """The recorded draft message's ts, if there is one (a basket to post there)."""
        found = get_object(
            self.s3, self.bucket, self.keys.beside(tenant_id, session_id, name), "draft"
        )
        return None if found is None else _ts(found[0])

    def becomes_basket(self, tenant_id: str, session_id: str, name: str = NAME) -> bool | None:
        """Whether the recorded draft message is (becoming) the basket; None without one."""
        found = get_object(
            self.s3, self.bucket, self.keys.beside(tenant_id, session_id, name), "draft"
        )
        if found is None or _ts(found[0]) is None:
            return None
        return found[0].decode("ascii", "replace").startswith(BASKET)
