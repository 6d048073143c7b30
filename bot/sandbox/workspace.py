"""The sandbox's Slack workspace: one channel, its messages, ephemerals, threads and modals.

It answers the Web API methods the bot calls (``chat.postMessage``, ``chat.update``,
``chat.postEphemeral``, ``views.open``, ``auth.test``; anything else is a plain ``ok``) and keeps
what the page renders. A trigger ID opens one modal, once, for the person whose click made it.
"""

from __future__ import annotations

import itertools
import json
import threading
import time
import uuid
from dataclasses import dataclass, field
from typing import Any

from .slack_requests import TEAM

CHANNEL = "C0WEEKLYSHOP"
BOT_USER = "U0SHOPBOT"
PEOPLE = {"U0ALICE": "Alice", "U0BOB": "Bob", "U0CAROL": "Carol"}


@dataclass
class Workspace:
    messages: list[dict[str, Any]] = field(default_factory=list)
    modals: dict[str, dict[str, Any]] = field(default_factory=dict)  # user -> open view
    triggers: dict[str, str] = field(default_factory=dict)  # trigger ID -> user
    version: int = 0

    def __post_init__(self) -> None:
        self._lock = threading.Lock()
        self._clock = itertools.count(1)

    def _ts(self) -> str:
        return f"{int(time.time())}.{next(self._clock):06d}"

    def _changed(self) -> None:
        self.version += 1

    # -- what the page does --------------------------------------------------------------

    def note_trigger(self, trigger: str, user: str) -> None:
        with self._lock:
            self.triggers[trigger] = user

    def add_ephemeral(self, user: str, text: str) -> None:
        with self._lock:
            self.messages.append(
                {"ts": self._ts(), "user": BOT_USER, "text": text, "ephemeral_for": user}
            )
            self._changed()

    def close_modal(self, user: str) -> None:
        with self._lock:
            self.modals.pop(user, None)
            self._changed()

    def message(self, ts: str) -> dict[str, Any] | None:
        with self._lock:
            return next((dict(m) for m in self.messages if m["ts"] == ts), None)

    def snapshot(self, user: str) -> dict[str, Any]:
        """What ``user`` sees: the channel (their ephemerals only), threads nested, their modal."""
        with self._lock:
            visible = [m for m in self.messages if m.get("ephemeral_for") in (None, user)]
            top = [dict(m, replies=[]) for m in visible if not m.get("thread_ts")]
            by_ts = {m["ts"]: m for m in top}
            for reply in visible:
                parent = by_ts.get(reply.get("thread_ts", ""))
                if parent is not None:
                    parent["replies"].append(reply)
            return {"messages": top, "modal": self.modals.get(user), "version": self.version}

    # -- the Web API the bot calls -------------------------------------------------------

    def call(self, method: str, args: dict[str, Any]) -> dict[str, Any]:
        handler = getattr(self, "api_" + method.replace(".", "_"), None)
        if handler is None:
            return {"ok": True}
        with self._lock:
            result: dict[str, Any] = handler(args)
            if result.get("ok"):
                self._changed()
            return result

    def api_auth_test(self, args: dict[str, Any]) -> dict[str, Any]:
        return {
            "ok": True,
            "team_id": TEAM["id"],
            "team": "Sandbox",
            "user_id": BOT_USER,
            "bot_id": "B0SHOPBOT",
            "url": "https://sandbox.slack.localhost/",
        }

    def api_chat_postMessage(self, args: dict[str, Any]) -> dict[str, Any]:
        message = {
            "ts": self._ts(),
            "user": BOT_USER,
            "text": args.get("text", ""),
            "blocks": args.get("blocks") or [],
        }
        if args.get("thread_ts"):
            message["thread_ts"] = args["thread_ts"]
        self.messages.append(message)
        return {
            "ok": True,
            "channel": args.get("channel", CHANNEL),
            "ts": message["ts"],
            "message": message,
        }

    def api_chat_update(self, args: dict[str, Any]) -> dict[str, Any]:
        for message in self.messages:
            if message["ts"] == args.get("ts") and not message.get("ephemeral_for"):
                message["text"] = args.get("text", message["text"])
                if "blocks" in args:
                    message["blocks"] = args["blocks"] or []
                message["edited"] = True
                return {"ok": True, "channel": args.get("channel"), "ts": message["ts"]}
        return {"ok": False, "error": "message_not_found"}

    def api_chat_postEphemeral(self, args: dict[str, Any]) -> dict[str, Any]:
        message = {
            "ts": self._ts(),
            "user": BOT_USER,
            "text": args.get("text", ""),
            "blocks": args.get("blocks") or [],
            "ephemeral_for": args.get("user", ""),
        }
        self.messages.append(message)
        return {"ok": True, "message_ts": message["ts"]}

    def api_views_open(self, args: dict[str, Any]) -> dict[str, Any]:
        user = self.triggers.pop(str(args.get("trigger_id")), None)
        if user is None:
            return {"ok": False, "error": "expired_trigger_id"}
        raw = args.get("view") or {}
        view = dict(json.loads(raw) if isinstance(raw, str) else raw)
        view["id"] = "V" + uuid.uuid4().hex[:10].upper()
        self.modals[user] = view
        return {"ok": True, "view": view}
