"""The fake Slack streams a reply as Slack documents it, through the real ``slack_sdk.WebClient``
(and its ``chat_stream`` helper, python-slack-sdk 3.48). The status line is
``test_slack_status.py``'s, the page and feedback buttons ``test_slack_stream_page.py``'s.

Facts, with where they come from (each also in ``bot/sandbox/slack_streams.py``):

- docs.slack.dev, chat.startStream: ``recipient_user_id`` / ``recipient_team_id`` "Required when
  streaming to channels"; the error table (mirrored in smstoslack/slack_kit
  ``priv/docs/methods/chat.startStream.json``) names ``missing_recipient_user_id``,
  ``missing_recipient_team_id``, ``not_in_channel``, ``invalid_chunks``, ``user_not_found``,
  ``team_not_found``; ``task_display_mode`` "Acceptable values: timeline plan" (slack_kit adds
  dense);
- chat.appendStream / chat.stopStream tables: ``message_not_in_streaming_state`` ("The message is
  not in the streaming state"), ``stopped_by_user``, ``streaming_mode_mismatch``,
  ``cannot_provide_both_markdown_text_and_chunks``, ``markdown_text_or_chunks_required``,
  ``msg_blocks_too_many`` (50 stop blocks, "rendered at the bottom of the finalized message");
- ``markdown_text``: "Limit this field to 12,000 characters"; no error is named: ``msg_too_long``
  is what streaming apps report, for one call and for the whole message ("11,977 of 15,668
  chars posted", CopilotKit/CopilotKit issue 6063, PRs 6064, 6244);
- ``chat.update`` of a message still streaming: ``streaming_state_conflict``, undocumented,
  measured live by an app's authors (found in public app source).
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest
from slack_sdk import WebClient
from slack_sdk.errors import SlackApiError

from bot.sandbox.slack_api import FakeSlack

TOKEN = "xoxb-test"
CH = "C0SHOP"
RECIPIENT = {"recipient_user_id": "U0A", "recipient_team_id": "T0TEAM"}


class Clock:
    def __init__(self, now: float = 1_700_000_000.0) -> None:
        self.now = now

    def __call__(self) -> float:
        return self.now


@pytest.fixture
def wall() -> Clock:
    return Clock()


@pytest.fixture
def slack(wall: Clock) -> Iterator[FakeSlack]:
    channels = {CH: ("U0A", "U0BOB"), "D0ALICE": ("U0A",)}
    with FakeSlack(token=TOKEN, channels=channels, wall=wall) as fake:
        fake.add_channel("C0ELSE", members=("U0A",), bot=False)
        yield fake


@pytest.fixture
def client(slack: FakeSlack) -> WebClient:
    return WebClient(token=TOKEN, base_url=slack.url)


@pytest.fixture
def parent(client: WebClient) -> str:
    return str(client.chat_postMessage(channel=CH, text="Writing your basket…")["ts"])


def refused(call: Any, **kwargs: Any) -> str:
    with pytest.raises(SlackApiError) as caught:
        call(**kwargs)
    return str(caught.value.response["error"])


def feedback(**over: Any) -> dict[str, Any]:
    button = {"type": "feedback_buttons", "action_id": "basket_feedback"}
    button["positive_button"] = {"text": {"type": "plain_text", "text": "👍"}, "value": "good"}
    button["negative_button"] = {"text": {"type": "plain_text", "text": "👎"}, "value": "bad"}
    return {"type": "context_actions", "elements": [{**button, **over}]}


def test_a_stream_grows_in_the_thread_and_stops_as_an_ordinary_reply(
    slack: FakeSlack, client: WebClient, parent: str, wall: Clock
) -> None:
    started = client.chat_startStream(
        channel=CH, thread_ts=parent, markdown_text="*Produce*\n", **RECIPIENT
    )
    ts = str(started["ts"])
    wall.now += 1
    client.chat_appendStream(channel=CH, ts=ts, markdown_text="- apples\n")
    [growing] = slack.thread(CH, parent)
    assert (growing["ts"], growing["text"], growing["streaming"]) == (
        ts,
        "*Produce*\n- apples\n",
        True,
    )
    wall.now += 1
    stopped = client.chat_stopStream(
        channel=CH,
        ts=ts,
        markdown_text="- pears\n",
        blocks=[feedback()],
        metadata={"event_type": "basket", "event_payload": {}},
    )
    [reply] = slack.thread(CH, parent)
    assert reply == stopped["message"]
    assert "streaming" not in reply and reply["text"] == "*Produce*\n- apples\n- pears\n"
    assert reply["blocks"] == [{"type": "markdown", "text": reply["text"]}, feedback()]
    stream = slack.stream(CH, ts)
    assert stream is not None and stream.state == "stopped" and stream.mode == "markdown_text"
    assert stream.ended_at == 1_700_000_002.0
    assert [(c.method, c.at) for c in stream.calls] == [
        ("chat.startStream", 1_700_000_000.0),
        ("chat.appendStream", 1_700_000_001.0),
        ("chat.stopStream", 1_700_000_002.0),
    ]
    assert [m["ts"] for m in slack.messages(CH)] == [parent]  # a reply, not in the channel


def test_the_sdk_helper_streams_in_chunks_and_stops(
    slack: FakeSlack, client: WebClient, parent: str
) -> None:
    streamer = client.chat_stream(channel=CH, thread_ts=parent, buffer_size=10, **RECIPIENT)
    assert streamer.append(markdown_text="oat ") is None  # buffered by the SDK
    streamer.append(markdown_text="milk, eggs\n")
    streamer.append(
        markdown_text="rice\n",
        chunks=[{"type": "task_update", "id": "t1", "title": "Dairy", "status": "complete"}],
    )
    streamer.stop(blocks=[feedback()])
    [stream] = slack.streams(CH)
    assert stream.mode == "chunks" and stream.state == "stopped"
    assert [c.method for c in stream.calls] == ["chat.startStream", "chat.appendStream"]
    assert stream.text == "oat milk, eggs\nrice\n"
    assert [c["type"] for c in stream.chunks] == ["markdown_text", "markdown_text", "task_update"]
    assert slack.thread(CH, parent)[0]["text"] == "oat milk, eggs\nrice\n"
    assert [c.method for c in slack.calls][-3:] == [
        "chat.startStream",
        "chat.appendStream",
        "chat.stopStream",
    ]


def test_a_stream_in_a_channel_needs_its_recipient(client: WebClient, parent: str) -> None:
    start = client.chat_startStream
    assert refused(start, channel=CH, thread_ts=parent) == "missing_recipient_user_id"
    assert (
        refused(start, channel=CH, thread_ts=parent, recipient_user_id="U0A")
        == "missing_recipient_team_id"
    )
    wrong = {**RECIPIENT, "recipient_team_id": "T0OTHER"}
    assert refused(start, channel=CH, thread_ts=parent, **wrong) == "team_not_found"
    nobody = {**RECIPIENT, "recipient_user_id": "U0NOBODY"}
    assert refused(start, channel=CH, thread_ts=parent, **nobody) == "user_not_found"
    dm = str(client.chat_postMessage(channel="D0ALICE", text="hi")["ts"])
    assert client.chat_startStream(channel="D0ALICE", thread_ts=dm)["ok"]  # a DM needs none


def test_a_stream_starts_only_in_a_thread_of_a_channel_the_bot_is_in(
    client: WebClient, parent: str
) -> None:
    start = client.chat_startStream
    assert refused(start, channel="C0ELSE", thread_ts=parent, **RECIPIENT) == "not_in_channel"
    assert refused(start, channel="C0NONE", thread_ts=parent, **RECIPIENT) == "channel_not_found"
    assert refused(start, channel=CH, thread_ts="1.000001", **RECIPIENT) == "invalid_thread_ts"
    odd = {"task_display_mode": "list", **RECIPIENT}
    assert refused(start, channel=CH, thread_ts=parent, **odd) == "invalid_arguments"
    assert start(channel=CH, thread_ts=parent, task_display_mode="plan", **RECIPIENT)["ok"]


def test_markdown_over_12000_characters_and_unknown_chunks_are_refused(
    slack: FakeSlack, client: WebClient, parent: str
) -> None:
    long = "x" * 12_001
    start = client.chat_startStream
    assert (
        refused(start, channel=CH, thread_ts=parent, markdown_text=long, **RECIPIENT)
        == "msg_too_long"
    )
    odd = [{"type": "image", "url": "https://example.com/a.png"}]
    assert refused(start, channel=CH, thread_ts=parent, chunks=odd, **RECIPIENT) == "invalid_chunks"
    bad_task = [{"type": "task_update", "id": "1", "title": "Dairy", "status": "done"}]
    assert (
        refused(start, channel=CH, thread_ts=parent, chunks=bad_task, **RECIPIENT)
        == "invalid_chunks"
    )
    ts = str(start(channel=CH, thread_ts=parent, markdown_text="x" * 12_000, **RECIPIENT)["ts"])
    assert (
        refused(client.chat_appendStream, channel=CH, ts=ts, markdown_text=long) == "msg_too_long"
    )
    one_more = client.chat_appendStream  # the whole message is held to 12,000 too
    assert refused(one_more, channel=CH, ts=ts, markdown_text="y") == "msg_too_long"
    assert slack.thread(CH, parent)[0]["text"] == "x" * 12_000


def test_appending_needs_a_message_still_streaming_in_its_mode(
    client: WebClient, parent: str
) -> None:
    append, stop = client.chat_appendStream, client.chat_stopStream
    ts = str(
        client.chat_startStream(channel=CH, thread_ts=parent, markdown_text="a", **RECIPIENT)["ts"]
    )
    chunk = [{"type": "markdown_text", "text": "b"}]
    assert refused(append, channel=CH, ts=ts, chunks=chunk) == "streaming_mode_mismatch"
    assert (
        refused(append, channel=CH, ts=ts, markdown_text="b", chunks=chunk)
        == "cannot_provide_both_markdown_text_and_chunks"
    )
    assert refused(append, channel=CH, ts=ts) == "markdown_text_or_chunks_required"
    assert (
        refused(append, channel=CH, ts=parent, markdown_text="b")
        == "message_not_in_streaming_state"
    )
    assert refused(append, channel=CH, ts="1.000001", markdown_text="b") == "message_not_found"
    assert refused(client.chat_update, channel=CH, ts=ts, text="edit") == "streaming_state_conflict"
    stop(channel=CH, ts=ts)
    assert refused(append, channel=CH, ts=ts, markdown_text="b") == "message_not_in_streaming_state"
    assert refused(stop, channel=CH, ts=ts) == "message_not_in_streaming_state"
    assert client.chat_update(channel=CH, ts=ts, text="edited")["ok"]  # an ordinary reply now


def test_a_stream_slack_ended_takes_no_more(
    slack: FakeSlack, client: WebClient, parent: str
) -> None:
    """chat.appendStream's table: ``stopped_by_user`` ("no further appends are accepted") after
    the person pressed Stop; a stream Slack ended itself is ``message_not_in_streaming_state``."""
    start, append = client.chat_startStream, client.chat_appendStream
    by_user = str(start(channel=CH, thread_ts=parent, markdown_text="a", **RECIPIENT)["ts"])
    aged = str(start(channel=CH, thread_ts=parent, markdown_text="b", **RECIPIENT)["ts"])
    slack.end_stream(CH, by_user, "stopped_by_user")
    slack.end_stream(CH, aged)
    assert refused(append, channel=CH, ts=by_user, markdown_text="c") == "stopped_by_user"
    assert (
        refused(client.chat_stopStream, channel=CH, ts=by_user) == "message_not_in_streaming_state"
    )
    assert (
        refused(append, channel=CH, ts=aged, markdown_text="c") == "message_not_in_streaming_state"
    )
    assert [(r["text"], "streaming" in r) for r in slack.thread(CH, parent)] == [
        ("a", False),
        ("b", False),
    ]


def test_stop_blocks_are_checked_as_a_message_s(client: WebClient, parent: str) -> None:
    ts = str(
        client.chat_startStream(channel=CH, thread_ts=parent, markdown_text="a", **RECIPIENT)["ts"]
    )
    many = [{"type": "divider"}] * 51
    assert refused(client.chat_stopStream, channel=CH, ts=ts, blocks=many) == "msg_blocks_too_many"
    six = feedback()
    six["elements"] = six["elements"] * 6
    assert refused(client.chat_stopStream, channel=CH, ts=ts, blocks=[six]) == "invalid_blocks"
    assert client.chat_stopStream(channel=CH, ts=ts, blocks=[{"type": "divider"}] * 50)["ok"]
