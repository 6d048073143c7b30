"""What a Settings save asks outside the bot before it saves (``bot.steps.settings``, step 3):
Slack (is each newly named person of this workspace, is the bot in the weekly channel) and DNS
(where the webhook's host points), all within one deadline from the ack's start.

Slack shows the person an error if the ack takes more than 3 seconds, and those 3 seconds also
hold the S3 read and the conditional write, the SSM calls and, on a cold start, the imports:
``CHECK_SECONDS`` is what the questions get, asked at once (``bot.slack.people``). What was
not answered by then, or failed, is said under its field and nothing is saved.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from concurrent.futures import ThreadPoolExecutor
from concurrent.futures import TimeoutError as NoAnswer
from functools import partial

from slack_sdk import WebClient

from bot.orders.safe_url import url_problem
from bot.records.workspace_settings import WorkspaceSettings
from bot.slack.people import Deadline, Person, answers_within, bot_is_in
from bot.slack.settings_submission import Submitted

CHECK_SECONDS = 1.5  # from the ack's start: Slack's and DNS's answers, well inside its 3 s
URL_CHECK_SECONDS = 1.5  # resolving the webhook's host, at most (and within CHECK_SECONDS)

NOT_HERE = "Not a person in this workspace: choose people from the list."
INVITE = "I'm not in that channel: type `/invite @weekly-shop` there, then save again."
NO_SCHEDULER = "This deploy has no scheduler (TIMER_GROUP is unset), so no weekly basket."
SLACK_DOWN = "I couldn't check that with Slack just now, so nothing was saved. Try again."
PEOPLE_DOWN = (
    "I couldn't check all of these people with Slack just now, so nothing was saved. Try "
    "again, or name fewer new people at a time."
)


def slack_says(
    web: WebClient,
    can_schedule: bool,
    tenant: str,
    current: WorkspaceSettings,
    wanted: Submitted,
    deadline: Deadline,
) -> dict[str, str]:
    """What Slack refuses of ``wanted``, or did not say before ``deadline``, by block: people
    not of this workspace (only those newly named are asked about), a weekly channel the bot is
    not in. Every question is asked at once, whatever else the form found wrong."""
    named = {
        block: [u for u in users if u not in before]
        for block, users, before in (
            ("approvers", wanted.approvers, current.approvers),
            ("admins", wanted.admins, current.admins),
        )
    }
    channel = wanted.weekly_channel
    # By ID: a person's (U…, W…) and a channel's (C…, G…) never meet.
    questions: dict[str, Callable[[], Person | bool | None]] = {
        user: partial(Person.of, web, user) for users in named.values() for user in users
    }
    if channel and can_schedule:
        questions[channel] = partial(bot_is_in, web, channel)
    said = answers_within(deadline, questions)
    found: dict[str, str] = {}
    for block, users in named.items():
        for user in users:
            person = said.get(user)
            if user not in said:  # (not answered in time, or failed)
                found[block] = PEOPLE_DOWN
                break
            if not isinstance(person, Person) or tenant not in person.teams or person.bot:
                found[block] = f"{user}: {NOT_HERE}"  # (errors are plain text: no mention)
                break
    if wanted.weekly_on and not can_schedule:
        found["weekly_day"] = NO_SCHEDULER
    elif channel and channel not in said:
        found["weekly_channel"] = SLACK_DOWN
    elif channel and not said[channel]:
        found["weekly_channel"] = INVITE
    return found


def checked_url(
    url: str, pinned: Mapping[str, tuple[str, int]] | None, deadline: Deadline
) -> str | None:
    """:func:`~bot.orders.safe_url.url_problem`, its DNS lookup given at most
    ``URL_CHECK_SECONDS``, and no more than ``deadline`` leaves: a host that does not resolve
    in time is not one to save."""
    pool = ThreadPoolExecutor(max_workers=1)
    try:
        return pool.submit(url_problem, url, pinned=pinned).result(
            timeout=min(URL_CHECK_SECONDS, deadline.left())
        )
    except NoAnswer:
        return "could not be checked: its host did not resolve in time"
    finally:
        pool.shutdown(wait=False)
