"""Block Kit as Slack checks it: the limits a message, a modal or a Home tab must keep.

``block_errors`` and ``view_errors`` list every limit a payload breaks, each with a JSON pointer as
Slack writes them in ``response_metadata.messages``; ``message_errors`` adds the whole-message text
limits. The fake Web API (``bot.sandbox.slack_api``) refuses a payload with any of them, for the
tests and the sandbox alike, so nothing the bot sends in either would be refused by real Slack
unnoticed.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from typing import Any

# Block Kit limits, from Slack's reference pages on docs.slack.dev (header-block, section-block,
# context-block, button-element, plain-text-input-element, confirmation-dialog-object,
# views/modal-views) and api.slack.com/reference/block-kit/blocks (50/100 blocks, 25 actions
# elements). "message.text" (40,000) is not on a Slack page we could read: third-party docs cite
# Slack's changelog "2018-04-truncating-really-long-messages", where Slack truncates rather than
# rejects; this fake rejects with msg_too_long so a test notices. "message.blocks_text" (all text
# in a message's blocks together) is undocumented too: Slack answers msg_blocks_too_long, a Slack
# engineer cited "12,000 text characters with a buffer for block containers" (bolt-js #2509) and
# a report saw 11,341 characters of section/header text refused (bolt-js #2867); the fake refuses
# over 12,000, so keep real messages well under it.
LIMITS: dict[str, int] = {
    "message.text": 40_000,
    "message.blocks_text": 12_000,
    "message.blocks": 50,
    "modal.blocks": 100,  # also Home tabs
    "block_id": 255,
    "action_id": 255,
    "header.text": 150,
    "section.text": 3000,
    "section.fields": 10,
    "section.field_text": 2000,
    "context.elements": 10,
    "actions.elements": 25,
    "button.text": 75,
    "button.value": 2000,
    "button.url": 3000,
    "confirm.title": 100,
    "confirm.text": 300,
    "confirm.confirm": 30,
    "confirm.deny": 30,
    "plain_text_input.max_length": 3000,
    "modal.title": 24,
    "modal.submit": 24,
    "modal.close": 24,
    "view.private_metadata": 3000,
    "view.callback_id": 255,
    # The Settings modal's elements (docs.slack.dev, block-elements: checkboxes "A maximum of 10
    # options", select menus "Maximum number of options is 100", option text 75; input block
    # label and hint 2000; view external_id 255; number_input requires is_decimal_allowed).
    "checkboxes.options": 10,
    "static_select.options": 100,
    "option.text": 75,
    "input.label": 2000,
    "input.hint": 2000,
    "view.external_id": 255,
    "number_input.is_decimal_allowed": 0,
    "timepicker.initial_time": 5,  # "HH:mm"
    # Feedback on a message (docs.slack.dev, blocks/context-actions-block: "An array of feedback
    # buttons elements and icon button elements. Maximum number of items is 5";
    # block-elements/feedback-buttons-element: positive_button and negative_button required,
    # each with a plain_text text of at most 75 characters, a value of at most 2000, an optional
    # accessibility_label of at most 75; icon-button-element: icon and text required, value,
    # accessibility_label 75). An icon button's text has no documented limit: 75, as a button's.
    # The markdown block (blocks/markdown-block): text up to 12,000 characters.
    "context_actions.elements": 5,
    "feedback_button.text": 75,
    "feedback_button.value": 2000,
    "feedback_button.label": 75,
    "icon_button.icon": 0,
    "icon_button.text": 75,
    "icon_button.value": 2000,
    "icon_button.label": 75,
    "markdown.text": 12_000,
}
_CONTEXT_ACTIONS = ("feedback_buttons", "icon_button")

# How each key of a block, element, confirm or view is checked against LIMITS: "len" a string,
# "max" a number, "items" an array's length, "text"/"plain" a text object (plain: plain_text only),
# "texts" each text object of an array. Limits named in _REQUIRED must be present.
_CHECKS: dict[str, list[tuple[str, str, str]]] = {
    "*": [("block_id", "len", "block_id"), ("action_id", "len", "action_id")],
    "header": [("text", "plain", "header.text")],
    "section": [
        ("text", "text", "section.text"),
        ("fields", "items", "section.fields"),
        ("fields", "texts", "section.field_text"),
    ],
    "context": [("elements", "items", "context.elements")],
    "actions": [("elements", "items", "actions.elements")],
    "button": [
        ("text", "plain", "button.text"),
        ("value", "len", "button.value"),
        ("url", "len", "button.url"),
    ],
    "plain_text_input": [("max_length", "max", "plain_text_input.max_length")],
    "checkboxes": [("options", "items", "checkboxes.options"), ("options", "opts", "option.text")],
    "static_select": [
        ("options", "items", "static_select.options"),
        ("options", "opts", "option.text"),
    ],
    "multi_static_select": [  # Edit items' Remove: the same limits as a static_select's
        ("options", "items", "static_select.options"),
        ("options", "opts", "option.text"),
    ],
    "number_input": [("is_decimal_allowed", "bool", "number_input.is_decimal_allowed")],
    "timepicker": [("initial_time", "hhmm", "timepicker.initial_time")],
    "context_actions": [("elements", "items", "context_actions.elements")],
    "feedback_button": [
        ("text", "plain", "feedback_button.text"),
        ("value", "len", "feedback_button.value"),
        ("accessibility_label", "len", "feedback_button.label"),
    ],
    "icon_button": [
        ("icon", "str", "icon_button.icon"),
        ("text", "plain", "icon_button.text"),
        ("value", "len", "icon_button.value"),
        ("accessibility_label", "len", "icon_button.label"),
    ],
    "markdown": [("text", "len", "markdown.text")],
    "input": [("label", "plain", "input.label"), ("hint", "plain", "input.hint")],
    "confirm": [
        ("title", "plain", "confirm.title"),
        ("text", "text", "confirm.text"),
        ("confirm", "plain", "confirm.confirm"),
        ("deny", "plain", "confirm.deny"),
    ],
    "modal": [
        ("title", "plain", "modal.title"),
        ("submit", "plain", "modal.submit"),
        ("close", "plain", "modal.close"),
    ],
    "view": [
        ("private_metadata", "len", "view.private_metadata"),
        ("callback_id", "len", "view.callback_id"),
        ("external_id", "len", "view.external_id"),
        ("blocks", "items", "modal.blocks"),
    ],
}
_REQUIRED = {"header.text", "button.text", "modal.title", "confirm.title", "confirm.text"}
_REQUIRED |= {"confirm.confirm", "confirm.deny", "input.label"}
_REQUIRED |= {"number_input.is_decimal_allowed", "context_actions.elements"}
_REQUIRED |= {"feedback_button.text", "feedback_button.value", "icon_button.icon"}
_REQUIRED |= {"icon_button.text", "markdown.text"}


def _check(value: Any, how: str, limit: str, ptr: str, errs: list[str]) -> None:
    n = LIMITS[limit]
    if how == "texts":
        for i, item in enumerate(value if isinstance(value, list) else []):
            _check(item, "text", limit, f"{ptr}/{i}", errs)
    elif how in ("text", "plain"):
        kinds = ("plain_text",) if how == "plain" else ("plain_text", "mrkdwn")
        if not isinstance(value, dict) or not isinstance(value.get("text"), str):
            errs.append(f"must be a text object [json-pointer:{ptr}]")
        elif value.get("type") not in kinds:
            errs.append(f"must be {' or '.join(kinds)} [json-pointer:{ptr}/type]")
        else:
            _check(value["text"], "len", limit, f"{ptr}/text", errs)
    elif how == "opts":  # each option's text object
        for i, item in enumerate(value if isinstance(value, list) else []):
            text = item.get("text") if isinstance(item, dict) else None
            _check(text, "text", limit, f"{ptr}/{i}/text", errs)
    elif how == "bool" and not isinstance(value, bool):
        errs.append(f"must be a boolean [json-pointer:{ptr}]")
    elif how == "hhmm" and not (
        isinstance(value, str) and re.fullmatch(r"([01]\d|2[0-3]):[0-5]\d", value)
    ):
        errs.append(f"must be in the format HH:mm [json-pointer:{ptr}]")
    elif how == "str" and not (isinstance(value, str) and value):
        errs.append(f"must be a non-empty string [json-pointer:{ptr}]")
    elif how == "items" and not isinstance(value, list):
        errs.append(f"must be an array [json-pointer:{ptr}]")
    elif how == "items" and len(value) > n:
        errs.append(f"must have at most {n} items [json-pointer:{ptr}]")
    elif how == "len" and isinstance(value, str) and len(value) > n:
        errs.append(f"must be less than {n + 1} characters [json-pointer:{ptr}]")
    elif how == "max" and isinstance(value, int) and value > n:
        errs.append(f"must be at most {n} [json-pointer:{ptr}]")


def _walk(obj: Any, kind: str, ptr: str, errs: list[str]) -> None:
    if not isinstance(obj, dict):
        errs.append(f"must be an object [json-pointer:{ptr}]")
        return
    for key, how, limit in _CHECKS["*"] + _CHECKS.get(kind, []):
        if obj.get(key) is not None:
            _check(obj[key], how, limit, f"{ptr}/{key}", errs)
        elif limit in _REQUIRED:
            errs.append(f"is required [json-pointer:{ptr}/{key}]")
    if kind in ("actions", "context_actions"):
        _walk_all(obj.get("elements"), f"{ptr}/elements", errs)
    if kind == "context_actions":
        elements = obj.get("elements")
        for i, el in enumerate(elements if isinstance(elements, list) else []):
            if not isinstance(el, dict) or el.get("type") not in _CONTEXT_ACTIONS:
                errs.append(
                    f"must be feedback_buttons or icon_button [json-pointer:{ptr}/elements/{i}]"
                )
    for key in ("positive_button", "negative_button"):
        if kind == "feedback_buttons":
            _walk(obj.get(key), "feedback_button", f"{ptr}/{key}", errs)
    for key in ("accessory", "element"):
        if kind in ("section", "input") and isinstance(obj.get(key), dict):
            _walk(obj[key], str(obj[key].get("type")), f"{ptr}/{key}", errs)
    if "confirm" in obj and kind not in ("confirm", "modal", "view"):
        _walk(obj["confirm"], "confirm", f"{ptr}/confirm", errs)


def _walk_all(items: Any, ptr: str, errs: list[str]) -> None:
    for i, item in enumerate(items if isinstance(items, list) else []):
        _walk(item, str(item.get("type")) if isinstance(item, dict) else "", f"{ptr}/{i}", errs)


def block_errors(blocks: Any, *, modal: bool = False, ptr: str = "/blocks") -> list[str]:
    """Every Block Kit limit the ``blocks`` array breaks (empty when it is fine)."""
    errs: list[str] = []
    _check(blocks, "items", "modal.blocks" if modal else "message.blocks", ptr, errs)
    _walk_all(blocks, ptr, errs)
    return errs


def view_errors(view: Any) -> list[str]:
    """Every limit a modal (or Home tab) view breaks, its blocks included."""
    errs: list[str] = []
    _walk(view, "view", "/view", errs)
    if isinstance(view, dict):
        if view.get("type") == "modal":
            _walk(view, "modal", "/view", errs)
        _walk_all(view.get("blocks"), "/view/blocks", errs)
    return errs


def texts(obj: Any) -> Iterator[str]:
    """Strings under a "text" key anywhere in ``obj`` (message text, text objects, fields)."""
    if isinstance(obj, dict):
        for key, value in obj.items():
            if key == "text" and isinstance(value, str):
                yield value
            else:
                yield from texts(value)
    elif isinstance(obj, list):
        for item in obj:
            yield from texts(item)


def parsed_texts(obj: Any) -> Iterator[str]:
    """Like :func:`texts`, but only what Slack parses for mentions and links: a message's
    ``text`` and mrkdwn text objects, not plain_text ones."""
    if isinstance(obj, dict):
        if obj.get("type") == "plain_text":
            return
        for key, value in obj.items():
            if key == "text" and isinstance(value, str):
                yield value
            else:
                yield from parsed_texts(value)
    elif isinstance(obj, list):
        for item in obj:
            yield from parsed_texts(item)


def message_errors(args: dict[str, Any]) -> tuple[str, list[str]] | None:
    """``(error, details)`` if a chat message breaks a limit, else None."""
    text = args.get("text")
    if isinstance(text, str) and len(text) > LIMITS["message.text"]:
        return "msg_too_long", ["must be less than 40001 characters [json-pointer:/text]"]
    if args.get("blocks") is None:
        return None
    errs = block_errors(args["blocks"])
    if errs:
        return "invalid_blocks", errs
    total = sum(len(t) for t in texts(args["blocks"]))
    if total > LIMITS["message.blocks_text"]:
        limit = LIMITS["message.blocks_text"]
        return "msg_blocks_too_long", [
            f"{total} characters of text, over {limit} [json-pointer:/blocks]"
        ]
    return None
