"""One Slack workspace as the bot's Web API calls see it, refusing what Slack refuses.

:class:`SlackWorkspace` keeps channels (members, the bot's membership), messages and threads,
ephemerals, modals and trigger IDs, and answers the Web API methods the bot calls. The HTTP
server around it is ``bot.sandbox.slack_api.FakeSlack``; the tests, ``bench/`` and the sandbox all
use that one fake. What it refuses, as Slack does:

- ``chat.postMessage`` / ``chat.update`` in a channel the bot is not in: ``not_in_channel`` for a
  public channel, ``channel_not_found`` for a private one or a DM (Slack hides those), and
  ``channel_not_found`` for a channel that does not exist;
- ``conversations.info`` on a private channel or DM the bot is not in: ``channel_not_found``
  (a public one answers ``is_member``);
- ``chat.postEphemeral`` to someone who is not in the channel: ``user_not_in_channel``
  (docs.slack.dev, chat.postEphemeral: "Cannot post user messages to a channel they are not in");
- a message or view breaking a Block Kit limit (``bot.sandbox.block_kit``): ``invalid_blocks``,
  ``msg_too_long`` or ``msg_blocks_too_long``, recorded in ``violations``;
- ``views.open`` with a trigger ID it never issued (``invalid_trigger_id``), one used before
  (``exchanged_trigger_id``), or one older than 3 seconds (``expired_trigger_id``): Slack's
  triggers "expire in three seconds" and work once (views.open errors on docs.slack.dev);
- a ``response_url`` used more than 5 times, or more than 30 minutes after it was issued (Slack:
  "up to 5 times within 30 minutes"), answered 404 ``used_url`` / ``expired_url``;
- a stream (``chat.*Stream``) or a thread's status (``assistant.threads.setStatus``) as
  ``bot.sandbox.slack_streams`` and ``bot.sandbox.slack_status`` list.
"""

from __future__ import annotations

import copy
import re
import secrets
import time
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from .block_kit import parsed_texts, view_errors
from .slack_canvases import Canvases
from .slack_channels import (
    MESSAGE_METHODS,
    RESPONSE_URL_SECONDS,
    RESPONSE_URL_USES,
    Channel,
    Reject,
    Violation,
)
from .slack_status import Statuses
from .slack_streams import Streams

__all__ = [
    "MESSAGE_METHODS",
    "RESPONSE_URL_SECONDS",
    "RESPONSE_URL_USES",
    "Channel",
    "Reject",
    "SlackWorkspace",
    "Violation",
]

TRIGGER_SECONDS = 3.0  # Slack: a trigger_id expires three seconds after it was issued
_MENTION = re.compile(
    r"<(?:!channel|!here|!everyone|@[UW][A-Z0-9]+|!subteam\^[A-Z0-9]+)(?:\|[^>]*)?>"
)


@dataclass
class _Trigger:
    user: str
    issued: float
    used: bool = False


class SlackWorkspace(Canvases, Streams, Statuses):
    """One workspace: its channels (``Channels``), canvases (``Canvases``), streamed messages
    (``Streams``) and threads' status lines (``Statuses``), and its modals, Home tabs and
    trigger IDs."""

    def __init__(
        self,
        *,
        team_id: str = "T0TEAM",
        user_id: str = "UBOT",
        bot_id: str = "BBOT",
        channels: Mapping[str, Iterable[str]] | None = None,
        clock: Callable[[], float] = time.monotonic,
        wall: Callable[[], float] = time.time,
        ts_base: int | None = 1_700_000_000,
    ) -> None:
        """``channels``: channel ID -> the people in it (the bot is added to each)."""
        super().__init__(
            team_id=team_id,
            user_id=user_id,
            bot_id=bot_id,
            channels=channels,
            clock=clock,
            wall=wall,
            ts_base=ts_base,
        )
        self.views: dict[str, dict[str, Any]] = {}
        self.home_ids: dict[str, str] = {}  # user -> the view ID of their Home tab
        self._triggers: dict[str, _Trigger] = {}
        self._open_views: dict[str, str] = {}  # user -> the view ID of their open modal
        self._external_ids: dict[str, str] = {}  # a view's external_id -> its view ID
        self.people: dict[str, dict[str, Any]] = {}  # user -> what users.info says besides

    # ------------------------------------------------------------ setting the scene

    def issue_trigger(self, user: str = "") -> str:
        """A trigger ID as Slack sends with an interaction by ``user`` (``digits.digits.hex``)."""
        trigger = f"{secrets.randbelow(10**12)}.{next(self._seq)}.{secrets.token_hex(16)}"
        with self._lock:
            self._triggers[trigger] = _Trigger(user, self.clock())
        return trigger

    def set_person(self, user: str, **fields: Any) -> None:
        """What ``users.info`` says of ``user`` beyond the defaults (``is_admin=True``,
        ``tz="America/New_York"``, ``team_id`` of another workspace, ``is_bot``…)."""
        with self._lock:
            self.people.setdefault(user, {}).update(fields)

    # ------------------------------------------------------------ reading the scene

    def open_view(self, user: str) -> dict[str, Any] | None:
        """The modal ``user`` has open, if any."""
        with self._lock:
            view_id = self._open_views.get(user)
            return copy.deepcopy(self.views[view_id]) if view_id else None

    def close_view(self, user: str) -> None:
        with self._lock:
            self._open_views.pop(user, None)
        self._changed()

    def home(self, user: str) -> dict[str, Any] | None:
        """The Home tab ``user`` sees, as last published."""
        with self._lock:
            view_id = self.home_ids.get(user)
            return copy.deepcopy(self.views[view_id]) if view_id else None

    def mention_sources(self) -> list[Any]:
        """What :meth:`mentions` reads (the fake adds successful calls and hook posts)."""
        return []

    def mentions(self) -> list[str]:
        """Every unescaped ``<!channel>``/``<!here>``/``<!everyone>``/``<@U…>``/``<!subteam^…>``
        in anything successfully posted (messages, updates, ephemerals, response_url posts),
        where Slack would parse it: not inside plain_text."""
        found = self.mention_sources()
        return [m for src in found for s in parsed_texts(src) for m in _MENTION.findall(s)]

    # ------------------------------------------------------------ the Web API methods

    def method(self, name: str, args: dict[str, Any]) -> dict[str, Any]:
        """Run Web API method ``name``; its answer's fields, or Reject. Unknown methods are
        ``unknown_method``, as Slack answers them."""
        handler = getattr(self, "m_" + name.replace(".", "_"), None)
        if handler is None:
            raise Reject("unknown_method")
        with self._lock:
            try:
                result: dict[str, Any] = handler(args)
            except Reject as rejected:
                if rejected.errors:
                    self.violations.append(Violation(name, rejected.errors))
                raise
        self._changed()
        return result

    def m_auth_test(self, args: dict[str, Any]) -> dict[str, Any]:
        return {
            "url": "https://weekly-shop.slack.com/",
            "team": "Weekly Shop",
            "user": "weekly-shop",
            "team_id": self.team_id,
            "user_id": self.user_id,
            "bot_id": self.bot_id,
            "is_enterprise_install": False,
        }

    def m_users_info(self, args: dict[str, Any]) -> dict[str, Any]:
        """As Slack answers it (scope ``users:read``): the person's ``team_id``, ``is_admin``,
        ``is_owner``, ``is_primary_owner``, ``is_bot``, ``deleted`` and ``tz`` (IANA); a user
        it does not know, one of another workspace included, is ``user_not_found``. Here a
        person is anyone in one of the workspace's channels, or set with :meth:`set_person`."""
        user = str(args.get("user") or "")
        extra = self.people.get(user)
        if extra is None and not any(user in c.members for c in self._channels.values()):
            raise Reject("user_not_found")
        found: dict[str, Any] = {
            "id": user,
            "team_id": self.team_id,
            "name": user.lower(),
            "deleted": False,
            "is_admin": False,
            "is_owner": False,
            "is_primary_owner": False,
            "is_bot": user == self.user_id,
            "tz": "Europe/London",
            "tz_label": "Greenwich Mean Time",
            "tz_offset": 0,
        }
        found.update(extra or {})
        return {"user": found}

    def m_views_open(self, args: dict[str, Any]) -> dict[str, Any]:
        trigger_id = args.get("trigger_id")
        if not trigger_id or "view" not in args:
            raise Reject("invalid_arguments")
        trigger = self._triggers.get(str(trigger_id))
        if trigger is None:
            raise Reject("invalid_trigger_id")
        if trigger.used:
            raise Reject("exchanged_trigger_id")
        if self.clock() - trigger.issued > TRIGGER_SECONDS:
            raise Reject("expired_trigger_id")
        external = args["view"].get("external_id") if isinstance(args["view"], dict) else None
        if external and external in self._external_ids:
            raise Reject("duplicate_external_id")
        result = self._store_view(args["view"], f"V{next(self._seq):08d}")
        if external:
            self._external_ids[str(external)] = result["view"]["id"]
        trigger.used = True
        if trigger.user:
            self._open_views[trigger.user] = result["view"]["id"]
        return result

    def m_views_publish(self, args: dict[str, Any]) -> dict[str, Any]:
        """A person's Home tab: a view of type ``home`` (no title, no submit), for someone in
        the workspace (``user_not_found`` otherwise), within a view's limits."""
        user, view = str(args.get("user_id") or ""), args.get("view")
        if not isinstance(view, dict) or view.get("type") != "home":
            raise Reject("invalid_arguments", ["must be a home view [json-pointer:/view/type]"])
        if not any(user in c.members for c in self._channels.values()):
            raise Reject("user_not_found")
        view_id = self.home_ids.setdefault(user, f"VH{next(self._seq):07d}")
        return self._store_view(view, view_id)

    def m_views_update(self, args: dict[str, Any]) -> dict[str, Any]:
        """By ``view_id``, or by the ``external_id`` the view was opened with (unique per
        workspace: views.open refuses a second with ``duplicate_external_id``; an unknown one
        is ``not_found``, as views.update answers). A ``hash`` that is not the view's current
        one is ``hash_conflict`` (views.update: "the provided hash doesn't match the current
        stored value"): the view changed since the caller saw it."""
        view_id = args.get("view_id") or self._external_ids.get(str(args.get("external_id")))
        if view_id not in self.views:
            raise Reject("not_found")
        if args.get("hash") and args["hash"] != self.views[str(view_id)].get("hash"):
            raise Reject("hash_conflict")
        return self._store_view(args.get("view"), str(view_id))

    # ------------------------------------------------------------ inside

    def _store_view(self, view: Any, view_id: str) -> dict[str, Any]:
        errs = view_errors(view)
        if errs:
            raise Reject("invalid_blocks", errs)
        stored = {**view, "id": view_id, "team_id": self.team_id, "bot_id": self.bot_id}
        stored.setdefault("private_metadata", "")
        stored.setdefault("callback_id", "")
        stored.update(state={"values": {}}, hash=f"{next(self._seq)}.fakehash")
        self.views[view_id] = stored
        return {"view": copy.deepcopy(stored)}
