"""The Slack app's two manifests come from one source (infra/manifest.py), pass Slack's published
schema, and are true to the code: every Web API method it calls has its scopes, every scope is
used, every subscribed event and command has its listener and the other way round
(infra/manifest_checks.py; each check is shown failing below). The Slack CLI's project files
(.slack/) run the dev manifest and ``weekly-shop dev``.

The scopes of each method and event are those of Slack's reference pages,
https://docs.slack.dev/reference/methods/<method> and /reference/events/<event>, read through
slack-ruby/slack-api-ref (commit f4837c0c, a scrape of those pages): see
infra/manifest_checks.py's docstring. The hooks protocol: slackapi/slack-cli
``.github/cli-sdk-specification.md`` and ``internal/hooks/`` (hooks.json merged over get-hooks'
answer; ``--protocol``/``--boundary`` appended to each hook's command once message boundaries
are agreed; ``start`` gets the tokens as SLACK_CLI_XAPP/SLACK_CLI_XOXB and
SLACK_APP_TOKEN/SLACK_BOT_TOKEN), slackapi/python-slack-hooks ``slack_cli_hooks/hooks/``.
"""

from __future__ import annotations

import copy
import hashlib
import json
import shlex
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
import yaml
from hypothesis import given
from hypothesis import strategies as st

from tests.infra_scripts import load

ROOT = Path(__file__).resolve().parent.parent
source = load("manifest")
checks = load("manifest_checks")
KINDS = ("deploy", "dev")
HOOKS = json.loads((ROOT / ".slack" / "hooks.json").read_text())


def keys(value: Any) -> set[str]:
    """Every key anywhere in a manifest."""
    if isinstance(value, dict):
        return set(value) | {k for v in value.values() for k in keys(v)}
    if isinstance(value, list):
        return {k for v in value for k in keys(v)}
    return set()


@pytest.mark.parametrize("kind", KINDS)
def test_the_committed_files_are_what_the_source_writes(kind: str) -> None:
    path = source.FILES[kind]
    assert path.read_text() == source.render(kind), "python infra/manifest.py --write"
    # The YAML (with its comments) reads back as the manifest itself.
    assert yaml.safe_load(path.read_text()) == source.manifest(kind)


@given(st.text())
def test_any_text_reads_back_from_the_yaml_as_written(text: str) -> None:
    """A manifest string written plain when YAML reads it back unchanged, else quoted."""
    assert yaml.safe_load(f"key: {source._scalar(text)}")["key"] == text


def test_a_file_edited_by_hand_is_caught(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    files = {kind: tmp_path / path.name for kind, path in source.FILES.items()}
    for kind, path in files.items():
        path.write_text(source.render(kind))
    monkeypatch.setattr(source, "FILES", files)
    assert list(source.stale()) == []
    files["dev"].write_text(source.render("dev").replace("- files:read", "- files:write"))
    (stale,) = source.stale()
    assert stale.startswith("slack-app-manifest.dev.yml is not what") and "--write" in stale


def test_dev_differs_from_deploy_only_in_name_urls_and_socket_mode() -> None:
    deploy, dev = source.manifest("deploy"), source.manifest("dev")
    assert dev["settings"]["socket_mode_enabled"] is True
    assert deploy["settings"]["socket_mode_enabled"] is False
    assert not keys(dev) & {"url", "request_url", "redirect_urls"}
    assert dev["display_information"]["name"] == "Weekly shop (dev)"
    # Take the URLs and names out of the deploy manifest: what is left is the dev one.
    same = copy.deepcopy(deploy)
    del same["features"]["slash_commands"][0]["url"], same["oauth_config"]["redirect_urls"]
    del same["settings"]["event_subscriptions"]["request_url"]
    del same["settings"]["interactivity"]["request_url"]
    same["settings"]["socket_mode_enabled"] = True
    same["display_information"]["name"] = same["features"]["bot_user"]["display_name"] = (
        "Weekly shop (dev)"
    )
    assert same == dev


def test_the_scopes_and_redirect_are_the_oauth_flows() -> None:
    from bot.slack.installs import REDIRECT_PATH, SCOPES

    for kind in KINDS:
        assert source.manifest(kind)["oauth_config"]["scopes"]["bot"] == SCOPES
    (redirect,) = source.manifest("deploy")["oauth_config"]["redirect_urls"]
    assert source.REDIRECT_PATH == REDIRECT_PATH
    assert redirect == source.PLACEHOLDER + REDIRECT_PATH


def test_base_url_prints_the_deploy_manifest_with_the_apis_urls() -> None:
    api = "https://abc123.execute-api.eu-west-1.amazonaws.com"
    printed = yaml.safe_load(source.render("deploy", api))
    assert printed == source.manifest("deploy", api)
    urls = [
        printed["features"]["slash_commands"][0]["url"],
        printed["settings"]["interactivity"]["request_url"],
        printed["settings"]["event_subscriptions"]["request_url"],
    ]
    assert urls == [f"{api}/slack/events"] * 3
    assert printed["oauth_config"]["redirect_urls"] == [f"{api}/slack/oauth_redirect"]


def test_the_kept_schema_is_slacks_as_published() -> None:
    data = checks.SCHEMA.read_bytes()
    blob = hashlib.sha1(b"blob %d\0" % len(data) + data).hexdigest()  # git hash-object
    assert blob == checks.SCHEMA_BLOB
    assert json.loads(data)["$schema"] == "http://json-schema.org/draft-07/schema#"


@pytest.mark.parametrize("kind", KINDS)
def test_both_manifests_pass_slacks_schema_and_the_code(kind: str) -> None:
    assert checks.problems(source.manifest(kind), kind) == []


def test_the_schema_check_catches_what_slack_refuses() -> None:
    bad = source.manifest("dev")
    bad["display_information"]["name"] = "x" * 36  # the schema's maxLength is 35
    bad["settings"]["socket_mode"] = True  # not a settings key
    del bad["features"]["slash_commands"][0]["description"]  # required
    said = checks.schema_problems(bad)
    assert len(said) == 3
    assert any(s.startswith("display_information.name:") and "too long" in s for s in said)
    assert any("socket_mode" in s and "Additional properties" in s for s in said)
    assert any(s.startswith("features.slash_commands.0:") and "description" in s for s in said)


def test_make_lint_runs_the_check() -> None:
    lint = (ROOT / "Makefile").read_text().split("\nlint:")[1].split("\n\n")[0]
    assert "$(BIN)/python infra/manifest.py --check" in lint
    run = subprocess.run(
        [sys.executable, "infra/manifest.py", "--check"], cwd=ROOT, capture_output=True, text=True
    )
    assert (run.returncode, run.stderr) == (0, "")


def test_the_scan_finds_the_calls_the_code_makes() -> None:
    calls = checks.web_api_calls(ROOT / "bot")
    where = {(c.method, c.where.split(":")[0]) for c in calls}
    assert ("chat.postMessage", "bot/slack/outbox.py") in where
    assert ("canvases.create", "bot/orders/canvas.py") in where
    assert ("views.publish", "bot/steps/home.py") in where
    assert not [c for c in calls if c.where.startswith("bot/sandbox/")]
    # Every method of the table is one slack_sdk knows (a typo would never match a call).
    known = {m for methods in checks.client_methods().values() for m in methods}
    assert set(checks.METHOD_SCOPES) <= known


def without(manifest: dict[str, Any], scope: str) -> dict[str, Any]:
    changed = copy.deepcopy(manifest)
    changed["oauth_config"]["scopes"]["bot"].remove(scope)
    return changed


def test_a_scope_removed_is_caught() -> None:
    said = checks.code_problems(without(source.manifest("dev"), "files:read"), ROOT / "bot")
    assert said and all("needs files:read: not in the manifest" in s for s in said)
    assert {s.split(" calls ")[1].split(",")[0] for s in said} == {"files.info", "files.list"}
    # commands: no method needs it, the slash command does.
    assert checks.code_problems(without(source.manifest("dev"), "commands"), ROOT / "bot") == [
        "features.slash_commands needs the commands scope: not in the manifest"
    ]


def test_an_unused_scope_is_caught() -> None:
    extra = copy.deepcopy(source.manifest("dev"))
    extra["oauth_config"]["scopes"]["bot"].append("reactions:write")
    assert checks.code_problems(extra, ROOT / "bot") == [
        "bot scope reactions:write is used by no call the code makes: remove it, or say why in"
        " SCOPES_WITHOUT_METHOD"
    ]


def test_an_event_without_a_listener_is_caught() -> None:
    extra = copy.deepcopy(source.manifest("dev"))
    extra["settings"]["event_subscriptions"]["bot_events"].append("message.channels")
    assert checks.code_problems(extra, ROOT / "bot") == [
        "event message.channels is subscribed but nothing listens (app.event in bot/listeners)",
        "event message.channels is not in EVENT_SCOPES: look its scopes up"
        " (docs.slack.dev/reference/events) and add it",
    ]


def test_a_listener_without_its_subscription_is_caught() -> None:
    fewer = copy.deepcopy(source.manifest("dev"))
    fewer["settings"]["event_subscriptions"]["bot_events"].remove("tokens_revoked")
    fewer["features"]["slash_commands"][0]["command"] = "/groceries"
    said = checks.code_problems(fewer, ROOT / "bot")
    assert len(said) == 3
    assert said[0].startswith("events.py:") and said[0].endswith(
        "listens for event tokens_revoked, which the manifest does not subscribe"
    )
    assert said[1] == "command /groceries is subscribed but nothing listens (app.command in" \
        " bot/listeners)"  # fmt: skip
    assert said[2].startswith("commands.py:") and "listens for command /shop" in said[2]


def test_a_method_no_one_looked_up_is_caught(tmp_path: Path) -> None:
    """A call the table does not know, by WebClient name or by ``api_call``; bot/sandbox (which
    plays Slack) is not read."""
    bot = tmp_path / "bot"
    (bot / "listeners").mkdir(parents=True)
    (bot / "sandbox").mkdir()
    (bot / "react.py").write_text(
        "def react(web):\n"
        "    web.reactions_add(channel='C1', name='tada', timestamp='1.2')\n"
        "    web.api_call('pins.add', json={'channel': 'C1'})\n"
    )
    (bot / "sandbox" / "fake.py").write_text("def f(web):\n    web.bookmarks_add()\n")
    (bot / "listeners" / "app.py").write_text(
        "def register(app):\n    app.event('app_home_opened')(print)\n"
        "    app.event('app_uninstalled')(print)\n    app.event('tokens_revoked')(print)\n"
        "    app.command('/shop')(print)\n"
    )
    said = checks.code_problems(source.manifest("dev"), bot)
    unknown = [s for s in said if "METHOD_SCOPES does not list" in s]
    assert [s.split(",")[0] for s in unknown] == [
        "bot/react.py:2 calls reactions.add",
        "bot/react.py:3 calls pins.add",
    ]
    assert not [s for s in said if "bookmarks" in s]


def test_the_hooks_file_names_the_dev_manifest_and_weekly_shop_dev() -> None:
    hooks = HOOKS["hooks"]
    assert hooks["get-hooks"] == ".venv/bin/python -m slack_cli_hooks.hooks.get_hooks"
    start = shlex.split(hooks["start"])
    assert Path(start[0]).name == "weekly-shop" and start[1:] == ["dev"]
    assert shlex.split(hooks["get-manifest"])[1:] == ["infra/manifest.py", "--dev", "--json"]
    assert json.loads((ROOT / ".slack" / "config.json").read_text())["manifest"] == {
        "source": "local"
    }
    assert "apps.dev.json" in (ROOT / ".slack" / ".gitignore").read_text().split()


def run_hook(command: str, *appended: str) -> str:
    """A hook's command as the Slack CLI runs it: through the shell, in the project's root, any
    protocol arguments appended (here with this test's Python for the project's venv)."""
    line = command.replace(".venv/bin/", f"{Path(sys.executable).parent}/", 1)
    run = subprocess.run(
        " ".join([line, *appended]), shell=True, cwd=ROOT, capture_output=True, text=True
    )
    assert run.returncode == 0, run.stderr
    return run.stdout


def test_get_manifest_prints_the_dev_manifest_in_either_protocol() -> None:
    command = HOOKS["hooks"]["get-manifest"]
    assert json.loads(run_hook(command)) == source.manifest("dev")
    fenced = run_hook(command, "--protocol=message-boundaries", "--boundary=b0und4ry")
    before, inside, after = fenced.split("b0und4ry")
    assert (before, after.strip()) == ("", "")
    assert json.loads(inside) == source.manifest("dev")


def test_hooks_json_overrides_what_slack_cli_hooks_offers() -> None:
    """The CLI decodes get-hooks' answer, then hooks.json over it (slack-cli
    ``goutils.MergeJSON``): our get-manifest and start win; the SDK's protocol, its
    SDK-managed connection (the start hook opens the socket itself) and its doctor stay."""
    offered = json.loads(run_hook(HOOKS["hooks"]["get-hooks"]))
    assert offered["config"]["sdk-managed-connection-enabled"] is True
    assert offered["config"]["protocol-version"][0] == "message-boundaries"
    merged = merge(offered, HOOKS)
    assert merged["hooks"]["get-manifest"] == HOOKS["hooks"]["get-manifest"]
    assert merged["hooks"]["start"] == HOOKS["hooks"]["start"]
    assert "slack_cli_hooks.hooks.doctor" in merged["hooks"]["doctor"]
    # A change to the source reinstalls the dev app; a change to the code restarts the bot.
    assert merged["config"]["watch"]["manifest"]["paths"] == ["infra/manifest.py"]
    assert merged["config"]["watch"]["app"]["paths"] == ["bot", "workflow"]


def merge(under: dict[str, Any], over: dict[str, Any]) -> dict[str, Any]:
    """Go's json.Decode into a filled struct: objects merge key by key, anything else replaces."""
    out = dict(under)
    for key, value in over.items():
        both = isinstance(value, dict) and isinstance(out.get(key), dict)
        out[key] = merge(out[key], value) if both else value
    return out
