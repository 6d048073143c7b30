"""Channels and messages as Slack keeps them for one workspace: who is in each channel, the
messages and threads, ephemerals and ``response_url`` posts, and the ``conversations.*`` and
``chat.*`` methods, refusing what Slack refuses (see ``slack_workspace`` for the list).
:class:`~bot.sandbox.slack_workspace.SlackWorkspace` adds the rest of the workspace: modals,
the Home tab, trigger IDs and the method dispatch.
"""

from __future__ import annotations

import copy
import itertools
import threading
import time
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

from .block_kit import message_errors

RESPONSE_URL_USES = 5  # Slack: a response_url works up to 5 times...
RESPONSE_URL_SECONDS = 30 * 60  # ...within 30 minutes
MESSAGE_METHODS = ("chat.postMessage", "chat.update", "chat.postEphemeral")


class Reject(Exception):
    """Slack said no: ``error`` as it names it, ``errors`` the Block Kit details if any,
    ``extra`` what else the answer says (``missing_scope``'s ``needed`` and ``provided``)."""

    def __init__(
        self, error: str, errors: list[str] | None = None, extra: dict[str, Any] | None = None
    ) -> None:
        super().__init__(error)
        self.error, self.errors, self.extra = error, errors or [], extra or {}


@dataclass(frozen=True)
class Violation:
    method: str
    errors: list[str]


@dataclass
class Channel:
    name: str
    members: set[str]
    private: bool = False
    messages: list[dict[str, Any]] = field(default_factory=list)


class Channels:
    """The channels of one workspace and what was said in them."""

    def __init__(
        self,
        *,
        team_id: str,
        user_id: str,
        bot_id: str,
        channels: Mapping[str, Iterable[str]] | None,
        clock: Callable[[], float],
        wall: Callable[[], float],
        ts_base: int | None,
    ) -> None:
        """``channels``: channel ID -> the people in it (the bot is added to each). ``ts_base``:
        message timestamps count up from it by 100 µs (tests read the same ``ts`` every run);
        None: each is the ``wall`` clock's time when it was posted, as Slack's are."""
        self.team_id, self.user_id, self.bot_id = team_id, user_id, bot_id
        self.clock, self.wall, self.ts_base = clock, wall, ts_base
        self.violations: list[Violation] = []
        self.on_change: Callable[[], None] | None = None  # called after every change
        self._lock = threading.RLock()
        self._channels: dict[str, Channel] = {}
        self._ephemerals: list[dict[str, Any]] = []
        self._hook_uses: dict[str, int] = {}
        self._seq = itertools.count(1)
        self._last_ts = 0  # µs: a wall-clock ts is still unique and increasing
        for channel, members in (channels or {}).items():
            self.add_channel(channel, members=members)

    # ------------------------------------------------------------ setting the scene

    def add_channel(
        self,
        channel: str,
        name: str = "",
        *,
        members: Iterable[str] = (),
        bot: bool = True,
        private: bool = False,
    ) -> None:
        people = set(members) | ({self.user_id} if bot else set())
        with self._lock:
            self._channels[channel] = Channel(name or channel.lower(), people, private)

    def join(self, channel: str, *users: str) -> None:
        with self._lock:
            self._channels[channel].members.update(users)

    # ------------------------------------------------------------ reading the scene

    def channel_ids(self) -> list[str]:
        with self._lock:
            return list(self._channels)

    def channel_info(self, channel: str) -> Channel | None:
        with self._lock:
            found = self._channels.get(channel)
            return copy.deepcopy(found) if found else None

    def messages(self, channel: str) -> list[dict[str, Any]]:
        """The channel's top-level messages as they are now (after updates), oldest first."""
        with self._lock:
            found = self._channels.get(channel)
            return [
                copy.deepcopy(m)
                for m in (found.messages if found else [])
                if m.get("thread_ts") in (None, m["ts"]) or m.get("reply_broadcast")
            ]

    def thread(self, channel: str, ts: str) -> list[dict[str, Any]]:
        """The replies in thread ``ts`` (parent excluded), oldest first."""
        with self._lock:
            found = self._channels.get(channel)
            msgs = found.messages if found else []
            return [copy.deepcopy(m) for m in msgs if m.get("thread_ts") == ts and m["ts"] != ts]

    def message(self, channel: str, ts: str) -> dict[str, Any] | None:
        with self._lock:
            try:
                return copy.deepcopy(self._find(channel, ts))
            except Reject:
                return None

    def ephemerals(self, user: str | None = None) -> list[dict[str, Any]]:
        """Ephemeral messages as each person sees them: ``user``'s only, when given."""
        with self._lock:
            return [copy.deepcopy(e) for e in self._ephemerals if user in (None, e["user"])]

    def slackbot_says(self, channel: str, user: str, text: str) -> None:
        """An ephemeral from Slack itself, as when it shows a slash command's ack text."""
        with self._lock:
            self._ephemerals.append(self._ephemeral(channel, user, {"text": text}))
        self._changed()

    # ------------------------------------------------------------ the Web API methods

    def m_conversations_members(self, args: dict[str, Any]) -> dict[str, Any]:
        """A conversation's members, as Slack answers a bot: any public channel's; a private
        channel's or a DM's only if the bot is in it (channel_not_found otherwise)."""
        channel = self._channels.get(str(args.get("channel")))
        if channel is None or (channel.private and self.user_id not in channel.members):
            raise Reject("channel_not_found")
        members = sorted(channel.members)
        return {"members": members, "response_metadata": {"next_cursor": ""}}

    def m_conversations_info(self, args: dict[str, Any]) -> dict[str, Any]:
        """As Slack answers a bot: a private channel or DM it is not in does not exist for it
        (channel_not_found); a public one says whether the bot is a member."""
        channel = self._channels.get(str(args.get("channel")))
        if channel is None or (channel.private and self.user_id not in channel.members):
            raise Reject("channel_not_found")
        cid = str(args["channel"])
        found = {"id": cid, "name": channel.name, "is_private": channel.private}
        found |= {"is_channel": not channel.private, "is_im": cid.startswith("D")}
        if not found["is_im"]:
            found["is_member"] = self.user_id in channel.members
        return {"channel": found}

    def m_chat_postMessage(self, args: dict[str, Any]) -> dict[str, Any]:
        channel = self._bot_channel(args.get("channel"))
        self._check_message(args)
        msg = self._post(channel, args)
        return {"channel": args["channel"], "ts": msg["ts"], "message": copy.deepcopy(msg)}

    def m_chat_update(self, args: dict[str, Any]) -> dict[str, Any]:
        """A message the bot posted; one still streaming (``slack_streams``) is
        ``streaming_state_conflict``: undocumented, measured against Slack by an app's authors
        (found in public app source), and the stricter choice."""
        self._bot_channel(args.get("channel"))
        msg = self._find(str(args.get("channel")), str(args.get("ts")))
        if msg.get("streaming"):
            raise Reject("streaming_state_conflict")
        self._check_message(args)
        for key in ("text", "blocks"):
            if key in args:
                msg[key] = args[key] if args[key] is not None else ("" if key == "text" else [])
        msg["edited"] = {"user": self.user_id, "ts": self._next_ts()}
        return {"channel": args["channel"], "ts": msg["ts"], "message": copy.deepcopy(msg)}

    def m_chat_delete(self, args: dict[str, Any]) -> dict[str, Any]:
        channel = self._bot_channel(args.get("channel"))
        channel.messages.remove(self._find(str(args["channel"]), str(args.get("ts"))))
        return {"channel": args["channel"], "ts": args["ts"]}

    def m_chat_postEphemeral(self, args: dict[str, Any]) -> dict[str, Any]:
        channel = self._bot_channel(args.get("channel"))
        if args.get("user") not in channel.members:
            raise Reject("user_not_in_channel")
        self._check_message(args)
        eph = self._ephemeral(str(args["channel"]), str(args["user"]), args)
        self._ephemerals.append(eph)
        return {"message_ts": eph["message_ts"]}

    # ------------------------------------------------------------ response_url

    def hook(self, path: str, body: dict[str, Any]) -> int:
        """A POST to a response_url (``bot.sandbox.slack_requests.response_url`` makes them:
        ``…/{kind}/{team}/{channel}/{user}/{ts or -}/{issued}/{nonce}``); 200, or Reject."""
        seg = [s for s in path.split("/") if s][-7:]
        if len(seg) != 7 or not seg[5].isdigit():
            raise Reject("invalid_url")
        channel, user, ts, issued = seg[2], seg[3], seg[4], int(seg[5])
        with self._lock:
            uses = self._hook_uses.get(path, 0)
            if uses >= RESPONSE_URL_USES:
                raise Reject("used_url")
            # ``issued`` is real time (requests are minted with time.time()): a jump of the
            # played clock (bot.sandbox.clock) does not age a response_url.
            if time.time() - issued > RESPONSE_URL_SECONDS:
                raise Reject("expired_url")
            self._hook_uses[path] = uses + 1
            self._check_message(body)
            if body.get("delete_original") or body.get("replace_original"):
                target = self._original(channel, ts)
                if body.get("delete_original"):
                    msgs = self._channels[channel].messages
                    (msgs if target in msgs else self._ephemerals).remove(target)
                else:
                    target.update(text=body.get("text") or "", blocks=body.get("blocks") or [])
            elif body.get("response_type") == "in_channel":
                self._post(self._channels[channel], body)
            else:
                self._ephemerals.append(self._ephemeral(channel, user, body))
        self._changed()
        return 200

    # ------------------------------------------------------------ inside

    def _replied(self, channel: str, thread_ts: str) -> None:
        """The app replied in thread ``thread_ts`` (``slack_status`` clears its status)."""

    def _changed(self) -> None:
        if self.on_change is not None:
            self.on_change()

    def _next_ts(self) -> str:
        """A message's ``ts``: when it was posted (seconds.microseconds), unique here."""
        if self.ts_base is None:
            with self._lock:
                self._last_ts = max(int(self.wall() * 1_000_000), self._last_ts + 1)
                micros = self._last_ts
            return f"{micros // 1_000_000}.{micros % 1_000_000:06d}"
        micros = next(self._seq) * 100
        return f"{self.ts_base + micros // 1_000_000}.{micros % 1_000_000:06d}"

    def _bot_channel(self, channel_id: object) -> Channel:
        """The channel, if the bot may post in it; else what Slack answers."""
        channel = self._channels.get(str(channel_id)) if channel_id else None
        if channel is None:
            raise Reject("channel_not_found")
        if self.user_id not in channel.members:
            raise Reject("channel_not_found" if channel.private else "not_in_channel")
        return channel

    def _check_message(self, args: dict[str, Any]) -> None:
        problem = message_errors(args)
        if problem is not None:
            raise Reject(*problem)

    def _post(self, channel: Channel, args: dict[str, Any]) -> dict[str, Any]:
        if not (args.get("text") or args.get("blocks") or args.get("attachments")):
            raise Reject("no_text")
        msg: dict[str, Any] = {"type": "message", "user": self.user_id, "bot_id": self.bot_id}
        msg.update(ts=self._next_ts(), text=args.get("text") or "", blocks=args.get("blocks") or [])
        if args.get("thread_ts"):
            broadcast = args.get("reply_broadcast") in (True, 1, "true", "1")
            msg.update(thread_ts=str(args["thread_ts"]), reply_broadcast=broadcast)
        channel.messages.append(msg)
        return msg

    def _ephemeral(self, channel: str, user: str, args: dict[str, Any]) -> dict[str, Any]:
        eph: dict[str, Any] = {"channel": channel, "user": user, "message_ts": self._next_ts()}
        eph.update(text=args.get("text") or "", blocks=args.get("blocks") or [])
        return eph

    def _find(self, channel: str, ts: str) -> dict[str, Any]:
        found = self._channels.get(channel)
        for msg in found.messages if found else []:
            if msg["ts"] == ts:
                return msg
        raise Reject("message_not_found")

    def _original(self, channel: str, ts: str) -> dict[str, Any]:
        for eph in self._ephemerals:
            if eph["message_ts"] == ts and eph["channel"] == channel:
                return eph
        return self._find(channel, ts)
