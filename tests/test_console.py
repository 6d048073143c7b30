"""The console app as a person uses it: each run is a new process."""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import boto3
import pytest

from bot.sandbox.anthropic_api import FakeAnthropic, shorter_revisions
from bot.sandbox.moto_server import moto_s3_server


@pytest.fixture
def claude() -> Iterator[FakeAnthropic]:
    fake = FakeAnthropic(responder=shorter_revisions).start()
    yield fake
    fake.stop()


ROOT = Path(__file__).resolve().parent.parent
# The console as the next deploy ships it (tests.shop_next_deploy): here, version 1 removed.
DEPLOYED = (
    "import sys; from tests.shop_next_deploy import install; install(sys.argv.pop(1)); "
    "from workflow.shop.console import main; sys.exit(main(sys.argv[1:]))"
)


def console(
    tmp_path: Path,
    answers: str | None,
    *args: str,
    env: dict[str, str] | None = None,
    deploy: str = "",
) -> subprocess.CompletedProcess[str]:
    base = {k: v for k, v in os.environ.items() if not k.startswith(("ANTHROPIC_", "AWS_", "XDG_"))}
    base.update({"XDG_STATE_HOME": str(tmp_path / "state"), "HOME": str(tmp_path / "home")})
    base.update(env or {})
    program = ["-c", DEPLOYED, deploy] if deploy else ["-m", "workflow.shop.console"]
    base["PYTHONPATH"] = str(ROOT)  # this checkout's code, whichever checkout the venv installed
    return subprocess.run(
        [sys.executable, *program, *args],
        input=answers or "",
        capture_output=True,
        text=True,
        timeout=120,
        cwd=tmp_path,
        env=base,
    )


def test_two_runs_in_two_processes_with_claude(tmp_path: Path, claude: FakeAnthropic) -> None:
    env = {"ANTHROPIC_BASE_URL": claude.url, "ANTHROPIC_API_KEY": "test-key-not-real"}
    first = console(tmp_path, None, env=env)
    assert first.returncode == 0, first.stderr
    assert "[basket written] 10 items" in first.stdout
    assert "Basket 1 of 3:\n  500 g chicken breast" in first.stdout
    assert first.stdout.rstrip().endswith("Waiting for approval. Run again to answer.")
    assert claude.message_calls == 1

    second = console(tmp_path, "no pizza\ny\n", env=env)
    assert second.returncode == 0, second.stderr
    out = second.stdout
    assert out.index("Basket 1 of 3:") < out.index("Approve this basket? (y, n or a change)")
    assert "[basket revised] 7 items" in out and "Basket 2 of 3:" in out
    assert out.rstrip().endswith("Ordered 7 items.")
    assert claude.message_calls == 2  # basket 1 came from the checkpoint, not a second call

    assert not list((tmp_path / "state" / "weekly-shop" / "checkpoints" / "local").glob("*/*"))
    assert list(tmp_path.iterdir()) == [tmp_path / "state"]  # nothing in the working directory


def test_end_of_input_leaves_the_basket_waiting_for_a_third_run(tmp_path: Path) -> None:
    assert "Basket 1 of 3" in console(tmp_path, None).stdout
    second = console(tmp_path, "no pizza\n")  # a change, then end of input at basket 2
    assert second.returncode == 0, second.stderr
    assert "Basket 2 of 3" in second.stdout
    assert second.stdout.rstrip().endswith("Waiting for approval. Run again to answer.")
    third = console(tmp_path, "n\n")
    assert third.stdout.index("Basket 2 of 3") < third.stdout.index("Approve this basket?")
    assert "Basket 1 of 3" not in third.stdout
    assert third.stdout.rstrip().endswith("No order placed: rejected")
    fourth = console(tmp_path, None)  # the session was deleted: a new week starts
    assert "Basket 1 of 3" in fourth.stdout and "[basket written]" in fourth.stdout


def test_the_last_basket_says_so_and_takes_no_change(tmp_path: Path) -> None:
    console(tmp_path, None)
    done = console(tmp_path, "less meat\nmore fish\ncheaper please\ny\n")
    assert done.returncode == 0, done.stderr
    out = done.stdout
    assert "Basket 3 of 3 — last one: approve or reject:" in out
    assert "This is the last basket, so it can't be changed: answer y or n." in out
    assert out.count("Approve this basket? (y or n: it is the last one)") == 2
    assert out.rstrip().splitlines()[-1].startswith("Ordered ")


def test_without_a_key_the_offline_shopper_is_used_and_says_so(tmp_path: Path) -> None:
    result = console(tmp_path, None, "pasta on Monday")
    assert result.returncode == 0, result.stderr
    assert result.stdout.startswith("Using the offline shopper")


def test_a_model_stopped_early_fails_and_the_next_run_starts_afresh(
    tmp_path: Path, claude: FakeAnthropic
) -> None:
    from bot.sandbox.anthropic_api import Reply

    claude.script(Reply(text="500 g chi", stop_reason="max_tokens"))
    env = {"ANTHROPIC_BASE_URL": claude.url, "ANTHROPIC_API_KEY": "test-key-not-real"}
    failed = console(tmp_path, None, env=env)
    assert failed.returncode == 1
    assert "write-basket failed: the shopper stopped early (max_tokens)" in failed.stderr
    assert "Basket" not in failed.stdout
    again = console(tmp_path, None, env=env)
    assert "[basket written]" in again.stdout and "Basket 1 of 3" in again.stdout


def test_the_store_can_be_s3(tmp_path: Path) -> None:
    with moto_s3_server("shop-bucket") as aws:
        first = console(tmp_path, None, "--store", "s3://shop-bucket/team/", env=aws)
        assert first.returncode == 0, first.stderr
        s3 = boto3.client(
            "s3",
            endpoint_url=aws["AWS_ENDPOINT_URL"],
            region_name="us-east-1",
            aws_access_key_id="testing",
            aws_secret_access_key="testing",
        )
        keys = [o["Key"] for o in s3.list_objects_v2(Bucket="shop-bucket")["Contents"]]
        assert any(k.startswith("team/local/s/weekly-shop/cp/") for k in keys)
        second = console(tmp_path, "y\n", "--store", "s3://shop-bucket/team/", env=aws)
        assert second.returncode == 0, second.stderr
        assert second.stdout.rstrip().endswith("Ordered 15 items.")
        assert not list((tmp_path / "state" / "weekly-shop").glob("checkpoints"))


def test_history_says_which_version_wrote_each_checkpoint(tmp_path: Path) -> None:
    assert console(tmp_path, None, "--history").stdout.endswith("No basket is waiting.\n")
    console(tmp_path, None, "pasta on Monday")
    lines = console(tmp_path, None, "--history").stdout.splitlines()
    assert lines[1] == "2 checkpoints in this week's session:"
    assert all(line.endswith("weekly-shop v1 · format 2 · record v2") for line in lines[2:])

    first = sorted((tmp_path / "state").rglob("*.ckpt"))[0]
    first.write_bytes(b"\x00 not a record")  # one damaged record does not hide the others
    damaged = console(tmp_path, None, "--history")
    assert damaged.returncode == 0, damaged.stderr
    rows = damaged.stdout.splitlines()[2:]
    assert rows[0].endswith("unreadable") and rows[1].endswith("· record v2")


def test_a_basket_of_a_retired_version_says_so_and_starts_the_same_week_on_request(
    tmp_path: Path, claude: FakeAnthropic
) -> None:
    env = {"ANTHROPIC_BASE_URL": claude.url, "ANTHROPIC_API_KEY": "test-key-not-real"}
    assert "Basket 1 of 3" in console(tmp_path, None, "pasta on Monday", env=env).stdout
    history = console(tmp_path, None, "--history", env=env).stdout

    kept = console(tmp_path, "n\n", env=env, deploy="removed")
    assert kept.returncode == 0, kept.stderr
    assert "saved by a version of weekly-shop that has since been retired" in kept.stdout
    assert kept.stdout.rstrip().endswith(
        "The retired basket is left as it is. Run again to start over."
    )
    assert console(tmp_path, None, "--history", env=env).stdout == history  # nothing changed

    again = console(tmp_path, "y\ny\n", env=env, deploy="removed")
    assert again.returncode == 0, again.stderr
    out = again.stdout
    assert out.index("Start the same week again?") < out.index("[basket checked]")  # version 2
    assert out.index("Basket 1 of 3:") < out.index("Approve this basket?")
    assert out.rstrip().endswith("Ordered 10 items.")
    assert "pasta on Monday" in str(claude.requests[-1]["messages"])  # the same week's request
    assert claude.message_calls == 2
