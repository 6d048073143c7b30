"""Canvases as Slack keeps them for one workspace: ``canvases.create``, ``canvases.edit``, and a
canvas as the file it is (``files.info``, ``files.list``), refusing what Slack refuses:

- a token without the method's scope: ``missing_scope`` with ``needed`` and ``provided`` (an app
  installed before ``canvases:write`` or ``files:read`` was added to its manifest);
- ``canvases.create`` without ``channel_id`` in a free workspace:
  ``free_teams_cannot_create_non_tabbed_canvases`` (docs.slack.dev, canvases.create:
  ``channel_id`` "is a required field for free teams");
- a workspace with canvases turned off: ``canvas_disabled_user_team``;
- ``document_content`` that is not ``{"type": "markdown", "markdown": str}``
  (``invalid_arguments``), or markdown over 1 MiB, 1,048,576 characters (docs.slack.dev:
  "The markdown content is limited to 1 MiB"): ``canvas_creation_failed`` /
  ``canvas_editing_failed``;
- a channel the bot is not in: ``not_in_channel`` / ``channel_not_found``, as for a message;
- ``canvases.edit`` of a canvas it does not know: ``canvas_not_found``.

Each canvas keeps its markdown and which checklist items were ticked (the sandbox page ticks
them, as a person would in Slack).
"""

from __future__ import annotations

import re
import secrets
from dataclasses import dataclass, field
from typing import Any

from bot.slack.installs import SCOPES as INSTALL_SCOPES

from .slack_channels import Channels, Reject

MAX_MARKDOWN = 1_048_576
# The scopes an installation of the current manifest has (those the app asks for when added); a
# test takes some away to play an older installation.
SCOPES = frozenset(INSTALL_SCOPES)
NEEDS = {
    "canvases.create": "canvases:write",
    "canvases.edit": "canvases:write",
    "files.info": "files:read",
    "files.list": "files:read",
}
_CHECKBOX = re.compile(r"^- \[( |x)\] ", re.MULTILINE)


@dataclass
class Canvas:
    canvas_id: str
    title: str
    channel: str
    markdown: str
    created: int
    ticked: set[int] = field(default_factory=set)  # which checklist items are ticked

    def checklist(self) -> list[str]:
        """The checklist items' lines, as written."""
        return [m.string[m.end() :].split("\n", 1)[0] for m in _CHECKBOX.finditer(self.markdown)]


class Canvases(Channels):
    """A workspace's canvases; mixed into :class:`~bot.sandbox.slack_workspace.SlackWorkspace`."""

    scopes: frozenset[str] = SCOPES
    free_team: bool = True  # Slack's free plan: a canvas needs a channel_id
    canvases_enabled: bool = True

    @property
    def canvases(self) -> dict[str, Canvas]:
        found: dict[str, Canvas] | None = getattr(self, "_canvases", None)
        if found is None:
            found = {}
            self._canvases: dict[str, Canvas] = found
        return found

    def tick(self, canvas_id: str, index: int, ticked: bool = True) -> None:
        """A person ticks (or unticks) checklist item ``index`` of a canvas."""
        with self._lock:
            marks = self.canvases[canvas_id].ticked
            (marks.add if ticked else marks.discard)(index)
        self._changed()

    def _scope(self, method: str) -> None:
        needed = NEEDS[method]
        if needed not in self.scopes:
            raise Reject(
                "missing_scope", extra={"needed": needed, "provided": ",".join(sorted(self.scopes))}
            )

    def _markdown(self, args: dict[str, Any], failed: str) -> str:
        content = args.get("document_content")
        if not isinstance(content, dict) or content.get("type") != "markdown":
            raise Reject("invalid_arguments")
        markdown = content.get("markdown")
        if not isinstance(markdown, str):
            raise Reject("invalid_arguments")
        if len(markdown) > MAX_MARKDOWN:
            raise Reject(failed)
        return markdown

    def m_canvases_create(self, args: dict[str, Any]) -> dict[str, Any]:
        self._scope("canvases.create")
        if not self.canvases_enabled:
            raise Reject("canvas_disabled_user_team")
        channel = str(args.get("channel_id") or "")
        if not channel and self.free_team:
            raise Reject("free_teams_cannot_create_non_tabbed_canvases")
        if channel:
            self._bot_channel(channel)
        markdown = (
            self._markdown(args, "canvas_creation_failed") if "document_content" in args else ""
        )
        canvas_id = f"F{secrets.token_hex(5).upper()}"
        title = str(args.get("title") or "Untitled")
        self.canvases[canvas_id] = Canvas(canvas_id, title, channel, markdown, int(self.wall()))
        return {"canvas_id": canvas_id}

    def m_canvases_edit(self, args: dict[str, Any]) -> dict[str, Any]:
        self._scope("canvases.edit")
        canvas = self.canvases.get(str(args.get("canvas_id") or ""))
        if canvas is None:
            raise Reject("canvas_not_found")
        changes = args.get("changes")
        if not isinstance(changes, list) or not changes:
            raise Reject("invalid_arguments")
        for change in changes:
            if not isinstance(change, dict) or change.get("operation") != "replace":
                raise Reject("invalid_arguments")  # only a whole replace is played here
            canvas.markdown = self._markdown(change, "canvas_editing_failed")
            canvas.ticked.clear()
        return {}

    def _file(self, canvas: Canvas) -> dict[str, Any]:
        return {
            "id": canvas.canvas_id,
            "created": canvas.created,
            "timestamp": canvas.created,
            "title": canvas.title,
            "filetype": "quip",
            "pretty_type": "Canvas",
            "user": self.user_id,
            "channels": [canvas.channel] if canvas.channel else [],
            "permalink": f"https://weekly-shop.slack.com/docs/{self.team_id}/{canvas.canvas_id}",
        }

    def m_files_info(self, args: dict[str, Any]) -> dict[str, Any]:
        self._scope("files.info")
        canvas = self.canvases.get(str(args.get("file") or ""))
        if canvas is None:
            raise Reject("file_not_found")
        return {"file": self._file(canvas)}

    def m_files_list(self, args: dict[str, Any]) -> dict[str, Any]:
        """Newest first, filtered by ``channel`` and ``ts_from`` (inclusive), as Slack lists."""
        self._scope("files.list")
        channel = str(args.get("channel") or "")
        since = int(float(args.get("ts_from") or 0))
        found = [
            self._file(c)
            for c in self.canvases.values()
            if (not channel or c.channel == channel) and c.created >= since
        ]
        found.sort(key=lambda f: -int(f["created"]))
        return {
            "files": found,
            "paging": {"count": 100, "total": len(found), "page": 1, "pages": 1},
        }
