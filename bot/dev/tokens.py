"""The two Slack tokens ``weekly-shop dev`` needs, and where it finds them.

- ``SLACK_APP_TOKEN``: the app-level token (``xapp-``, scope ``connections:write``) that opens
  Socket Mode connections (``apps.connections.open``);
- ``SLACK_BOT_TOKEN``: the bot token (``xoxb-``) that every Web API call is made with.

In this order: ``SLACK_CLI_XAPP`` / ``SLACK_CLI_XOXB``, which the Slack CLI gives its start hook
during ``slack run`` (slackapi/slack-cli, ``LocalServer.StartDelegate``; Bolt's
``slack_bolt/cli/start.py`` reads the same names); then the variables above in the environment;
then the same names in the env file (default ``.env`` in the current folder, which git ignores):
``KEY=VALUE`` lines, ``#`` comments (after an unquoted value too), an optional ``export``,
quotes around a value removed. A token's value is never printed: a problem names the variable
and the file, and at most the five-character prefix a wrong token has (``xoxb-`` where
``xapp-`` belongs).
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

from bot.settings_env import Secret

APP_TOKEN, BOT_TOKEN = "SLACK_APP_TOKEN", "SLACK_BOT_TOKEN"
CLI_APP_TOKEN, CLI_BOT_TOKEN = "SLACK_CLI_XAPP", "SLACK_CLI_XOXB"
PREFIXES = {APP_TOKEN: "xapp-", BOT_TOKEN: "xoxb-"}
WHERE = {
    APP_TOKEN: "the app's Basic Information page, App-Level Tokens (scope connections:write)",
    BOT_TOKEN: "the app's OAuth & Permissions page, Bot User OAuth Token, once it is installed",
}
_LINE = re.compile(r"(?:export\s+)?([A-Za-z_][A-Za-z0-9_]*)\s*=\s*(.*)")


class TokenProblem(Exception):
    """A token is missing or is not the kind of token its variable wants (the message says
    which, and where to get it)."""


@dataclass(frozen=True)
class Tokens:
    app: Secret
    bot: Secret
    source: str  # where they came from, for the banner: "the Slack CLI", ".env", …


def read_env_file(path: Path) -> dict[str, str]:
    """``KEY=VALUE`` lines of ``path`` (lines that are not are skipped)."""
    values: dict[str, str] = {}
    for raw in path.read_text(encoding="utf-8").splitlines():
        line = raw.strip()
        found = _LINE.fullmatch(line) if line and not line.startswith("#") else None
        if found is None:
            continue
        value = found.group(2).strip()
        if len(value) >= 2 and value[0] == value[-1] and value[0] in "'\"":
            value = value[1:-1]
        else:  # an unquoted value ends where a comment starts, as in a shell
            value = value.split(" #", 1)[0].strip()
        values[found.group(1)] = value
    return values


def find_tokens(environ: Mapping[str, str], file: Mapping[str, str], file_name: str) -> Tokens:
    """The two tokens (module docstring: which source wins); TokenProblem listing every
    problem at once, so one edit of the file fixes them all."""
    chosen: dict[str, str] = {}
    sources: set[str] = set()
    problems: list[str] = []
    for name, cli_name in ((APP_TOKEN, CLI_APP_TOKEN), (BOT_TOKEN, CLI_BOT_TOKEN)):
        for source, value in (
            ("the Slack CLI", environ.get(cli_name)),
            ("the environment", environ.get(name)),
            (file_name, file.get(name)),
        ):
            if value:
                chosen[name] = value.strip()
                sources.add(source)
                break
        value = chosen.get(name, "")
        want = PREFIXES[name]
        if not value:
            problems.append(f"{name} is not set: put {name}={want}… in {file_name} ({WHERE[name]})")
        elif not value.startswith(want):
            got = value[:5] if re.fullmatch(r"x[a-z]{3}-", value[:5]) else "something else"
            problems.append(f"{name} must start with {want} but starts with {got} ({WHERE[name]})")
    if problems:
        raise TokenProblem("\n".join(problems))
    return Tokens(
        Secret(chosen[APP_TOKEN]), Secret(chosen[BOT_TOKEN]), " and ".join(sorted(sources))
    )
