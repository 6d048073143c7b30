"""What Slack says of people and channels when the settings are opened or saved, and how a save
asks it within Slack's 3 seconds.

``users.info`` (scope ``users:read``) says who someone is: their workspace (on Enterprise Grid,
every one of the org's they belong to), whether they are an owner or admin, a bot or
deactivated, their time zone. ``conversations.info`` says whether the bot is in a channel.

A Settings save asks these inside its ack, which Slack waits for at most 3 seconds (cold start,
the S3 read and write and SSM included), so :func:`answers_within` asks them in parallel and
keeps only what came back before one :class:`Deadline`::

    the save's ack starts      Deadline(budget)
    users.info × n, conversations.info    at most MAX_AT_ONCE at a time
    the deadline passes        what is answered is kept; a question not yet sent is never sent;
                               a call still in flight is left to finish unread (on Lambda its
                               thread is frozen with the invocation and ends in the next one)

A question whose call failed, in any way (an ``ok: false`` other than "no such person", a
timeout, a reset connection, an answer that is no JSON), or that was not answered in time, has
no answer: the save says it could not check with Slack, and saves nothing.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable, Hashable, Mapping
from concurrent.futures import ThreadPoolExecutor, wait
from dataclasses import dataclass
from typing import Any, TypeVar

from slack_sdk import WebClient
from slack_sdk.errors import SlackApiError

log = logging.getLogger(__name__)

DEFAULT_TIMEZONE = "UTC"
MAX_AT_ONCE = 16  # Web API calls in parallel (users.info is Tier 4: 100+ a minute, with bursts)

K = TypeVar("K", bound=Hashable)
T = TypeVar("T")


@dataclass(frozen=True)
class Person:
    """What ``users.info`` says of someone, as far as settings care."""

    user: str
    teams: tuple[str, ...]  # their workspace, and (Enterprise Grid) every one of the org's
    admin: bool  # a workspace owner, primary owner or admin
    timezone: str
    bot: bool

    @classmethod
    def of(cls, web: WebClient, user: str) -> Person | None:
        """None for someone Slack does not know (``user_not_found``, as for another
        workspace's ID); other failures raise (``SlackApiError``, or the client's own)."""
        try:
            found = web.users_info(user=user)["user"]
        except SlackApiError as exc:
            if exc.response.get("error") in ("user_not_found", "user_not_visible"):
                return None
            raise
        tz = found.get("tz")
        grid = found.get("enterprise_user")
        listed = grid.get("teams") if isinstance(grid, dict) else None
        teams: list[Any] = listed if isinstance(listed, list) else []
        return cls(
            user=user,
            teams=(str(found.get("team_id") or ""), *(str(t) for t in teams)),
            admin=any(bool(found.get(k)) for k in ("is_admin", "is_owner", "is_primary_owner")),
            timezone=tz if isinstance(tz, str) and tz else DEFAULT_TIMEZONE,
            bot=bool(found.get("is_bot")) or bool(found.get("deleted")),
        )


def bot_is_in(web: WebClient, channel: str) -> bool:
    """``conversations.info``: ``is_member``; a channel Slack does not show the bot (a private
    one it is not in: ``channel_not_found``) is not one it is in."""
    try:
        info = web.conversations_info(channel=channel)["channel"]
    except SlackApiError as exc:
        if exc.response.get("error") in ("channel_not_found", "not_in_channel"):
            return False
        raise
    return bool(info.get("is_member"))


class Deadline:
    """A fixed budget from now, on a monotonic clock (a wall clock may step)."""

    def __init__(self, seconds: float, clock: Callable[[], float] = time.monotonic) -> None:
        self.clock = clock
        self.at = clock() + seconds

    def left(self) -> float:
        return max(0.0, self.at - self.clock())


class _NoAnswer:
    """A question that failed, or was sent too late to be."""


_NO_ANSWER = _NoAnswer()


def answers_within(deadline: Deadline, questions: Mapping[K, Callable[[], T]]) -> dict[K, T]:
    """Each question's answer, asked in parallel (at most ``MAX_AT_ONCE`` at a time), by the
    question's key; one that raised, or was not answered before ``deadline``, is left out.
    Returns when all are answered or the deadline passes, whichever is first."""
    if not questions:
        return {}
    pool = ThreadPoolExecutor(max_workers=min(MAX_AT_ONCE, len(questions)))
    try:
        asked = {pool.submit(_answer, deadline, ask): key for key, ask in questions.items()}
        done, _ = wait(asked, timeout=deadline.left())
    finally:
        pool.shutdown(wait=False, cancel_futures=True)
    answers = {asked[future]: future.result() for future in done}
    return {key: answer for key, answer in answers.items() if not isinstance(answer, _NoAnswer)}


def _answer(deadline: Deadline, ask: Callable[[], T]) -> T | _NoAnswer:
    if deadline.left() <= 0:  # (its turn came too late: never sent)
        return _NO_ANSWER
    try:
        return ask()
    except Exception as exc:  # noqa: BLE001 - every failure of the call is "could not check"
        said = exc.response.get("error") if isinstance(exc, SlackApiError) else None
        log.error("a Slack check failed: %s", said or type(exc).__name__)
        return _NO_ANSWER
