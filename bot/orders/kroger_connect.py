"""Connecting a person's Kroger account: the ``state`` of the authorization-code flow, signed and
not stored, the PKCE verifier derived from it, and its redemption, once.

The Home tab's Connect link carries a state that says whose link it is (the workspace and the
Slack user), when it was issued, and a nonce, in characters that need no escaping in a URL::

    <team>.<user>.<issued at, unix seconds>.<nonce: 16 random bytes>.<MAC>

(nonce and MAC in unpadded base64url; the MAC is HMAC-SHA256 of everything before it). Its key
is derived from the Slack signing secret, which every deploy has (one workspace or many), for
this purpose alone (``STATE_PURPOSE``): no other MAC made with that secret is a valid state,
and the Slack install's states (``bot.slack.oauth_states``, under the client secret) are not
either. A state lives ``LIFE_SECONDS`` (an hour): the Home tab is published again each time the
person opens it, so the link there is fresh when it is pressed.

Such a link is a bearer of its Slack user's identity: nothing ties the browser that opens it
to that person, and Kroger's consent page names only the app. If Bob sent his link to someone
who then signed in at Kroger and allowed, *their* Kroger account would be linked to *Bob*, and
Bob's household's approved baskets would go to their cart. So the link does not go to Kroger:
it goes to the bot's own page (``GET /kroger/connect?state=…``, ``bot.steps.kroger_confirm``),
which checks the state as below and says, with the names Slack gives, whose connection this is
and in which workspace ("If you are not <name>, close this page"), and only then links on to
Kroger's authorize page with the same state. That page writes nothing.

The PKCE verifier (RFC 7636 §4.1: 43 to 128 characters of ``[A-Za-z0-9-._~]``) is not stored
either: it is base64url(HMAC-SHA256(verifier key, nonce)), 43 characters, under a second key
derived for that purpose (``VERIFIER_PURPOSE``). The authorize link carries only its S256
challenge (RFC 7636 §4.2); the redirect recomputes the verifier from the state's nonce, so
only this deploy can answer the challenge, and a code taken from the redirect is no use to
someone without the signing secret.

Checking a state (:meth:`KrogerStates.read`) is its form, its MAC (in constant time) and its
age, without a word to S3: a forged, malformed or expired state costs nothing and writes
nothing. A state that passes is made single-use by one conditional create (``create_marker``)::

    redirect A                                   redirect B (the same state)
    PUT <states>kroger/used/<nonce>              PUT <states>kroger/used/<nonce>
        If-None-Match: *                             If-None-Match: *
      -> 200: exchanges the code, saves it         -> 412: refused; nothing exchanged or saved

The markers sit under the Slack install's ``states/`` prefix (``<install prefix>states/``,
``bot.slack.installs``), whose lifecycle rule (``serverless.yml``, ``expire-oauth-states``)
deletes them after a day, well after their state's hour; the function's role may write there
in every deploy, one workspace or many.

Errors: an S3 failure while redeeming is ``StoreError`` (the person connects again). Neither the
verifier nor a key appears in a repr or a log line.
"""

from __future__ import annotations

import base64
import hashlib
import hmac
import re
import secrets
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from workflow.persistence.s3_client import create_marker

STATE_PURPOSE = b"weekly-shop kroger state v1"
VERIFIER_PURPOSE = b"weekly-shop kroger verifier v1"
LIFE_SECONDS = 3600
# A state issued by another container whose clock runs a little ahead is still good.
CLOCK_SKEW_SECONDS = 30
NONCE_BYTES = 16
USED = "kroger/used/"  # under <install prefix>states/
_FORM = re.compile(
    r"([A-Z0-9]{2,32})\.([UW][A-Z0-9]{2,20})\.([0-9]{1,12})\.([A-Za-z0-9_-]{22})\.([A-Za-z0-9_-]{43})",
    re.ASCII,
)


def _b64(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode("ascii")


@dataclass(frozen=True)
class Issued:
    """A state this deploy issued, unexpired: whose it is, and the verifier it stands for."""

    team: str
    user: str
    nonce: str
    verifier: str = field(repr=False)


class KrogerStates:
    """Issues and checks connection states under keys derived from ``signing_secret``."""

    def __init__(
        self, signing_secret: str, clock: Callable[[], float] = time.time, life: int = LIFE_SECONDS
    ) -> None:
        if not signing_secret:
            raise ValueError("signed Kroger states need the Slack signing secret")
        secret = signing_secret.encode()
        self._state_key = hmac.new(secret, STATE_PURPOSE, hashlib.sha256).digest()
        self._verifier_key = hmac.new(secret, VERIFIER_PURPOSE, hashlib.sha256).digest()
        self.clock, self.life = clock, life

    def __repr__(self) -> str:
        return f"KrogerStates(life={self.life!r})"

    def _mac(self, signed: str) -> str:
        return _b64(hmac.new(self._state_key, signed.encode(), hashlib.sha256).digest())

    def verifier_of(self, nonce: str) -> str:
        """The PKCE verifier of the state with ``nonce``: 43 base64url characters."""
        return _b64(hmac.new(self._verifier_key, nonce.encode(), hashlib.sha256).digest())

    def issue(self, team: str, user: str) -> tuple[str, str]:
        """(a new state for ``user`` of ``team``, its verifier); nothing is written. Raises
        ValueError for IDs that are not Slack's."""
        issued, nonce = str(int(self.clock())), _b64(secrets.token_bytes(NONCE_BYTES))
        signed = f"{team}.{user}.{issued}.{nonce}"
        state = f"{signed}.{self._mac(signed)}"
        if not _FORM.fullmatch(state):
            raise ValueError("a Kroger state names a Slack workspace and user by their IDs")
        return state, self.verifier_of(nonce)

    def read(self, state: object) -> Issued | None:
        """What ``state`` says, if this deploy issued it and it has not expired; else None.
        No S3 call."""
        found = _FORM.fullmatch(state) if isinstance(state, str) else None
        if found is None:
            return None
        team, user, issued, nonce, mac = found.groups()
        signed = f"{team}.{user}.{issued}.{nonce}"
        # Both ASCII by the pattern; bytes, as compare_digest refuses non-ASCII str.
        if not hmac.compare_digest(self._mac(signed).encode(), mac.encode()):
            return None
        age = self.clock() - int(issued)
        if not -CLOCK_SKEW_SECONDS <= age < self.life:
            return None
        return Issued(team, user, nonce, self.verifier_of(nonce))

    @staticmethod
    def redeem(issued: Issued, s3: Any, bucket: str, states_prefix: str) -> bool:
        """True for exactly one redemption of ``issued`` (one conditional PUT of its marker
        under ``states_prefix``, the install prefix's ``states/``); False for every other.
        Raises StoreError when S3 fails (real S3's 409 for a redemption in flight too)."""
        key = f"{states_prefix}{USED}{issued.nonce}"
        return create_marker(s3, bucket, key, "Kroger state")
