"""The fake Messages API's ``"stream": true``, through the real anthropic SDK (2.17).

Facts these tests hold the fake to (sources in ``bot/sandbox/anthropic_stream.py``):
the documented event order (message_start with empty content, per block start / deltas / stop,
message_delta with the stop reason and cumulative usage, message_stop; a ping after the first
block start, as the docs' examples show); a tool's input as ``input_json_delta`` pieces that join
into the input, fine-grained with ``eager_input_streaming`` (GA, no beta header needed) and one
whole key and value at a time without it; a mid-stream ``overloaded_error`` event, which the SDK
raises as ``APIStatusError`` with status 200 and no retry; a dropped connection, which it raises
as ``APIConnectionError``; and errors decided before the stream (a bad key, a bad request, a 529)
answered as JSON with their status, before any event. Ordering is asserted, never durations.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import Iterator
from typing import Any

import anthropic
import pytest

from bot.sandbox.anthropic_api import FakeAnthropic, Reply
from bot.sandbox.anthropic_stream import FINE_GRAINED_BETA
from workflow.shop.shopper import TOOL_CHOICE, TOOLS

WEEK = "\n".join(f"{n + 1} packs of item number {n}" for n in range(17))  # a 17-item basket
EAGER = [{**tool, "eager_input_streaming": True} for tool in TOOLS]
UNSAID = [{k: v for k, v in tool.items() if k != "eager_input_streaming"} for tool in TOOLS]


def request(tools: list[dict[str, Any]] = EAGER, **more: Any) -> dict[str, Any]:
    return {
        "model": "claude-haiku-5-5",
        "max_tokens": 4096,
        "messages": [{"role": "user", "content": "Write this week's basket."}],
        "tools": tools,
        "tool_choice": TOOL_CHOICE,
        **more,
    }


@pytest.fixture
def fake() -> Iterator[FakeAnthropic]:
    with FakeAnthropic() as running:
        yield running


def client(fake: FakeAnthropic, **options: Any) -> anthropic.Anthropic:
    return anthropic.Anthropic(base_url=fake.url, api_key=fake.api_key, **options)


def pieces(fake: FakeAnthropic, index: int = -1) -> list[str]:
    """The ``partial_json`` pieces the fake wrote in a stream, in order."""
    return [
        sent.data["delta"]["partial_json"]
        for sent in fake.streams[index]
        if sent.event == "content_block_delta" and sent.data["delta"]["type"] == "input_json_delta"
    ]


def test_a_streamed_answer_comes_as_the_documented_events_in_order(fake: FakeAnthropic) -> None:
    fake.script(Reply(text=WEEK))
    seen = [event.type for event in client(fake).messages.create(**request(), stream=True)]
    assert seen[:2] == ["message_start", "content_block_start"]
    assert seen[-3:] == ["content_block_stop", "message_delta", "message_stop"]
    assert set(seen[2:-3]) == {"content_block_delta"}  # the SDK drops pings
    written = fake.streams[0]
    assert [sent.event for sent in written[:3]] == ["message_start", "content_block_start", "ping"]
    start = written[0].data["message"]
    assert (start["content"], start["stop_reason"]) == ([], None)
    assert start["usage"] == {**fake.usages[0], "output_tokens": 1}  # the usage so far
    block = written[1].data["content_block"]
    assert (block["type"], block["name"], block["input"]) == ("tool_use", "submit_basket", {})
    delta = written[-2].data
    assert delta["delta"]["stop_reason"] == "tool_use"
    assert delta["usage"] == fake.usages[0]  # cumulative: the whole answer's usage
    assert all(sent.data["type"] == sent.event for sent in written)


def test_the_streamed_tool_input_joins_into_the_plain_answer_s_input(fake: FakeAnthropic) -> None:
    """Fine-grained: more than one piece for 17 items, and not every piece ends on an item."""
    fake.script(Reply(text=WEEK), Reply(text=WEEK))
    plain = client(fake).messages.create(**request())
    with client(fake).messages.stream(**request()) as stream:
        final = stream.get_final_message()
    cut = pieces(fake)
    assert len(cut) > 17
    assert json.loads("".join(cut)) == plain.content[0].input == final.content[0].input
    assert len(final.content[0].input["items"]) == 17
    assert any(not piece.endswith(("}", "}, ", "]")) for piece in cut)


def test_the_final_message_equals_the_plain_one() -> None:
    """Content (a text preamble and the call), stop reason and usage, from fakes in one state."""
    scripted = Reply(text=WEEK, preamble="Here is your basket:")
    with FakeAnthropic() as one, FakeAnthropic() as other:
        one.script(scripted)
        other.script(scripted)
        plain = client(one).messages.create(**request())
        with client(other).messages.stream(**request()) as stream:
            texts = list(stream.text_stream)
            final = stream.get_final_message()
    assert "".join(texts) == "Here is your basket:" and len(texts) == 1
    shown = [block.model_dump(exclude={"id", "parsed_output"}) for block in final.content]
    assert shown == [block.model_dump(exclude={"id"}) for block in plain.content]
    assert (final.stop_reason, final.usage) == (plain.stop_reason, plain.usage)
    assert [sent.data["index"] for sent in other.streams[0] if "index" in sent.data][-1] == 1


def test_without_eager_streaming_the_input_comes_one_whole_key_at_a_time(
    fake: FakeAnthropic,
) -> None:
    """As the API buffers it: an empty piece, ``{"items": [...]`` whole, then ``}``; the beta
    header turns fine-grained on for a tool that does not say, never for one that says false."""
    sdk = client(fake)
    list(sdk.messages.create(**request(UNSAID), stream=True))
    assert pieces(fake)[0] == "" and pieces(fake)[2] == "}" and len(pieces(fake)) == 3
    plain = sdk.messages.create(**request(UNSAID)).content[0]
    assert json.loads(pieces(fake, 0)[1] + "}") == plain.input
    beta = {"anthropic-beta": FINE_GRAINED_BETA}
    list(sdk.messages.create(**request(UNSAID), stream=True, extra_headers=beta))
    assert len(pieces(fake)) > 3
    refused = [{**tool, "eager_input_streaming": False} for tool in TOOLS]
    list(sdk.messages.create(**request(refused), stream=True, extra_headers=beta))
    assert len(pieces(fake)) == 3


def test_an_error_event_mid_stream_raises_api_status_error_without_a_retry(
    fake: FakeAnthropic,
) -> None:
    fake.script(Reply(text=WEEK, break_after=4))
    with (
        pytest.raises(anthropic.APIStatusError) as raised,
        client(fake).messages.stream(**request()) as stream,
    ):
        stream.until_done()
    assert type(raised.value) is anthropic.APIStatusError and raised.value.status_code == 200
    assert raised.value.body == {
        "type": "error",
        "error": {"type": "overloaded_error", "message": "Overloaded"},
    }
    written = [sent.event for sent in fake.streams[0]]
    assert written[-1] == "error" and written.count("content_block_delta") == 4
    assert fake.message_calls == 1


def test_a_dropped_stream_raises_api_connection_error(fake: FakeAnthropic) -> None:
    fake.script(Reply(text=WEEK, break_after=2, break_with="drop"))
    got: list[str] = []
    with (
        pytest.raises(anthropic.APIConnectionError, match="incomplete chunked read"),
        client(fake).messages.stream(**request()) as stream,
    ):
        got.extend(event.type for event in stream)
    assert got.count("content_block_delta") == 2 and "message_stop" not in got
    assert [sent.event for sent in fake.streams[0]][-1] == "content_block_delta"
    assert fake.message_calls == 1


def test_a_streamed_request_is_refused_before_any_event_as_a_plain_one_is(
    fake: FakeAnthropic,
) -> None:
    wrong = anthropic.Anthropic(base_url=fake.url, api_key="sk-ant-wrong", max_retries=0)
    with pytest.raises(anthropic.AuthenticationError), wrong.messages.stream(**request()):
        pass
    sdk = client(fake, max_retries=0)
    with pytest.raises(anthropic.BadRequestError, match="max_tokens"):
        sdk.messages.create(**request(max_tokens=0), stream=True)
    with pytest.raises(anthropic.BadRequestError, match="stream"):
        sdk.messages.create(**request(), extra_body={"stream": "yes"})
    fake.script(Reply(status=529))
    with pytest.raises(anthropic.OverloadedError):
        sdk.messages.create(**request(), stream=True)
    assert fake.streams == [] and fake.message_calls == 4


def test_with_the_speed_model_the_pieces_are_written_one_after_another() -> None:
    """Same tokens as a plain answer; each event written no earlier than the one before, the
    first piece before the last."""
    with FakeAnthropic(speed=4000, base_latency=0.01) as fake:
        fake.script(Reply(text=WEEK), Reply(text=WEEK))
        plain = client(fake).messages.create(**request())
        with client(fake).messages.stream(**request()) as stream:
            final = stream.get_final_message()
        times = [sent.at for sent in fake.streams[0]]
        deltas = [sent.at for sent in fake.streams[0] if sent.event == "content_block_delta"]
    assert final.usage.output_tokens == plain.usage.output_tokens != Reply().output_tokens
    assert times == sorted(times) and deltas[0] < deltas[-1]


def test_the_prompt_cache_counts_a_streamed_request_as_a_plain_one() -> None:
    cached = [{"type": "text", "text": "x " * 3000, "cache_control": {"type": "ephemeral"}}]
    with FakeAnthropic() as plain_fake, FakeAnthropic() as streamed_fake:
        plain, streamed = [], []
        for _ in range(2):
            plain.append(client(plain_fake).messages.create(**request(system=cached)).usage)
            with client(streamed_fake).messages.stream(**request(system=cached)) as stream:
                streamed.append(stream.get_final_message().usage)
    assert plain == streamed
    assert streamed[0].cache_creation_input_tokens and streamed[1].cache_read_input_tokens


def test_the_async_client_streams_too(fake: FakeAnthropic) -> None:
    """The shopper's client is ``AsyncAnthropic``."""

    async def read() -> tuple[int, dict[str, Any]]:
        sdk = anthropic.AsyncAnthropic(base_url=fake.url, api_key=fake.api_key)
        async with sdk.messages.stream(**request()) as stream:
            count = sum([1 async for event in stream if event.type == "input_json"])
            final = await stream.get_final_message()
        return count, final.content[0].input

    fake.script(Reply(text=WEEK))
    count, given = asyncio.run(read())
    assert count == len(pieces(fake)) > 1 and len(given["items"]) == 17


def test_a_stream_that_starts_later_than_the_client_waits_is_its_timeout(
    fake: FakeAnthropic,
) -> None:
    """``Reply.delay`` holds back the headers and the first event, as for a plain answer."""
    fake.script(Reply(text=WEEK, delay=2.0))
    sdk = client(fake, max_retries=0, timeout=0.2)
    with pytest.raises(anthropic.APITimeoutError), sdk.messages.stream(**request()):
        pass
    assert fake.message_calls == 1
