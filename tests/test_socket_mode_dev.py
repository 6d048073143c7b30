"""The README's "On your own Slack" steps, end to end, with Slack played on 127.0.0.1: a ``.env``
with the two tokens, ``weekly-shop dev`` (what ``make dev`` runs) as its own process, ``/shop``
typed in Slack. The fake Web API and its Socket Mode end (``bot.sandbox.socket_mode_slack``) stand
in for Slack; the app's side is the real one: Bolt's ``SocketModeHandler`` over slack_sdk's
built-in WebSocket client, the bot's listeners, moto's S3 in the dev process.

One session: ``/shop`` posts basket 1, Change… writes basket 2, Slack asks for a new connection
(``disconnect``, ``refresh_requested``) and the app reconnects, Edit items edits basket 2,
Approve orders it; the ``/shop`` and the Approve envelopes are each delivered twice and change
nothing the second time; every envelope is acked within Slack's 3 seconds; Ctrl-C ends the
process with exit code 0 and no process left behind. ``ORDER_DELAY=0`` (the undo window off)
is the only setting beyond the README's: a basket is otherwise ordered 2 minutes after Approve.
"""

from __future__ import annotations

import signal
import subprocess
import time
from pathlib import Path
from typing import Any

import pytest

from bot.sandbox.socket_mode_slack import SocketModeSlack
from bot.slack.edit_form import EDIT_MODAL
from tests.settings_kit import submitted
from tests.socket_mode_kit import (
    ROOT,
    Person,
    basket,
    baskets,
    children,
    clean_env,
    last_view,
    ordered,
    running_dev,
    socket_mode_slack,
)
from tests.test_sandbox import wait_for

README = (ROOT / "README.md").read_text(encoding="utf-8")


@pytest.fixture
def slack() -> Any:
    with socket_mode_slack() as fake:
        yield fake


def write_env_file(folder: Path, slack: SocketModeSlack) -> None:
    """The README's step 2: the two tokens in ``.env``."""
    (folder / ".env").write_text(
        f"SLACK_APP_TOKEN={slack.app_token}\nSLACK_BOT_TOKEN={slack.token}\n", encoding="utf-8"
    )


def edit_form(slack: SocketModeSlack, user: str) -> dict[str, Any]:
    """The Edit items modal once its lazy run has filled it in."""

    def filled() -> dict[str, Any] | None:
        view = slack.open_view(user)
        blocks = (view or {}).get("blocks", [])
        return view if any(b.get("block_id") == "remove" for b in blocks) else None

    return wait_for(filled)


def test_the_readme_steps_run_a_whole_session_over_socket_mode(
    slack: SocketModeSlack, tmp_path: Path
) -> None:
    assert "make dev" in README and "SLACK_APP_TOKEN=xapp-" in README
    write_env_file(tmp_path, slack)
    env = clean_env(SLACK_API_URL=slack.url, ORDER_DELAY="0")
    alice, bob = Person(slack, "U0ALICE"), Person(slack, "U0BOB")
    server = slack.socket_mode
    with running_dev(tmp_path, env) as dev:
        assert "Offline shopper" in "".join(dev.banner)
        assert slack.app_token not in "".join(dev.banner) and slack.token not in "".join(dev.banner)
        server.wait_connected(1)

        shop = alice.shop("fish on Friday, pasta on Monday")
        assert server.wait_acked(shop).response == {"text": "Writing your basket…"}
        server.deliver_again(shop)  # the same envelope again while its basket is being written
        first = basket(slack, 1)

        server.wait_acked(bob.click(first, "change_basket"))
        change = last_view(slack, "views.open")
        server.wait_acked(bob.submit(change, {"change": {"change_text": "no fish, add soup"}}))
        second = basket(slack, 2)

        assert server.disconnect(grace=1.0) == 1
        server.wait_connected(2)
        wait_for(lambda: server.open_connections() == 1)

        server.wait_acked(bob.click(second, "edit_basket"))
        form = edit_form(slack, "U0BOB")
        qty = next(
            b["block_id"] for b in form["blocks"] if b.get("block_id", "").startswith("qty-")
        )
        assert form["callback_id"] == EDIT_MODAL
        server.wait_acked(bob.submit(form, submitted(form, **{qty: {"value": "7"}})))
        wait_for(lambda: "edited by" in str(slack.message("C0SHOP", second["ts"])))

        edited = slack.message("C0SHOP", second["ts"])
        assert edited is not None
        approve = bob.click(edited, "approve_basket")
        server.wait_acked(approve)
        server.deliver_again(approve)  # again while the order is being placed
        wait_for(lambda: ordered(slack))
        time.sleep(2)  # time for a second order, if the second delivery were to make one

        assert len([b for b in baskets(slack) if b["ts"] != second["ts"]]) == 1  # basket 1 only
        assert sum(1 for b in baskets(slack) if "Basket 1 " in str(b)) == 1
        assert len(ordered(slack)) == 1
        late = [(e.kind, e.ack_seconds) for e in server.late()]
        assert late == [], late
        assert all(e.acks == len(e.sent) for e in server.envelopes.values())

        assert children(dev.process.pid) == []
        dev.process.send_signal(signal.SIGINT)
        assert dev.process.wait(timeout=30) == 0
        assert "Stopping weekly-shop dev." in "".join(iter_lines(dev.lines))
    assert len(ordered(slack)) == 1  # nothing more arrived as it stopped


def iter_lines(lines: Any) -> list[str]:
    found = []
    while not lines.empty():
        found.append(lines.get())
    return found


def test_missing_tokens_are_named_with_where_to_get_them(tmp_path: Path) -> None:
    (tmp_path / ".env").write_text("SLACK_APP_TOKEN=xoxb-not-the-app-token-0123\n")
    done = subprocess.run(
        [str(ROOT / ".venv" / "bin" / "weekly-shop"), "dev"],
        cwd=tmp_path,
        env=clean_env(),
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode == 2
    assert "SLACK_APP_TOKEN must start with xapp- but starts with xoxb-" in done.stderr
    assert "SLACK_BOT_TOKEN is not set: put SLACK_BOT_TOKEN=xoxb-… in .env" in done.stderr
    assert "not-the-app-token" not in done.stderr + done.stdout


def test_the_slack_cli_tokens_win_and_the_make_target_runs_the_same_command(
    slack: SocketModeSlack, tmp_path: Path
) -> None:
    """``slack run`` gives the start hook SLACK_CLI_XAPP and SLACK_CLI_XOXB: they are used even
    over a ``.env`` with other tokens in it. ``make dev`` runs ``weekly-shop dev``."""
    (tmp_path / ".env").write_text("SLACK_APP_TOKEN=xapp-stale\nSLACK_BOT_TOKEN=xoxb-stale\n")
    env = clean_env(
        SLACK_API_URL=slack.url, SLACK_CLI_XAPP=slack.app_token, SLACK_CLI_XOXB=slack.token
    )
    with running_dev(tmp_path, env) as dev:
        assert "tokens from the Slack CLI" in dev.banner[0]
        slack.socket_mode.wait_connected(1)
    recipe = subprocess.run(
        # --no-print-directory: under `make test` (CI) this make is a sub-make, which says
        # "Entering directory" otherwise
        ["make", "--no-print-directory", "-n", "-o", ".venv/bin/.installed", "dev"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=30,
    )
    assert recipe.stdout.strip() == ".venv/bin/weekly-shop dev", recipe.stdout + recipe.stderr


def test_store_keeps_checkpoints_in_the_named_bucket_and_turns_timers_off(
    slack: SocketModeSlack, tmp_path: Path
) -> None:
    """``--store s3://bucket/prefix``: boto3's own configuration decides where S3 is (here a
    stand-in on 127.0.0.1 playing the developer's real S3, reached through
    ``AWS_ENDPOINT_URL``); the basket's checkpoints land under the prefix, and no local
    Scheduler is started. Checkpoints kept after the run need a signing key that outlives it."""
    from bot.sandbox.moto_server import client_of, moto_s3_server

    write_env_file(tmp_path, slack)
    with moto_s3_server("my-own-bucket") as aws:
        env = clean_env(SLACK_API_URL=slack.url, **aws)
        store = "s3://my-own-bucket/weekly-shop"
        refused = subprocess.run(
            [str(ROOT / ".venv" / "bin" / "weekly-shop"), "dev", "--store", store],
            cwd=tmp_path,
            env=env,
            capture_output=True,
            text=True,
            timeout=60,
        )
        assert refused.returncode == 2 and "put CHECKPOINT_SIGNING_KEY=" in refused.stderr
        env["CHECKPOINT_SIGNING_KEY"] = "a-key-that-outlives-the-run-0123456789"
        with running_dev(tmp_path, env, "--store", store) as dev:
            banner = "".join(dev.banner)
            assert "Checkpoints and records: s3://my-own-bucket/weekly-shop." in banner
            assert "Timers: off with --store" in banner
            slack.socket_mode.wait_connected(1)
            Person(slack, "U0ALICE").shop("fish on Friday, pasta on Monday")
            basket(slack, 1)
        listed = client_of(aws).list_objects_v2(Bucket="my-own-bucket").get("Contents", [])
    keys = [o["Key"] for o in listed]
    assert keys and all(k.startswith("weekly-shop/") for k in keys), keys


def test_a_token_slack_refuses_stops_it_with_what_slack_said(
    slack: SocketModeSlack, tmp_path: Path
) -> None:
    (tmp_path / ".env").write_text(
        f"SLACK_APP_TOKEN=xapp-1-A0WEEKLY-revoked\nSLACK_BOT_TOKEN={slack.token}\n"
    )
    done = subprocess.run(
        [str(ROOT / ".venv" / "bin" / "weekly-shop"), "dev"],
        cwd=tmp_path,
        env=clean_env(SLACK_API_URL=slack.url),
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode == 1
    assert "weekly-shop dev: Slack refused a token (invalid_auth)." in done.stderr
    assert "revoked" not in done.stderr + done.stdout


def test_the_env_file_reads_as_shells_and_the_slack_cli_write_it(tmp_path: Path) -> None:
    from bot.dev.tokens import find_tokens, read_env_file

    env_file = tmp_path / ".env"
    env_file.write_text(
        "# my dev app\nexport SLACK_APP_TOKEN='xapp-1-A-file'\n\nSLACK_BOT_TOKEN = \"xoxb-file\"\n"
        "not a line\nANTHROPIC_MODEL=claude-x  # a comment\n"
    )
    values = read_env_file(env_file)
    assert values["SLACK_APP_TOKEN"] == "xapp-1-A-file" and values["SLACK_BOT_TOKEN"] == "xoxb-file"
    assert values["ANTHROPIC_MODEL"] == "claude-x"
    tokens = find_tokens({"SLACK_BOT_TOKEN": "xoxb-env"}, values, ".env")
    assert tokens.app.get_secret_value() == "xapp-1-A-file"
    assert tokens.bot.get_secret_value() == "xoxb-env"
    assert tokens.source == ".env and the environment"
    assert "xoxb-env" not in repr(tokens)
