"""Streamed messages as Slack keeps them: ``chat.startStream``, ``chat.appendStream`` and
``chat.stopStream``, refusing what Slack refuses.

A stream is a reply in a thread that grows while the app appends to it, then is stopped and stays
as an ordinary reply. Each stream is recorded (:class:`Stream`): every chunk in order with the
fake's ``wall`` time of the call that brought it, and its state, for the tests and ``bench/``.

What Slack documents, and this fake does (docs.slack.dev method pages ``chat.startStream``,
``chat.appendStream``, ``chat.stopStream``, their error tables as mirrored in
``smstoslack/slack_kit`` ``priv/docs/methods/chat.*Stream.json``; python-slack-sdk 3.48
``slack_sdk/web/chat_stream.py`` and ``models/messages/chunk.py``):

- In a channel (anything but a DM, ``D…``) a stream needs ``recipient_user_id`` and
  ``recipient_team_id`` ("Required when streaming to channels"): ``missing_recipient_user_id``,
  ``missing_recipient_team_id``. A recipient who is not in the workspace is ``user_not_found``,
  a team that is not this workspace ``team_not_found``.
- The bot not in the channel: ``not_in_channel`` / ``channel_not_found``, as chat.postMessage.
- ``markdown_text`` (and a ``markdown_text`` chunk's ``text``) is limited to 12,000 characters
  ("Limit this field to 12,000 characters"). The tables name no error for it; ``msg_too_long`` is
  what streaming apps report for an over-long append (CopilotKit/CopilotKit issue 6063, PRs
  6064, 6244).
- ``chunks`` are ``markdown_text`` (``text``), ``task_update`` (``id``, ``title``, ``status`` one of
  pending, in_progress, complete, error), ``plan_update`` (``title``) or ``blocks`` (``blocks``);
  anything else is ``invalid_chunks``. Both ``markdown_text`` and ``chunks`` in one call is
  ``cannot_provide_both_markdown_text_and_chunks``; an append with neither is
  ``markdown_text_or_chunks_required``; a stream started with one and continued with the other
  is ``streaming_mode_mismatch`` (a stream started with neither takes its mode from the first call
  that brings content; python-slack-sdk's ``ChatStream`` always sends ``chunks``, and its
  ``stop()`` an empty ``chunks`` list, which is no content).
- Appending to, or stopping, a message that is not streaming (stopped, or never a stream):
  ``message_not_in_streaming_state``; a ``ts`` that is no message: ``message_not_found``;
  appending after the person pressed Stop (:meth:`Streams.end_stream`): ``stopped_by_user``.
- ``chat.stopStream``'s ``blocks`` are "rendered at the bottom of the finalized message", at most
  50 (``msg_blocks_too_many``), each checked as a message's (``bot.sandbox.block_kit``).

Where the docs are silent, the stricter choice: a ``thread_ts`` that is no message of the channel
is ``invalid_thread_ts`` (the code ``assistant.threads.setStatus`` uses), a missing ``thread_ts``
``invalid_arguments`` (the SDK makes it required), and the start of a stream, a reply, clears the
thread's status (``slack_status``), and the 12,000 characters hold for the whole message too: an
append that takes the streamed markdown past them is ``msg_too_long`` (observed live: "11,977 of
15,668 chars posted", CopilotKit/CopilotKit issue 6063). Not played by itself: a stream's
lifetime (apps report Slack ending one about 5 minutes after it started, undocumented; a test
ends one with :meth:`Streams.end_stream`).

The message, while streaming: ``text`` the markdown so far, ``streaming: True``, ``blocks`` a
``markdown`` block of that text then the ``blocks`` chunks; stopped: the same without
``streaming``, the stop's blocks last, and its ``metadata`` if given.
"""

from __future__ import annotations

import contextlib
import copy
import json
from dataclasses import dataclass, field
from typing import Any

from .block_kit import message_errors
from .slack_channels import Channels, Reject

MARKDOWN_LIMIT = 12_000  # characters in one call's markdown_text, or one markdown_text chunk
STOP_BLOCKS = 50  # chat.stopStream's own blocks, besides those sent as chunks
TASK_STATUSES = ("pending", "in_progress", "complete", "error")
# docs.slack.dev, chat.startStream: "Acceptable values: timeline plan" (the newer error tables of
# smstoslack/slack_kit add "dense"); anything else is refused (invalid_arguments: docs silent).
DISPLAY_MODES = ("timeline", "plan", "dense")
# Each method's documented rate limit, calls a minute per workspace (the method pages' "Rate
# Limits": startStream and stopStream Tier 2 "20+ per minute", appendStream Tier 4 "100+ per
# minute"; assistant.threads.setStatus "Special rate limits apply", no figure), for bench/ to
# hold a household's bursts against. The fake does not throttle by itself (``fail_next`` does).
PER_MINUTE = {"chat.startStream": 20, "chat.appendStream": 100, "chat.stopStream": 20}
_CHUNK_FIELDS = {
    "markdown_text": ("text",),
    "task_update": ("id", "title", "status"),
    "plan_update": ("title",),
    "blocks": ("blocks",),
}


@dataclass(frozen=True)
class StreamCall:
    """One call that brought content to a stream: which method, when (the fake's ``wall``), and
    its chunks (``markdown_text`` given as an argument is recorded as a ``markdown_text`` chunk)."""

    method: str
    at: float
    chunks: list[dict[str, Any]]


@dataclass
class Stream:
    channel: str
    ts: str
    thread_ts: str
    recipient_user_id: str | None
    recipient_team_id: str | None
    task_display_mode: str
    mode: str | None  # "markdown_text" or "chunks", once a call brought content
    state: str = "streaming"  # then "stopped", "stopped_by_user" or "expired"
    ended_at: float | None = None  # the fake's wall time when it stopped (or Slack ended it)
    calls: list[StreamCall] = field(default_factory=list)

    @property
    def chunks(self) -> list[dict[str, Any]]:
        """Every chunk, in the order Slack received them."""
        return [c for call in self.calls for c in call.chunks]

    @property
    def text(self) -> str:
        """The markdown streamed so far."""
        return "".join(c["text"] for c in self.chunks if c["type"] == "markdown_text")


class Streams(Channels):
    """A workspace's streamed messages; mixed into ``SlackWorkspace``."""

    @property
    def stream_records(self) -> dict[tuple[str, str], Stream]:
        found: dict[tuple[str, str], Stream] | None = getattr(self, "_streams", None)
        if found is None:
            found = {}
            self._streams: dict[tuple[str, str], Stream] = found
        return found

    def streams(self, channel: str | None = None) -> list[Stream]:
        """Every stream (of ``channel``, if given), oldest first, as copies."""
        with self._lock:
            found = [s for s in self.stream_records.values() if channel in (None, s.channel)]
            return copy.deepcopy(found)

    def stream(self, channel: str, ts: str) -> Stream | None:
        with self._lock:
            found = self.stream_records.get((channel, ts))
            return copy.deepcopy(found) if found else None

    def end_stream(self, channel: str, ts: str, how: str = "expired") -> None:
        """Slack ends a stream the app did not stop: ``expired`` (apps report streams ending
        about 5 minutes after they started; later calls are ``message_not_in_streaming_state``)
        or ``stopped_by_user`` (the person pressed Stop: an append is ``stopped_by_user``,
        "no further appends are accepted", chat.appendStream's error table). The message stays
        with what was streamed."""
        with self._lock:
            stream = self.stream_records[(channel, ts)]
            stream.state, stream.ended_at = how, self.wall()
            self._find(channel, ts).pop("streaming", None)
        self._changed()

    # ------------------------------------------------------------ the Web API methods

    def m_chat_startStream(self, args: dict[str, Any]) -> dict[str, Any]:
        cid = str(args.get("channel") or "")
        channel = self._bot_channel(cid)
        thread_ts = str(args.get("thread_ts") or "")
        if not thread_ts:
            raise Reject("invalid_arguments")
        if not cid.startswith("D"):
            self._recipient(args)
        if not any(m["ts"] == thread_ts for m in channel.messages):
            raise Reject("invalid_thread_ts")
        if str(args.get("task_display_mode") or "timeline") not in DISPLAY_MODES:
            raise Reject("invalid_arguments")
        mode, chunks = self._content(args, "", None)
        ts = self._next_ts()
        stream = Stream(
            cid,
            ts,
            thread_ts,
            args.get("recipient_user_id"),
            args.get("recipient_team_id"),
            str(args.get("task_display_mode") or "timeline"),
            mode,
        )
        stream.calls.append(StreamCall("chat.startStream", self.wall(), chunks))
        msg: dict[str, Any] = {"type": "message", "user": self.user_id, "bot_id": self.bot_id}
        msg.update(ts=ts, thread_ts=thread_ts, streaming=True)
        channel.messages.append(msg)
        self.stream_records[(cid, ts)] = stream
        self._render(stream, msg, [])
        self._replied(cid, thread_ts)
        return {"channel": cid, "ts": ts}

    def m_chat_appendStream(self, args: dict[str, Any]) -> dict[str, Any]:
        stream, msg = self._streaming(args, "append")
        mode, chunks = self._content(args, stream.text, stream.mode)
        if not chunks:
            raise Reject("markdown_text_or_chunks_required")
        stream.mode = mode
        stream.calls.append(StreamCall("chat.appendStream", self.wall(), chunks))
        self._render(stream, msg, [])
        return {"channel": stream.channel, "ts": stream.ts}

    def m_chat_stopStream(self, args: dict[str, Any]) -> dict[str, Any]:
        stream, msg = self._streaming(args, "stop")
        mode, chunks = self._content(args, stream.text, stream.mode)
        blocks = args.get("blocks") or []
        if isinstance(blocks, str):
            with contextlib.suppress(ValueError):
                blocks = json.loads(blocks)
        if not isinstance(blocks, list):
            raise Reject("invalid_blocks")
        if len(blocks) > STOP_BLOCKS:
            raise Reject("msg_blocks_too_many")
        problem = message_errors({"blocks": blocks})
        if problem is not None:
            raise Reject(*problem)
        stream.mode = mode
        if chunks:
            stream.calls.append(StreamCall("chat.stopStream", self.wall(), chunks))
        stream.state, stream.ended_at = "stopped", self.wall()
        msg.pop("streaming", None)
        if args.get("metadata"):
            msg["metadata"] = args["metadata"]
        self._render(stream, msg, blocks)
        return {"channel": stream.channel, "ts": stream.ts, "message": copy.deepcopy(msg)}

    # ------------------------------------------------------------ inside

    def _recipient(self, args: dict[str, Any]) -> None:
        """A channel stream's recipient: both IDs, of someone in this workspace."""
        user, team = args.get("recipient_user_id"), args.get("recipient_team_id")
        if not user:
            raise Reject("missing_recipient_user_id")
        if not team:
            raise Reject("missing_recipient_team_id")
        if team != self.team_id:
            raise Reject("team_not_found")
        if not any(user in c.members for c in self._channels.values()):
            raise Reject("user_not_found")

    def _streaming(self, args: dict[str, Any], method: str) -> tuple[Stream, dict[str, Any]]:
        """The stream ``args`` name, if it is still streaming; else what Slack answers."""
        cid = str(args.get("channel") or "")
        self._bot_channel(cid)
        msg = self._find(cid, str(args.get("ts") or ""))
        stream = self.stream_records.get((cid, msg["ts"]))
        if stream is not None and stream.state == "stopped_by_user" and method == "append":
            raise Reject("stopped_by_user")
        if stream is None or stream.state != "streaming":
            raise Reject("message_not_in_streaming_state")
        return stream, msg

    def _content(
        self, args: dict[str, Any], so_far: str, mode: str | None
    ) -> tuple[str | None, list[dict[str, Any]]]:
        """The call's content as chunks, and the stream's mode after it (``so_far``: the
        markdown streamed before it); Reject if refused."""
        text, chunks = args.get("markdown_text"), args.get("chunks")
        if isinstance(chunks, str):
            with contextlib.suppress(ValueError):
                chunks = json.loads(chunks)
        if text is not None and chunks is not None:
            raise Reject("cannot_provide_both_markdown_text_and_chunks")
        if text is not None:
            found: list[dict[str, Any]] = [{"type": "markdown_text", "text": str(text)}]
            given = "markdown_text"
        elif chunks is not None:
            found = _checked_chunks(chunks)
            given = "chunks"
        else:
            return mode, []
        added = [c["text"] for c in found if c["type"] == "markdown_text"]
        if (
            any(len(t) > MARKDOWN_LIMIT for t in added)
            or len(so_far + "".join(added)) > MARKDOWN_LIMIT
        ):
            raise Reject("msg_too_long")
        if not found:
            return mode, []
        if mode is not None and given != mode:
            raise Reject("streaming_mode_mismatch")
        return given, found

    def _render(self, stream: Stream, msg: dict[str, Any], stop_blocks: list[Any]) -> None:
        """The message as Slack shows it: the markdown so far, then block chunks, then (once
        stopped) the stop's blocks."""
        text = stream.text
        blocks: list[Any] = [{"type": "markdown", "text": text}] if text else []
        blocks += [b for c in stream.chunks if c["type"] == "blocks" for b in c["blocks"]]
        msg.update(text=text, blocks=blocks + list(stop_blocks))


def _checked_chunks(chunks: Any) -> list[dict[str, Any]]:
    """``chunks`` as Slack takes them: each of a known type with its required fields."""
    if not isinstance(chunks, list):
        raise Reject("invalid_chunks")
    for chunk in chunks:
        kind = chunk.get("type") if isinstance(chunk, dict) else None
        if kind not in _CHUNK_FIELDS or any(chunk.get(f) is None for f in _CHUNK_FIELDS[kind]):
            raise Reject("invalid_chunks")
        if kind == "markdown_text" and not isinstance(chunk["text"], str):
            raise Reject("invalid_chunks")
        if kind == "task_update" and chunk["status"] not in TASK_STATUSES:
            raise Reject("invalid_chunks")
        if kind == "blocks":
            problem = message_errors({"blocks": chunk["blocks"]})
            if problem is not None:
                raise Reject(*problem)
    return [dict(c) for c in chunks]
