"""Where a session's messages go, and what telling Slack did: the plain data the steps, the
payload readers and the outbox (``bot.slack.outbox``) share, with no Slack client in it."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Posted:
    """A basket posted with its buttons: which request, which message, when."""

    request_id: str
    ts: str
    round: int
    at: int  # epoch seconds
    held_until: int | None = None  # an approved basket held for its undo window: its order time


@dataclass(frozen=True)
class Delivered:
    """What ``deliver`` did: whether the channel shows all of a Report (receipt-worthy), and
    the baskets it posted."""

    shown: bool
    posted: tuple[Posted, ...] = ()

    def __bool__(self) -> bool:
        return self.shown


@dataclass(frozen=True)
class Where:
    """A session and the channel its messages go to."""

    tenant: str
    session_id: str
    channel: str
    reply_url: str = ""  # the slash command's response_url, where there is one
