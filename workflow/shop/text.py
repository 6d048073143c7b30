"""Text that people and the model write, made safe to keep and to show.

A name typed in Edit items or written by the model reaches the checkpoint, Slack, a canvas and
an order's destination. Control characters there do harm without being seen: C0 controls
(``\\x00``, ``\\x1b`` starting a terminal escape in whoever prints the order), C1 controls and
DEL, and Unicode's bidirectional controls (U+202E RIGHT-TO-LEFT OVERRIDE shows "milk‮gge" as
something else; U+2066-2069 isolates, U+200E/200F marks, U+061C). :func:`strip_controls` drops
all of them but tab and the line breaks; :func:`one_line` also folds those into spaces, for an
item's name, unit and note. Imports nothing (the ack path uses it).
"""

from __future__ import annotations

import re

# C0 but tab, line feed and carriage return; DEL and C1; Unicode's bidirectional controls.
CONTROLS = re.compile(
    "[\x00-\x08\x0b\x0c\x0e-\x1f\x7f-\x9f\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069]"
)
# What breaks a line: folded into one space in a one-line field.
BREAKS = re.compile("[\t\n\r\u2028\u2029]+")


def strip_controls(text: str) -> str:
    """``text`` without control or bidirectional-control characters (tab and line breaks kept)."""
    return CONTROLS.sub("", text)


def one_line(text: str) -> str:
    """``text`` as one line: no controls, and each run of line breaks and tabs one space."""
    return BREAKS.sub(" ", strip_controls(text))
