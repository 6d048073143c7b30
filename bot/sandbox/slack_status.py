"""A thread's status line, as ``assistant.threads.setStatus`` sets it ("weekly-shop is writing the
basket…" under the thread), refusing what Slack refuses.

What Slack documents (docs.slack.dev, assistant.threads.setStatus; its error table as mirrored in
``smstoslack/slack_kit`` ``priv/docs/methods/assistant.threads.setStatus.json``; scope
``chat:write`` since 2026-03, ``../shared/TRAPS.md``), and this fake does:

- ``status`` is required; "Sending an empty string in the status field will also clear the
  status indicator"; up to 10 ``loading_messages`` ("Maximum of 10 messages");
- "A two minute timeout applies, which will cause the status to be removed if no message has
  been sent": a status is gone 120 s (the fake's ``wall`` clock) after it was set;
- "The status will be automatically cleared when the app sends a reply": a reply the app posts
  in that thread (``chat.postMessage`` with ``thread_ts``, a ``response_url`` reply in it, or the
  start of a stream there, ``slack_streams``) clears it;
- an unknown channel, or one the bot is not in: ``channel_not_found`` (the only channel error the
  table names); a ``thread_ts`` that is no message of the channel: ``invalid_thread_ts``.

Where the docs are silent, the stricter choice: more than 10 loading messages, a missing
``status`` or ``loading_messages`` that are not a list of strings are ``invalid_arguments``.

Every change is recorded (:class:`StatusChange`: set, cleared, reply, expired, with the ``wall``
time), for the tests and ``bench/``; :meth:`Statuses.messages` shows a live status on the
thread's parent as ``assistant_status`` (what the sandbox page draws under the thread; Slack's
own ``conversations.history`` has no such field).
"""

from __future__ import annotations

import contextlib
import json
from dataclasses import dataclass
from typing import Any

from .slack_channels import Channel, Channels, Reject

STATUS_SECONDS = 120.0  # "A two minute timeout applies"
LOADING_MESSAGES = 10  # "Maximum of 10 messages"


@dataclass(frozen=True)
class StatusChange:
    """What happened to a thread's status, and when (``wall``): ``why`` is "set" (a non-empty
    status), "cleared" (an empty one), "reply" (the app replied in the thread) or "expired"."""

    at: float
    why: str
    status: str = ""
    loading_messages: tuple[str, ...] = ()


class Statuses(Channels):
    """The status line of each thread; mixed into ``SlackWorkspace``."""

    @property
    def status_records(self) -> dict[tuple[str, str], list[StatusChange]]:
        found: dict[tuple[str, str], list[StatusChange]] | None = getattr(self, "_statuses", None)
        if found is None:
            found = {}
            self._statuses: dict[tuple[str, str], list[StatusChange]] = found
        return found

    def thread_status(self, channel: str, thread_ts: str) -> StatusChange | None:
        """The status shown under thread ``thread_ts`` now, if any."""
        with self._lock:
            history = self._settled(channel, thread_ts)
            return history[-1] if history and history[-1].why == "set" else None

    def status_history(self, channel: str, thread_ts: str) -> list[StatusChange]:
        """Every change of the thread's status, oldest first (an expiry once it has happened)."""
        with self._lock:
            return list(self._settled(channel, thread_ts))

    def messages(self, channel: str) -> list[dict[str, Any]]:
        """As :meth:`Channels.messages`, with a thread's live status on its parent."""
        found = super().messages(channel)
        for msg in found:
            live = self.thread_status(channel, msg["ts"])
            if live is not None:
                msg["assistant_status"] = {
                    "status": live.status,
                    "loading_messages": list(live.loading_messages),
                }
        return found

    # ------------------------------------------------------------ the Web API method

    def m_assistant_threads_setStatus(self, args: dict[str, Any]) -> dict[str, Any]:
        cid = str(args.get("channel_id") or "")
        channel = self._channels.get(cid)
        if channel is None or self.user_id not in channel.members:
            raise Reject("channel_not_found")
        thread_ts = str(args.get("thread_ts") or "")
        if not any(m["ts"] == thread_ts for m in channel.messages):
            raise Reject("invalid_thread_ts")
        status, loading = args.get("status"), args.get("loading_messages") or []
        if isinstance(loading, str):
            with contextlib.suppress(ValueError):
                loading = json.loads(loading)
        if not isinstance(status, str) or not isinstance(loading, list):
            raise Reject("invalid_arguments")
        if len(loading) > LOADING_MESSAGES or not all(isinstance(m, str) for m in loading):
            raise Reject("invalid_arguments")
        history = self.status_records.setdefault((cid, thread_ts), self._settled(cid, thread_ts))
        if status:
            history.append(StatusChange(self.wall(), "set", status, tuple(loading)))
        elif history and history[-1].why == "set":
            history.append(StatusChange(self.wall(), "cleared"))
        return {}

    # ------------------------------------------------------------ inside

    def _settled(self, channel: str, thread_ts: str) -> list[StatusChange]:
        """The thread's history, with the expiry of a status older than two minutes added."""
        history = self.status_records.get((channel, thread_ts), [])
        last = history[-1] if history else None
        if last is not None and last.why == "set" and self.wall() - last.at >= STATUS_SECONDS:
            history.append(StatusChange(last.at + STATUS_SECONDS, "expired"))
        return history

    def _replied(self, channel: str, thread_ts: str) -> None:
        """The app replied in the thread: Slack clears its status."""
        history = self._settled(channel, thread_ts)
        if history and history[-1].why == "set":
            history.append(StatusChange(self.wall(), "reply"))

    def _post(self, channel: Channel, args: dict[str, Any]) -> dict[str, Any]:
        msg = super()._post(channel, args)
        if msg.get("thread_ts"):
            cid = next((k for k, c in self._channels.items() if c is channel), "")
            self._replied(cid, str(msg["thread_ts"]))
        return msg
