"""A Settings save asks Slack within one budget, and saves nothing it could not check (the
Settings-save issue, its third item).

Facts relied on: a ``view_submission`` must be acked within 3 seconds, "before Slack registers a
timeout error" (docs.slack.dev, Bolt for Python, "Acknowledging requests"; a cold start counts
too): the person is shown an error, so a save that finishes later is saved though they were
told it failed. The ack also reads and writes S3 (and SSM with a key), so what it asks Slack
(all at once) and DNS get ``CHECK_SECONDS`` from its start.

Through the real handler (signed requests), moto's S3 and the one fake Web API, told to answer
``users.info`` late (as a slow Slack does; later than the ack client's 2-second timeout, a
timeout) or to drop the connection. No assertion on elapsed time: the fake's delays are lower
bounds on how long the calls take, so what could be asked within the budget is counted instead.
"""

from __future__ import annotations

import math
from typing import Any

import pytest

from bot.slack.people import MAX_AT_ONCE
from bot.steps.settings_checks import CHECK_SECONDS, PEOPLE_DOWN, SLACK_DOWN
from tests.bot_kit import CHANNEL, World
from tests.settings_kit import open_settings, option, save, text, users
from tests.test_settings import saved, with_scheduler

APPROVERS = [f"U0P{n:03d}" for n in range(50)]  # as many as the modal takes
ADMINS = [f"U0A{n:03d}" for n in range(20)]
LATE = 0.35  # seconds per users.info, as in the issue


@pytest.fixture
def carol(world: World) -> World:
    """Carol is a workspace admin: she saves the Settings."""
    world.slack.set_person("U0CAROL", is_admin=True, tz="Europe/London")
    return world


def with_people(world: World) -> None:
    for user in APPROVERS + ADMINS:
        world.slack.set_person(user)


def test_seventy_new_people_at_350_ms_each_are_refused_not_saved_late(
    carol: World, s3: Any, bucket: str
) -> None:
    """The issue's save: 70 new people, each ``users.info`` answered 350 ms late, took 3.56 s
    and saved after Slack had given up. Asked at once (``MAX_AT_ONCE``) within the budget,
    they cannot all be answered in time (the saver, then at least ceil(70 / 16) rounds of 350
    ms each): the modal says it could not check, nothing is saved, and the lookups whose turn
    came after the budget were never sent."""
    with_people(carol)
    form = open_settings(carol, "U0CAROL")
    assert form is not None
    before = len(carol.slack.calls_to("users.info"))
    carol.slack.delay_next("users.info", LATE, times=1 + len(APPROVERS) + len(ADMINS))
    answer = save(carol, "U0CAROL", form, approvers=users(*APPROVERS), admins=users(*ADMINS))
    assert answer["response_action"] == "errors"
    assert answer["errors"] == {"approvers": PEOPLE_DOWN, "admins": PEOPLE_DOWN}
    assert saved(s3, bucket) is None
    # Each worker begins a call only before the deadline, and each call lasts at least LATE
    # (the first after the saver's): at most this many were ever sent.
    rounds = math.ceil((CHECK_SECONDS - LATE) / LATE)
    sent = len(carol.slack.calls_to("users.info")) - before
    assert sent <= 1 + MAX_AT_ONCE * rounds < 1 + len(APPROVERS) + len(ADMINS)


def test_a_users_info_that_times_out_is_said_in_the_modal_not_a_500(
    carol: World, s3: Any, bucket: str
) -> None:
    """``users.info`` for the person saving answered after 2.5 s, later than the ack client's
    2-second timeout (which raised past the handler: a 500): the budget ends first, and the
    modal says it could not check with Slack."""
    form = open_settings(carol, "U0CAROL")
    assert form is not None
    carol.slack.delay_next("users.info", 2.5)
    answer = save(carol, "U0CAROL", form, rounds=option("2"))
    assert answer == {"response_action": "errors", "errors": {"approvers": SLACK_DOWN}}
    assert saved(s3, bucket) is None


@pytest.mark.parametrize(
    ("method", "after", "said"),
    [
        ("users.info", 0, {"approvers": SLACK_DOWN}),  # the person saving
        ("users.info", 1, {"admins": PEOPLE_DOWN}),  # a household admin newly named
        ("conversations.info", 0, {"weekly_channel": SLACK_DOWN}),  # is the bot in it
    ],
)
def test_a_dropped_connection_is_said_under_its_field_and_nothing_is_saved(
    carol: World, s3: Any, bucket: str, method: str, after: int, said: dict[str, str]
) -> None:
    """A connection reset on the way to Slack is no ``SlackApiError`` (the client raises its
    own error): every failure of a call is "couldn't check", under the field it was for."""
    with_scheduler(carol)
    carol.slack.set_person("U0DAVE")
    form = open_settings(carol, "U0CAROL")
    assert form is not None
    carol.slack.delay_next(method, 0, times=after)  # (the calls before it: as usual)
    carol.slack.delay_next(method, 0, drop=True)
    answer = save(
        carol,
        "U0CAROL",
        form,
        admins=users("U0DAVE"),
        weekly_day=option("sat"),
        weekly_channel={"selected_conversation": CHANNEL},
        weekly_request=text("the usual"),
    )
    assert answer == {"response_action": "errors", "errors": said}
    assert saved(s3, bucket) is None
