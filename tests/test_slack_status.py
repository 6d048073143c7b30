"""A thread's status line through the real ``slack_sdk.WebClient``, as Slack documents it
(docs.slack.dev, assistant.threads.setStatus): "A two minute timeout applies", "The status will
be automatically cleared when the app sends a reply", "Sending an empty string in the status field
will also clear the status indicator", loading_messages "Maximum of 10 messages" (the error for
more is undocumented: ``invalid_arguments`` here, the stricter choice); its error table (mirrored
in smstoslack/slack_kit ``priv/docs/methods/assistant.threads.setStatus.json``) names
``channel_not_found`` and ``invalid_thread_ts``."""

from __future__ import annotations

from slack_sdk import WebClient

from bot.sandbox.slack_api import FakeSlack
from tests.test_slack_stream import CH, RECIPIENT, Clock, client, parent, refused, slack, wall

__all__ = ["client", "parent", "slack", "wall"]  # the fixtures this file shares


def test_a_status_is_set_cleared_by_a_reply_by_an_empty_status_and_expires(
    slack: FakeSlack, client: WebClient, parent: str, wall: Clock
) -> None:
    set_status = client.assistant_threads_setStatus
    set_status(
        channel_id=CH,
        thread_ts=parent,
        status="is reading your week…",
        loading_messages=["Reading…"],
    )
    live = slack.thread_status(CH, parent)
    assert live is not None and (live.status, live.loading_messages) == (
        "is reading your week…",
        ("Reading…",),
    )
    assert slack.messages(CH)[0]["assistant_status"] == {
        "status": "is reading your week…",
        "loading_messages": ["Reading…"],
    }
    client.chat_postMessage(channel=CH, thread_ts=parent, text="Here it is")
    assert slack.thread_status(CH, parent) is None
    assert "assistant_status" not in slack.messages(CH)[0]
    set_status(channel_id=CH, thread_ts=parent, status="is writing the basket…")
    set_status(channel_id=CH, thread_ts=parent, status="")
    set_status(channel_id=CH, thread_ts=parent, status="is writing: 9 items so far…")
    wall.now += 119
    assert slack.thread_status(CH, parent) is not None
    wall.now += 1
    assert slack.thread_status(CH, parent) is None
    whys = [(c.why, c.at - 1_700_000_000) for c in slack.status_history(CH, parent)]
    assert whys == [
        ("set", 0),
        ("reply", 0),
        ("set", 0),
        ("cleared", 0),
        ("set", 0),
        ("expired", 120),
    ]


def test_starting_a_stream_in_the_thread_clears_its_status(
    slack: FakeSlack, client: WebClient, parent: str
) -> None:
    client.assistant_threads_setStatus(channel_id=CH, thread_ts=parent, status="is thinking…")
    client.chat_startStream(channel=CH, thread_ts=parent, markdown_text="a", **RECIPIENT)
    assert [c.why for c in slack.status_history(CH, parent)] == ["set", "reply"]


def test_a_status_is_refused_where_slack_refuses_it(client: WebClient, parent: str) -> None:
    set_status = client.assistant_threads_setStatus
    assert (
        refused(set_status, channel_id="C0ELSE", thread_ts=parent, status="x")
        == "channel_not_found"
    )
    assert (
        refused(set_status, channel_id="C0NONE", thread_ts=parent, status="x")
        == "channel_not_found"
    )
    assert (
        refused(set_status, channel_id=CH, thread_ts="1.000001", status="x") == "invalid_thread_ts"
    )
    eleven = [f"step {i}" for i in range(11)]
    assert (
        refused(set_status, channel_id=CH, thread_ts=parent, status="x", loading_messages=eleven)
        == "invalid_arguments"
    )
    assert set_status(channel_id=CH, thread_ts=parent, status="x", loading_messages=eleven[:10])[
        "ok"
    ]
