"""An order as a Slack canvas: a checklist tabbed in the basket's channel.

``canvases.create`` (scope ``canvases:write``) with the week's title, the basket's channel as
``channel_id`` (free workspaces refuse a canvas without one: ``free_teams_cannot_create_non_
tabbed_canvases``) and ``document_content`` of type ``markdown`` (at most 1 MiB, 1,048,576
characters): one checklist item per item (``- [ ] 500 g chicken breast — for Friday``) under an
``##`` heading per aisle, in the basket's order. The link the thread shows comes from
``files.info`` (a canvas is a file; its ``permalink``).

Item text is the model's, so it is escaped for canvas markdown (:func:`canvas_text`): every
ASCII punctuation character gets CommonMark's backslash escape, so ``[x](https://…)`` cannot
become a link, ``#`` a heading, ``*`` emphasis, ``|`` a table, ``![](@U…)`` or ``<!channel>`` a
mention, and a line break cannot start a new item (control characters become spaces).

Once: ``canvases.create`` takes no idempotency key, and a process can die after Slack made the
canvas and before the order record says so. So the canvas's title ends with when the basket was
approved (to the minute, UTC: words a person reads, no internal code), and
:meth:`CanvasDestination.find` looks for a canvas of that title in the channel made since the
attempt started (``files.list``, scope ``files:read``, one call, only when an attempt's outcome
is unknown); the order step adopts it instead of making a second one. (Two baskets of one
channel approved in the same minute, and one of them crashing at that point, could adopt the
other's canvas: the title would then still be true of both.)
"""

from __future__ import annotations

import logging
import re
from datetime import UTC, datetime

from slack_sdk import WebClient
from slack_sdk.errors import SlackApiError

from workflow.shop.basket import aisle_groups

from .order import (
    DestinationDown,
    DestinationKind,
    DestinationRefused,
    Order,
    OutcomeUnknown,
    Placed,
    week_title,
)

log = logging.getLogger(__name__)

MAX_MARKDOWN = 1_048_576  # canvases.create: "The markdown content is limited to 1 MiB"
_CONTROL = re.compile(r"[\x00-\x1f\x7f\u2028\u2029]+")
_PUNCTUATION = re.compile(r"([!-/:-@\[-`{-~])")  # CommonMark: every ASCII punctuation escapes

# What Slack answers that no retry of the same call fixes, said in our words.
REFUSALS = {
    "missing_scope": "the app needs to be reinstalled to make canvases (canvases:write)",
    "canvas_disabled_user_team": "canvases are turned off in this workspace",
    "free_teams_cannot_create_non_tabbed_canvases": "this workspace's plan needs a channel",
    "restricted_action": "this workspace does not let the app make canvases",
    "not_in_channel": "the app is no longer in this channel",
    "channel_not_found": "the app is no longer in this channel",
    "canvas_creation_failed": "Slack could not make the canvas",
}


def canvas_text(text: str) -> str:
    """``text`` as literal canvas markdown: one line, every ASCII punctuation escaped."""
    return _PUNCTUATION.sub(r"\\\1", _CONTROL.sub(" ", text)).strip()


def checklist(order: Order) -> str:
    """The canvas's markdown: who approved it, then a checklist item per item, by aisle."""
    approvers = ", ".join(f"![](@{user})" for user in order.approved_by)
    lines = [f"Approved by {approvers}" if approvers else "Approved", ""]
    for aisle, items in aisle_groups(order.lines):
        if aisle:
            lines += [f"## {aisle.capitalize()}", ""]
        lines += [f"- [ ] {canvas_text(item.line())}" for item in items]
        lines.append("")
    return "\n".join(lines)


def title_of(order: Order) -> str:
    """The canvas's title, as the channel's tab shows it: the week the dinners are for and when
    the basket was approved ("Shopping list · week of 7 December 2026 · approved 4 Dec 17:02
    UTC"), which :meth:`find` looks for. No internal reference: the approval's minute tells this
    order from the channel's others."""
    when = datetime.fromtimestamp(order.approved_at, UTC)
    week = order.title or week_title(order.approved_at)
    return f"{week} · approved {when.day} {when:%b %H:%M} UTC"


def _refusal(exc: SlackApiError) -> DestinationRefused | DestinationDown:
    error = str(exc.response.get("error", "")) if exc.response is not None else ""
    if error in REFUSALS:
        return DestinationRefused(REFUSALS[error])
    return DestinationDown(f"Slack answered {error or 'an error'}")


class CanvasDestination:
    """Orders become canvases in the basket's channel, made with the workspace's bot token."""

    kind: DestinationKind = "canvas"
    repeats_safely = True  # an earlier attempt's canvas is found by its title

    def __init__(self, web: WebClient) -> None:
        self.web = web

    def place(self, order: Order) -> Placed:
        markdown = checklist(order)
        if len(markdown) > MAX_MARKDOWN:  # 500 items of 500 characters are about 0.3 MiB
            raise DestinationRefused("the list is too long for a canvas")
        try:
            made = self.web.canvases_create(
                title=title_of(order),
                channel_id=order.channel,
                document_content={"type": "markdown", "markdown": markdown},
            )
        except SlackApiError as exc:
            raise _refusal(exc) from exc
        except OSError as exc:  # sent, perhaps made: find() tells, on the next attempt
            raise OutcomeUnknown("Slack did not answer in time") from exc
        canvas = str(made.get("canvas_id", ""))
        return Placed("canvas", url=self.link(canvas), ref=canvas)

    def link(self, canvas: str) -> str:
        """The canvas's permalink (``files.info``); one built from its ID if that fails."""
        try:
            info = self.web.files_info(file=canvas)
            permalink = (info.get("file") or {}).get("permalink")
            if isinstance(permalink, str) and permalink.startswith("https://"):
                return permalink
        except (SlackApiError, OSError) as exc:
            log.warning("files.info for the new canvas failed: %s", type(exc).__name__)
        return f"https://app.slack.com/docs/{canvas}"

    def find(self, order: Order, since: int) -> Placed | None:
        """The canvas an earlier attempt made for ``order`` (its title names the order), made
        in the order's channel since ``since``; None if there is none."""
        title = title_of(order)
        try:
            listed = self.web.files_list(channel=order.channel, ts_from=str(since - 60))
        except SlackApiError as exc:
            raise _refusal(exc) from exc
        except OSError as exc:
            raise DestinationDown("Slack did not answer in time") from exc
        for file in listed.get("files") or []:
            if isinstance(file, dict) and file.get("title") == title and file.get("id"):
                permalink = str(file.get("permalink") or "")
                url = permalink if permalink.startswith("https://") else ""
                canvas = str(file["id"])
                return Placed("canvas", url=url or self.link(canvas), ref=canvas)
        return None
