"""The Slack app's manifest, written once here; the two files Slack is given are made from it.

- ``infra/slack-app-manifest.yml``, the deployed app: Slack sends events, commands and clicks to
  the API's ``/slack/events`` (the URLs are placeholders the operator replaces after deploy,
  infra/README.md), and Add to Slack returns to ``/slack/oauth_redirect``;
- ``infra/slack-app-manifest.dev.yml``, a development app: Socket Mode on, so the same payloads
  come over a WebSocket that ``weekly-shop dev`` opens with the app-level token, and no request
  URL or redirect at all. Same scopes, events, command and Home tab, by construction.

The two differ only where ``manifest(kind)`` says so. With Socket Mode on, "instead of sending
payloads to a public endpoint, Slack will use a WebSocket URL" (docs.slack.dev/apis/events-api/
using-socket-mode), so the dev manifest names no URL that nobody serves; the schema makes every
URL optional (infra/slack-manifest-schema.json), and the Bolt for Python template's Socket Mode
manifest has none either (slack-samples/bolt-python-starter-template ``manifest.json``:
interactivity ``is_enabled`` alone, ``socket_mode_enabled: true``). The Slack CLI's ``slack
run`` appends " (local)" to both names (slackapi/slack-cli ``appendLocalToDisplayName``).

    python infra/manifest.py --write         # both files, from this module
    python infra/manifest.py --check         # make lint: both files as written here, valid against
                                             # Slack's schema, and true to the code
                                             # (infra/manifest_checks.py)
    python infra/manifest.py --dev --json    # the dev manifest as JSON: the Slack CLI's
                                             # get-manifest hook (.slack/hooks.json)
    python infra/manifest.py --base-url https://abc.execute-api.eu-west-1.amazonaws.com
                                             # the deploy manifest with the API's URLs, to paste

The Slack CLI runs get-manifest with ``--protocol=message-boundaries --boundary=<random>``
appended once the ``get-hooks`` answer (slack_cli_hooks: ``protocol-version:
["message-boundaries", "default"]``) chose that protocol; the answer must then sit between two
copies of the boundary (slackapi/slack-cli ``internal/hooks/hook_executor_v2.go``; the same as
slack_cli_hooks' ``MessageBoundaryProtocol.respond``). Without those arguments the JSON is printed
alone (the default protocol).

Standard library only: the hook runs on every ``slack run``; jsonschema is imported by --check.
"""

from __future__ import annotations

import argparse
import json
import re
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any, Literal

Kind = Literal["deploy", "dev"]
Path_ = tuple[str, ...]

HERE = Path(__file__).resolve().parent
FILES: dict[Kind, Path] = {
    "deploy": HERE / "slack-app-manifest.yml",
    "dev": HERE / "slack-app-manifest.dev.yml",
}
PLACEHOLDER = "https://YOUR-API-ID.execute-api.REGION.amazonaws.com"
EVENTS_PATH = "/slack/events"  # the one route for commands, clicks and events (serverless.yml)
REDIRECT_PATH = "/slack/oauth_redirect"  # bot.slack.installs.REDIRECT_PATH
BOUNDARIES = "message-boundaries"

# The bot's scopes, each with why; Add to Slack asks for the same list
# (bot.slack.installs.SCOPES; tests/test_manifest.py holds them equal). Which Web API method
# needs which scope: infra/manifest_checks.py.
BOT_SCOPES: tuple[tuple[str, str], ...] = (
    ("commands", ""),
    ("chat:write", ""),
    ("channels:read", "conversations.info before /shop writes a basket: may the bot post where"
     " it was typed?\n(metadata of the conversation only, never its messages)"),
    ("groups:read", ""),
    ("im:read", ""),
    ("mpim:read", ""),
    ("users:read", "users.info for the Settings modal: who may change the settings (is_admin,"
     " is_owner),\ntheir time zone, and that the approvers named are people of this workspace"),
    ("canvases:write", "An approved basket's shopping list: a canvas tabbed in the basket's"
     " channel\n(canvases.create, bot/orders/canvas.py)"),
    ("files:read", "files.list, only when a process died between Slack making that canvas and"
     " the bot\nrecording it: the retry finds it by the order's reference in its title, instead"
     " of\nmaking a second one (bot/orders/place.py)"),
)  # fmt: skip
# The events the bot subscribes to, each with why; each has its Bolt listener in bot/listeners.
BOT_EVENTS: tuple[tuple[str, str], ...] = (
    ("app_home_opened", ""),
    ("app_uninstalled", "The app removed from the workspace: everything of it is deleted"
     " (bot/steps/uninstall.py)."),
    ("tokens_revoked", ""),
)  # fmt: skip

DEPLOY_HEADER = """\
Slack app manifest for weekly-shop. Create the app at https://api.slack.com/apps →
"Create New App" → "From an app manifest", paste this file, then follow infra/README.md.
Written by infra/manifest.py (`python infra/manifest.py --write`): change that, not this file;
`make lint` fails while they differ. The development app's: slack-app-manifest.dev.yml.

The four URLs below are placeholders: after `npx serverless deploy` (osls, infra/README.md),
replace the host in each with the API's (the SlackEventsUrl output,
https://<api-id>.execute-api.<region>.amazonaws.com/slack/events): the three /slack/events in
features.slash_commands[0].url, settings.interactivity.request_url AND
settings.event_subscriptions.request_url, and, with many workspaces, oauth_config.redirect_urls[0]
(/slack/oauth_redirect). Do it on the App Manifest page in the app's settings, or paste this
file as `python infra/manifest.py --base-url https://<api-id>.execute-api.<region>.amazonaws.com`
prints it. Slack checks the events URL with a signed url_verification when it is saved."""

DEV_HEADER = """\
Slack app manifest for a development copy of weekly-shop: the bot on your machine, over Socket
Mode (a WebSocket the bot opens to Slack), so no public URL and no deploy. Same scopes, events,
command and Home tab as slack-app-manifest.yml. Written by infra/manifest.py
(`python infra/manifest.py --write`): change that, not this file; `make lint` fails while they
differ.

Either `slack run` (the Slack CLI creates and installs the app from this manifest:
.slack/hooks.json), or create the app from this file at https://api.slack.com/apps, make an
app-level token with connections:write (Basic Information → App-Level Tokens), install it, and
run `weekly-shop dev` with SLACK_APP_TOKEN (xapp-…) and SLACK_BOT_TOKEN (xoxb-…)."""


def manifest(kind: Kind, base_url: str = PLACEHOLDER) -> dict[str, Any]:
    """The manifest of ``kind``, as Slack's manifest JSON (``_metadata.major_version`` 1)."""
    deployed = kind == "deploy"
    events_url = {"url": base_url + EVENTS_PATH} if deployed else {}
    request_url = {"request_url": base_url + EVENTS_PATH} if deployed else {}
    redirect = {"redirect_urls": [base_url + REDIRECT_PATH]} if deployed else {}
    name = "Weekly shop" if deployed else "Weekly shop (dev)"
    return {
        "_metadata": {"major_version": 1, "minor_version": 1},
        "display_information": {
            "name": name,
            "description": "An AI shopper writes the week's basket; you approve it, reject it or"
            " ask for a change.",
            "background_color": "#2f6f4e",
        },
        "features": {
            "app_home": {
                "home_tab_enabled": True,
                "messages_tab_enabled": False,
                "messages_tab_read_only_enabled": False,
            },
            "bot_user": {"display_name": name, "always_online": False},
            "slash_commands": [
                {
                    "command": "/shop",
                    **events_url,
                    "description": "Get this week's shopping basket to approve",
                    "usage_hint": "dinners this week and what we have",
                    "should_escape": False,
                }
            ],
        },
        "oauth_config": {**redirect, "scopes": {"bot": [scope for scope, _ in BOT_SCOPES]}},
        "settings": {
            "event_subscriptions": {**request_url, "bot_events": [e for e, _ in BOT_EVENTS]},
            "interactivity": {"is_enabled": True, **request_url},
            "org_deploy_enabled": False,
            "socket_mode_enabled": not deployed,
            "token_rotation_enabled": False,
        },
    }


def comments(kind: Kind) -> dict[Path_, str]:
    """What the YAML says above a key or a list item, by its path in the manifest."""
    said: dict[Path_, str] = {
        ("features", "app_home"): "The Home tab: what waits, what was ordered, Repeat this order"
        " (app_home_opened below).",
        ("settings", "event_subscriptions"): "app_home_opened needs no scope of its own, nor does"
        " views.publish.",
    }
    for scope, why in BOT_SCOPES:
        if why:
            said["oauth_config", "scopes", "bot", scope] = why
    for event, why in BOT_EVENTS:
        if why:
            said["settings", "event_subscriptions", "bot_events", event] = why
    if kind == "deploy":
        said["oauth_config", "redirect_urls"] = (
            "Many workspaces only (WORKSPACES=many): where Slack sends the browser back after Add"
            " to Slack."
        )
    else:
        said["settings", "socket_mode_enabled"] = (
            "Commands, clicks and events come over the WebSocket `weekly-shop dev` opens with"
            " the\napp-level token (xapp-, scope connections:write): no request URL anywhere above."
        )
    return said


def render(kind: Kind, base_url: str = PLACEHOLDER) -> str:
    """The YAML file of ``kind``: its header, then the manifest with its comments."""
    header = DEPLOY_HEADER if kind == "deploy" else DEV_HEADER
    lines = [f"# {line}".rstrip() for line in header.splitlines()]
    lines += _mapping(manifest(kind, base_url), (), comments(kind), 0)
    return "\n".join(lines) + "\n"


def _mapping(value: dict[str, Any], at: Path_, said: dict[Path_, str], indent: int) -> list[str]:
    pad, lines = " " * indent, []
    for key, item in value.items():
        lines += _comment(said.get((*at, key)), indent)
        if isinstance(item, dict):
            lines += [f"{pad}{key}:", *_mapping(item, (*at, key), said, indent + 2)]
        elif isinstance(item, list):
            lines += [f"{pad}{key}:", *_sequence(item, (*at, key), said, indent + 2)]
        else:
            lines.append(f"{pad}{key}: {_scalar(item)}")
    return lines


def _sequence(items: list[Any], at: Path_, said: dict[Path_, str], indent: int) -> list[str]:
    pad, lines = " " * indent, []
    for item in items:
        if isinstance(item, dict):
            # "- " and the first key on one line, the rest under that key
            first, *rest = _mapping(item, at, said, indent + 2)
            lines += [f"{pad}- {first.lstrip()}", *rest]
        else:
            lines += [*_comment(said.get((*at, str(item))), indent), f"{pad}- {_scalar(item)}"]
    return lines


def _comment(text: str | None, indent: int) -> list[str]:
    return [f"{' ' * indent}# {line}" for line in text.splitlines()] if text else []


# A plain YAML scalar that reads back as the same string: printable ASCII, no indicator first,
# no ": " or " #" inside, no ":" or space last, and nothing YAML 1.1 reads as another type (a
# boolean, null, a number, a date, a merge key). Anything else is a JSON string, which is a YAML
# double-quoted scalar, with what YAML would not keep raw (C1 controls, its own line breaks, a
# BOM) escaped as \U (tests/test_manifest.py reads arbitrary text back).
_PLAIN = re.compile(r"(?![-?:,\[\]{}#&*!|>'\"%@`\s])(?!.*(?:: | #))(?!.*[:\s]\Z)[\x20-\x7e]+")
_OTHER_TYPE = re.compile(r"y|n|yes|no|true|false|on|off|null|~|=|<<|[-+]?\.?(?:\d|inf|nan).*", re.I)
_RAW = re.compile("[\x7f-\x9f\u2028\u2029\ufeff]")


def _scalar(value: object) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int):
        return str(value)
    text = str(value)
    if _PLAIN.fullmatch(text) and not _OTHER_TYPE.fullmatch(text):
        return text
    return _RAW.sub(lambda c: f"\\U{ord(c[0]):08x}", json.dumps(text, ensure_ascii=False))


def stale() -> Iterator[str]:
    """The committed files that differ from what ``render`` writes."""
    for kind, path in FILES.items():
        if not path.exists() or path.read_text() != render(kind):
            yield f"{path.name} is not what infra/manifest.py writes: run it with --write"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    todo = parser.add_mutually_exclusive_group()
    todo.add_argument("--write", action="store_true", help="write both manifest files")
    todo.add_argument("--check", action="store_true", help="check both (make lint)")
    todo.add_argument("--json", action="store_true", help="print a manifest as JSON")
    todo.add_argument("--base-url", help="print the deploy manifest with this API's URLs")
    parser.add_argument("--dev", action="store_true", help="the development manifest (--json)")
    # What the Slack CLI appends to a hook's command once message boundaries are agreed.
    parser.add_argument("--protocol", help=argparse.SUPPRESS)
    parser.add_argument("--boundary", default="", help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.write:
        for kind, path in FILES.items():
            path.write_text(render(kind))
        return 0
    if args.check:
        import manifest_checks  # beside this file: sys.path[0] when run as a script

        problems = [*stale()]
        for kind in FILES:
            problems += manifest_checks.problems(manifest(kind), kind)
        for problem in problems:
            print(problem, file=sys.stderr)
        return 1 if problems else 0
    if args.base_url:
        sys.stdout.write(render("deploy", args.base_url.rstrip("/")))
        return 0
    if args.json:
        text = json.dumps(manifest("dev" if args.dev else "deploy"), indent=2, ensure_ascii=False)
        fence = args.boundary if args.protocol == BOUNDARIES else ""
        print(f"{fence}{text}{fence}")
        return 0
    parser.print_usage(sys.stderr)
    return 2


if __name__ == "__main__":
    sys.exit(main())
