"""The manifest checked before a deploy: against Slack's published schema, and against the code.

1. **Schema.** ``infra/slack-manifest-schema.json`` is Slack's JSON schema for manifests with
   ``_metadata.major_version`` 1 (draft-07), kept byte for byte as published:
   slackapi/manifest-schema, ``schemas/manifest.schema.1.0.0.json`` at commit
   c50cfa8508ff1017344550a5e5fb29a1416e5b98 (2026-07-21; the file last changed in a936b12,
   2026-06-19). That repository's ``manifest.schema.json`` only picks a versioned file by
   ``major_version``, through remote ``$ref`` URLs; we keep the one version we write.
2. **Every Web API method the code calls has its scopes.** The calls are found by reading bot/
   (not bot/sandbox, which plays Slack): a call of a slack_sdk ``WebClient`` method by name
   (``web.chat_postMessage(…)``, ``client.views_publish(…)``; the names are read from
   slack_sdk's own ``WebClient``, each with the method its ``api_call`` names) or
   ``.api_call("…")`` with a literal method. Each method must be in ``METHOD_SCOPES``, and the
   manifest must hold every scope listed there.
3. **Every bot scope is used**: some called method needs it, or ``SCOPES_WITHOUT_METHOD`` says
   why it is there.
4. **Every subscribed bot event has a listener** (``app.event("…")`` in bot/listeners), every
   listener's event is subscribed, and each is in ``EVENT_SCOPES``; the same for slash commands
   (``app.command("…")``).

``METHOD_SCOPES`` and ``EVENT_SCOPES`` are the bot-token scopes of Slack's reference pages,
https://docs.slack.dev/reference/methods/<method> and /reference/events/<event> ("Scopes: Bot
token"), as read on 2026-12-05 in slack-ruby/slack-api-ref (a daily machine-readable scrape of
those pages: ``docs.slack.dev/methods/<method>.json`` ``"scope"`` and ``events/<event>.json``
``"scopes"``, commit f4837c0cb6dba1b1122ce66a5b69195ce47213f8, 2026-08-20). An empty tuple is a
method or event the page lists no scope for. A method the code starts calling fails here until
its page is read and its line added.
"""

from __future__ import annotations

import ast
import json
from dataclasses import dataclass
from functools import cache
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
SCHEMA = Path(__file__).with_name("slack-manifest-schema.json")
# Its git blob ID there (`git hash-object infra/slack-manifest-schema.json` gives the same).
SCHEMA_BLOB = "9fd0fc4dc3cacf19b3b11e384b6d268b65c6fc54"

# Bot-token scopes per method (docs.slack.dev/reference/methods/<method>).
METHOD_SCOPES: dict[str, tuple[str, ...]] = {
    "auth.test": (),
    "oauth.v2.access": (),
    "chat.postMessage": ("chat:write",),
    "chat.postEphemeral": ("chat:write",),
    "chat.update": ("chat:write",),
    # chat:write since 2026-03-05; assistant:write is still accepted, for now
    # (docs.slack.dev/changelog/2026/03/05/set-status-scope-update)
    "assistant.threads.setStatus": ("chat:write",),
    # One per conversation type: public, private, DM, group DM. /shop may be typed in any.
    "conversations.info": ("channels:read", "groups:read", "im:read", "mpim:read"),
    "conversations.members": ("channels:read", "groups:read", "im:read", "mpim:read"),
    "users.info": ("users:read",),
    "canvases.create": ("canvases:write",),
    "files.info": ("files:read",),
    "files.list": ("files:read",),
    "views.open": (),
    "views.publish": (),
    "views.update": (),
    # Made with the app-level token (xapp-, its own scope connections:write), never the bot's.
    "apps.connections.open": (),
}
# Bot-token scopes per event (docs.slack.dev/reference/events/<event>).
EVENT_SCOPES: dict[str, tuple[str, ...]] = {
    "app_home_opened": (),
    "app_uninstalled": (),
    "tokens_revoked": (),
}
# Scopes no Web API method needs, and why the bot asks for them.
SCOPES_WITHOUT_METHOD = {
    "commands": "the /shop slash command (features.slash_commands): Slack sends it only to an"
    " app with this scope (docs.slack.dev/reference/scopes/commands)",
}
# Calls Bolt makes for the bot, outside bot/: counted as made.
FRAMEWORK_CALLS = {
    "auth.test": "Bolt's authorize, for a single workspace's token",
    "oauth.v2.access": "Bolt's OAuth flow, when Add to Slack returns (many workspaces)",
    "apps.connections.open": "slack_sdk's Socket Mode client, under `weekly-shop dev`",
}


@dataclass(frozen=True)
class Call:
    """A Web API method named in our code, and where."""

    method: str
    where: str


def problems(manifest: dict[str, Any], kind: str, bot: Path = ROOT / "bot") -> list[str]:
    """Everything wrong with ``manifest`` (schema, then code), one sentence each."""
    found = [f"{kind}: {problem}" for problem in schema_problems(manifest)]
    return found + [f"{kind}: {problem}" for problem in code_problems(manifest, bot)]


def schema_problems(manifest: dict[str, Any]) -> list[str]:
    from jsonschema import Draft7Validator

    validator = Draft7Validator(json.loads(SCHEMA.read_text()))
    return [
        f"{'.'.join(map(str, error.absolute_path)) or 'the manifest'}: {error.message}"
        for error in sorted(validator.iter_errors(manifest), key=lambda e: list(e.absolute_path))
    ]


def code_problems(manifest: dict[str, Any], bot: Path) -> list[str]:
    scopes = set(manifest.get("oauth_config", {}).get("scopes", {}).get("bot", []))
    bolt = [Call(method, "Bolt") for method in FRAMEWORK_CALLS]
    said, needed = _method_scopes([*web_api_calls(bot), *bolt], scopes)
    for scope in sorted(scopes - needed - set(SCOPES_WITHOUT_METHOD)):
        said.append(
            f"bot scope {scope} is used by no call the code makes: remove it, or say why in"
            " SCOPES_WITHOUT_METHOD"
        )
    settings, features = manifest.get("settings", {}), manifest.get("features", {})
    events = set(settings.get("event_subscriptions", {}).get("bot_events", []))
    said += _paired("event", events, listened(bot / "listeners", "event"))
    for event in sorted(events):
        if event not in EVENT_SCOPES:
            said.append(
                f"event {event} is not in EVENT_SCOPES: look its scopes up"
                " (docs.slack.dev/reference/events) and add it"
            )
        missing = [scope for scope in EVENT_SCOPES.get(event, ()) if scope not in scopes]
        said += [f"event {event} needs {scope}: not in the manifest" for scope in missing]
    commands = {command["command"] for command in features.get("slash_commands", [])}
    said += _paired("command", commands, listened(bot / "listeners", "command"))
    if commands and "commands" not in scopes:
        said.append("features.slash_commands needs the commands scope: not in the manifest")
    return said


def _method_scopes(calls: list[Call], scopes: set[str]) -> tuple[list[str], set[str]]:
    """What the calls need that the manifest lacks, and every scope they need."""
    said: list[str] = []
    needed: set[str] = set()
    for call in calls:
        if call.method not in METHOD_SCOPES:
            said.append(
                f"{call.where} calls {call.method}, which METHOD_SCOPES does not list: look its"
                " scopes up (docs.slack.dev/reference/methods) and add it"
            )
            continue
        needed |= set(METHOD_SCOPES[call.method])
        for scope in METHOD_SCOPES[call.method]:
            if scope not in scopes:
                said.append(
                    f"{call.where} calls {call.method}, which needs {scope}: not in the manifest"
                )
    return said, needed


def _paired(what: str, subscribed: set[str], listeners: dict[str, str]) -> list[str]:
    said = [
        f"{what} {name} is subscribed but nothing listens (app.{what} in bot/listeners)"
        for name in sorted(subscribed - set(listeners))
    ]
    return said + [
        f"{listeners[name]} listens for {what} {name}, which the manifest does not subscribe"
        for name in sorted(set(listeners) - subscribed)
    ]


def web_api_calls(bot: Path) -> list[Call]:
    """Every Web API method bot/ names in a call, bot/sandbox left out."""
    names = client_methods()
    calls = []
    for path in sorted(bot.rglob("*.py")):
        if "sandbox" in path.relative_to(bot).parts:
            continue
        for node in ast.walk(ast.parse(path.read_text(), str(path))):
            if not isinstance(node, ast.Call) or not isinstance(node.func, ast.Attribute):
                continue
            where = f"{path.relative_to(bot.parent)}:{node.lineno}"
            if node.func.attr in names:
                calls += [Call(method, where) for method in names[node.func.attr]]
            elif method := _api_call(node):
                calls.append(Call(method, where))
    return calls


@cache
def client_methods() -> dict[str, tuple[str, ...]]:
    """slack_sdk ``WebClient``'s method names, each with the Web API method(s) it calls."""
    import slack_sdk.web.client as source

    tree = ast.parse(Path(source.__file__).read_text())
    client = next(n for n in tree.body if isinstance(n, ast.ClassDef) and n.name == "WebClient")
    # Two helpers call several methods each (slack_sdk/web/client.py, chat_stream's ChatStream
    # and files_upload_v2's docstrings).
    names: dict[str, tuple[str, ...]] = {
        "chat_stream": ("chat.startStream", "chat.appendStream", "chat.stopStream"),
        "files_upload_v2": ("files.getUploadURLExternal", "files.completeUploadExternal"),
    }
    for function in client.body:
        if isinstance(function, ast.FunctionDef) and function.name not in names:
            for node in ast.walk(function):
                if method := _api_call(node):
                    names[function.name] = (method,)
                    break
    return names


def listened(listeners: Path, kind: str) -> dict[str, str]:
    """``app.<kind>("name")`` in bot/listeners: each name, with where it is registered."""
    found: dict[str, str] = {}
    for path in sorted(listeners.rglob("*.py")):
        for node in ast.walk(ast.parse(path.read_text(), str(path))):
            if (
                isinstance(node, ast.Call)
                and isinstance(node.func, ast.Attribute)
                and node.func.attr == kind
                and isinstance(node.func.value, ast.Name)
                and node.func.value.id == "app"
                and node.args
                and _text(node.args[0])
            ):
                found.setdefault(_text(node.args[0]), f"{path.name}:{node.lineno}")
    return found


def _api_call(node: ast.AST) -> str:
    """The method of ``….api_call("method", …)`` when written out; else ""."""
    if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.args:
        return _text(node.args[0]) if node.func.attr == "api_call" else ""
    return ""


def _text(node: ast.expr) -> str:
    return node.value if isinstance(node, ast.Constant) and isinstance(node.value, str) else ""
