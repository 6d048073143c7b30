"""The page's canvases: what the bot made in a channel, shown as Slack shows a checklist canvas,
and ticking an item, as a person does in Slack.

A canvas's markdown is the bot's (``bot.orders.canvas``): ``##`` headings, ``- [ ]`` checklist
items whose text is backslash-escaped canvas markdown, and ``![](@U…)`` mentions. Here it is read
back into plain data for the page (headings, items unescaped, mentions as names); the page shows
all of it as text, never as HTML. A tick is a POST to ``/ui/tick`` (same-origin only, like every
endpoint of the page) and lasts while the sandbox runs.
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING, Any

from aiohttp import web

from .state import PEOPLE

if TYPE_CHECKING:
    from .slack_workspace import SlackWorkspace
    from .state import Sandbox

_ITEM = re.compile(r"^- \[( |x)\] (.*)$")
_ESCAPED = re.compile(r"\\([!-/:-@\[-`{-~])")
_MENTION = re.compile(r"!\[\]\(@([A-Z0-9]+)\)")


def _text(markdown: str) -> str:
    """Canvas markdown's text as a reader sees it: escapes undone, mentions as @names."""
    named = _MENTION.sub(lambda m: "@" + PEOPLE.get(m.group(1), m.group(1)), markdown)
    return _ESCAPED.sub(r"\1", named)


def canvas_view(canvas: Any) -> dict[str, Any]:
    """One canvas as the page draws it: its title, then its lines in order (a heading, a
    checklist item with its index and whether it is ticked, or a paragraph)."""
    lines: list[dict[str, Any]] = []
    index = 0
    for raw in canvas.markdown.split("\n"):
        if not raw.strip():
            continue
        item = _ITEM.match(raw)
        if item:
            ticked = index in canvas.ticked
            lines.append({"kind": "item", "index": index, "text": _text(item[2]), "ticked": ticked})
            index += 1
        elif raw.startswith("## "):
            lines.append({"kind": "heading", "text": _text(raw[3:])})
        else:
            lines.append({"kind": "text", "text": _text(raw)})
    return {"id": canvas.canvas_id, "title": canvas.title, "lines": lines}


def canvases_of(slack: SlackWorkspace, channel: str) -> list[dict[str, Any]]:
    """The canvases tabbed in ``channel``, newest first."""
    found = [c for c in slack.canvases.values() if c.channel == channel]
    found.sort(key=lambda c: -c.created)
    return [canvas_view(c) for c in found]


async def ui_tick(request: web.Request) -> web.Response:
    """A person ticks (or unticks) checklist item ``index`` of ``canvas``."""
    sandbox: Sandbox = request.app["sandbox"]
    data = await request.json()
    slack = sandbox.workspace(data.get("team"))
    canvas, index = data.get("canvas"), data.get("index")
    if canvas not in slack.canvases or not isinstance(index, int) or index < 0:
        return web.json_response({"ok": False, "error": "canvas_not_found"}, status=404)
    slack.tick(canvas, index, bool(data.get("ticked", True)))
    return web.json_response({"ok": True})
