"""``/shop`` where the bot may not post: the person is told how to fix it, nothing is started.

Slack (docs.slack.dev, chat.postMessage and conversations.info): a bot posting in a public
channel it was never added to gets ``not_in_channel``; a private channel or a DM it is not in does
not exist for it (``channel_not_found``). A slash command's ``response_url`` works wherever the
command was typed. The fake Web API answers exactly so.
"""

from __future__ import annotations

from typing import Any

import pytest

from bot.steps.start import cannot_post_here
from tests.bot_kit import PEOPLE, World, objects

ADD_ME = "I can't post in this channel: add me with `/invite @weekly-shop`, then try again."


def replies_to_commands(world: World) -> list[str]:
    """What reached people through slash commands' response_urls."""
    return [str(r.body.get("text")) for r in world.slack.responses if "/commands/" in r.path]


@pytest.mark.parametrize(
    ("channel", "private"),
    [("C0GARDEN", False), ("C0SECRET", True), ("D0ALICEBOB", True)],
    ids=["public channel the bot was never added to", "private channel", "DM between people"],
)
def test_shop_where_the_bot_cannot_post_says_so_and_starts_nothing(
    world: World, s3: Any, bucket: str, channel: str, private: bool
) -> None:
    world.slack.add_channel(channel, members=PEOPLE, bot=False, private=private)
    ack = world.shop(channel_id=channel)
    assert ack["statusCode"] == 200
    world.run_lazies()
    assert replies_to_commands(world) == [cannot_post_here(channel)]
    # A new ephemeral, never in place of the ack ("Writing your basket…"): the person sees
    # both (issue 20). Posted to a response_url, a message may replace the one it answers
    # unless replace_original is false (botkit#446, Netflix/dispatch#2865).
    (said,) = [r.body for r in world.slack.responses if "/commands/" in r.path]
    assert said["replace_original"] is False and said["response_type"] == "ephemeral"
    assert world.claude.message_calls == 0  # no model call spent on it
    assert objects(s3, bucket) == {}  # no session, no lock
    assert world.slack.messages(channel) == []


def test_the_advice_fits_where_it_was_typed() -> None:
    assert cannot_post_here("C0GARDEN") == ADD_ME
    assert "in a channel" in cannot_post_here("D0ALICEBOB")


def test_after_an_invite_the_same_shop_works(world: World, s3: Any, bucket: str) -> None:
    world.slack.add_channel("C0GARDEN", members=PEOPLE, bot=False)
    world.shop(channel_id="C0GARDEN")
    world.run_lazies()
    world.slack.join("C0GARDEN", world.slack.user_id)  # /invite @weekly-shop
    world.shop(channel_id="C0GARDEN")
    world.run_lazies()
    assert [m for m in world.slack.messages("C0GARDEN") if m.get("blocks")]
    assert world.claude.message_calls == 1


def test_a_bot_removed_before_the_basket_is_posted_still_tells_the_person(world: World) -> None:
    """The check passed, then the bot was removed: the basket cannot be posted, and the person
    hears it through the response_url instead of silence."""
    # every post refused: the draft's, the basket's, and the notice in the channel
    world.slack.fail_next("chat.postMessage", error="not_in_channel", times=3)
    world.shop()
    world.run_lazies()
    assert world.baskets() == []
    assert replies_to_commands(world) == [
        "<@U0ALICE> Your basket is written but I couldn't post it. Try /shop again."
    ]
