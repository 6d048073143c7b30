"""The console app as a person uses it: each run is a new process."""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from bot.sandbox.anthropic_api import FakeAnthropic, shorter_revisions
from bot.sandbox.moto_server import client_of, moto_s3_server
from workflow.persistence.folder_store import FolderCheckpointStore
from workflow.persistence.s3_store import S3CheckpointStore
from workflow.shop.console import SENT_NOWHERE, SESSION, TENANT
from workflow.shop.records import SHOP_RECORDS


@pytest.fixture
def claude() -> Iterator[FakeAnthropic]:
    fake = FakeAnthropic(responder=shorter_revisions).start()
    yield fake
    fake.stop()


ROOT = Path(__file__).resolve().parent.parent
# The console as the next deploy ships it (tests.shop_next_deploy): here, version 2 removed.
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
    # This checkout's code, not whichever one the venv's editable install points at.
    base["PYTHONPATH"] = str(ROOT)
    program = ["-c", DEPLOYED, deploy] if deploy else ["-m", "workflow.shop.console"]
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
    # The week it shopped for, said first; the basket by aisle, as Slack shows it.
    assert first.stdout.startswith("No week given, so this is the example week")
    assert "\nShopping for: Dinners this week: chicken stir-fry on Monday" in first.stdout
    assert "Basket 1 of 3:\n  Produce\n" in first.stdout
    assert "\n  Meat and fish\n    500 g chicken breast\n" in first.stdout
    assert first.stdout.rstrip().endswith("Waiting for approval. Run again to answer.")
    assert claude.message_calls == 1

    second = console(tmp_path, "no pizza\ny\n", env=env)
    assert second.returncode == 0, second.stderr
    out = second.stdout
    assert out.index("Basket 1 of 3:") < out.index("Approve this basket? (y, n or a change)")
    assert "[basket revised] 7 items" in out and "Basket 2 of 3:" in out
    assert out.rstrip().endswith("Ordered 7 items.\n" + SENT_NOWHERE)
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


@pytest.mark.parametrize(
    ("word", "outcome"),
    [
        ("Yes", "Ordered 10 items."),
        ("APPROVE", "Ordered 10 items."),
        ("oK", "Ordered 10 items."),
        ("Y", "Ordered 10 items."),
        ("No", "No order placed: rejected"),
        ("ReJeCt", "No order placed: rejected"),
        ("N", "No order placed: rejected"),
    ],
)
def test_a_decision_word_in_any_case_costs_no_model_call(
    tmp_path: Path, claude: FakeAnthropic, word: str, outcome: str
) -> None:
    env = {"ANTHROPIC_BASE_URL": claude.url, "ANTHROPIC_API_KEY": "test-key-not-real"}
    assert "Basket 1 of 3" in console(tmp_path, None, env=env).stdout
    assert claude.message_calls == 1
    answered = console(tmp_path, f"  {word} \n", env=env)
    assert answered.returncode == 0, answered.stderr
    said = outcome + ("\n" + SENT_NOWHERE if outcome.startswith("Ordered") else "")
    assert answered.stdout.rstrip().endswith(said)
    assert "[basket revised]" not in answered.stdout
    assert claude.message_calls == 1  # a decision, not a change request


def test_any_other_answer_is_a_change_and_costs_one_model_call(
    tmp_path: Path, claude: FakeAnthropic
) -> None:
    env = {"ANTHROPIC_BASE_URL": claude.url, "ANTHROPIC_API_KEY": "test-key-not-real"}
    console(tmp_path, None, env=env)
    changed = console(tmp_path, "yes please, but no pizza\n", env=env)
    assert changed.returncode == 0, changed.stderr
    assert "[basket revised] 7 items" in changed.stdout and "Basket 2 of 3:" in changed.stdout
    assert changed.stdout.rstrip().endswith("Waiting for approval. Run again to answer.")
    assert claude.message_calls == 2
    assert "yes please, but no pizza" in str(claude.requests[-1])


def test_the_last_basket_says_so_and_takes_no_change(tmp_path: Path) -> None:
    console(tmp_path, None)
    done = console(tmp_path, "no pizza\nadd oat milk\ncheaper please\ny\n")
    assert done.returncode == 0, done.stderr
    out = done.stdout
    assert "Basket 3 of 3 — last one: approve or reject:" in out
    assert "This is the last basket, so it can't be changed: answer y or n." in out
    assert out.count("Approve this basket? (y or n: it is the last one)") == 2
    assert out.rstrip().splitlines()[-2].startswith("Ordered ")


def test_the_last_basket_takes_the_decision_words_too(tmp_path: Path) -> None:
    console(tmp_path, None)
    done = console(tmp_path, "no pizza\nadd oat milk\nNO\n")
    assert done.returncode == 0, done.stderr
    assert "Basket 3 of 3 — last one" in done.stdout
    assert "it can't be changed" not in done.stdout
    assert done.stdout.rstrip().endswith("No order placed: rejected")


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
        listed = client_of(aws).list_objects_v2(Bucket="shop-bucket")
        keys = [o["Key"] for o in listed["Contents"]]
        assert any(k.startswith("team/local/s/weekly-shop/cp/") for k in keys)
        second = console(tmp_path, "y\n", "--store", "s3://shop-bucket/team/", env=aws)
        assert second.returncode == 0, second.stderr
        assert second.stdout.rstrip().endswith("Ordered 15 items.\n" + SENT_NOWHERE)
        assert not list((tmp_path / "state" / "weekly-shop").glob("checkpoints"))


def folder_checkpoint_ids(tmp_path: Path) -> set[str]:
    store = FolderCheckpointStore(tmp_path / "state" / "weekly-shop" / "checkpoints", SHOP_RECORDS)
    try:
        return {info.checkpoint_id for info in store.list(TENANT, SESSION)}
    finally:
        store.close()


def test_new_discards_the_waiting_basket_once_confirmed_and_starts_the_week(
    tmp_path: Path, claude: FakeAnthropic
) -> None:
    env = {"ANTHROPIC_BASE_URL": claude.url, "ANTHROPIC_API_KEY": "test-key-not-real"}
    console(tmp_path, None, "pasta on Monday", env=env)
    old = folder_checkpoint_ids(tmp_path)
    assert old

    new = console(tmp_path, "Yes\n", "--new", "tacos on Friday", env=env)
    assert new.returncode == 0, new.stderr
    out = new.stdout
    assert out.index("Discard it and start the new week? (y or n) Yes") < out.index("discarded")
    assert out.index("The waiting basket is discarded.") < out.index("[basket written]")
    assert out.rstrip().endswith("Waiting for approval. Run again to answer.")
    assert claude.message_calls == 2
    assert "tacos on Friday" in str(claude.requests[-1])
    assert "pasta on Monday" not in str(claude.requests[-1])
    assert folder_checkpoint_ids(tmp_path).isdisjoint(old)  # the old session's are gone

    answered = console(tmp_path, "y\n", env=env)  # the new week's basket is the one waiting
    assert answered.stdout.rstrip().endswith("Ordered 10 items.\n" + SENT_NOWHERE)
    assert claude.message_calls == 2


@pytest.mark.parametrize("answer", ["n\n", "\n", "sure\n", None])  # None: end of input
def test_new_declined_keeps_the_waiting_basket(tmp_path: Path, answer: str | None) -> None:
    console(tmp_path, None, "pasta on Monday")
    old = folder_checkpoint_ids(tmp_path)
    kept = console(tmp_path, answer, "--new", "tacos on Friday")
    assert kept.returncode == 0, kept.stderr
    assert "Discard it and start the new week?" in kept.stdout
    assert kept.stdout.rstrip().endswith(
        "The waiting basket is kept. Run again without --new to answer it."
    )
    assert "[basket written]" not in kept.stdout
    assert folder_checkpoint_ids(tmp_path) == old


def test_new_with_nothing_waiting_just_starts(tmp_path: Path) -> None:
    started = console(tmp_path, None, "--new", "tacos on Friday")
    assert started.returncode == 0, started.stderr
    assert "Discard" not in started.stdout and "[basket written]" in started.stdout
    assert started.stdout.rstrip().endswith("Waiting for approval. Run again to answer.")


def test_new_works_on_an_s3_store(tmp_path: Path, claude: FakeAnthropic) -> None:
    where = ("--store", "s3://shop-bucket/team/")
    with moto_s3_server("shop-bucket") as aws:
        env = {**aws, "ANTHROPIC_BASE_URL": claude.url, "ANTHROPIC_API_KEY": "test-key-not-real"}
        store = S3CheckpointStore(
            "shop-bucket", "team/", s3_client=client_of(aws), codec=SHOP_RECORDS
        )
        console(tmp_path, None, *where, "pasta on Monday", env=env)
        old = {info.checkpoint_id for info in store.list(TENANT, SESSION)}
        assert old

        kept = console(tmp_path, "no\n", *where, "--new", "tacos on Friday", env=env)
        assert kept.stdout.rstrip().endswith("Run again without --new to answer it.")
        assert {info.checkpoint_id for info in store.list(TENANT, SESSION)} == old

        new = console(tmp_path, "y\n", *where, "--new", "tacos on Friday", env=env)
        assert new.returncode == 0, new.stderr
        assert "The waiting basket is discarded." in new.stdout
        assert "tacos on Friday" in str(claude.requests[-1])
        now = {info.checkpoint_id for info in store.list(TENANT, SESSION)}
        assert now and now.isdisjoint(old)
        assert not list((tmp_path / "state" / "weekly-shop").glob("checkpoints"))


def test_history_says_what_waits_and_with_verbose_what_wrote_each_checkpoint(
    tmp_path: Path,
) -> None:
    """A summary in the household's words first (what waits, for which week); the engine's
    terms (each checkpoint and what wrote it) only with --verbose."""
    assert console(tmp_path, None, "--history").stdout.endswith("No basket is waiting.\n")
    console(tmp_path, None, "pasta on Monday")
    lines = console(tmp_path, None, "--history").stdout.splitlines()
    # No shopper banner (--history writes no basket).
    assert lines[0] == "No week has ended yet."
    assert lines[1].startswith("Waiting for your answer: basket 1 of 3, ")
    assert lines[1].endswith(" items, for: pasta on Monday. Run weekly-shop to answer it.")
    assert len(lines) == 2 and "format 2" not in "\n".join(lines)
    lines = console(tmp_path, None, "--history", "--verbose").stdout.splitlines()
    # Whole checkpoint IDs: a UUIDv7's first 8 characters are its time in about minutes, the
    # same for a week's checkpoints.
    # The start, basket 1 written, basket 1 priced (graph version 5: nothing to price at here).
    assert lines[2] == "3 checkpoints in this week's session:"
    assert all(line.endswith("weekly-shop v5 · format 2 · record v2") for line in lines[3:])
    assert {line.split()[3] for line in lines[3:]} == folder_checkpoint_ids(tmp_path)

    first = sorted((tmp_path / "state").rglob("*.ckpt"))[0]
    first.write_bytes(b"\x00 not a record")  # one damaged record does not hide the others
    damaged = console(tmp_path, None, "--history", "--verbose")
    assert damaged.returncode == 0, damaged.stderr
    rows = damaged.stdout.splitlines()[3:]
    assert rows[0].endswith("unreadable") and rows[1].endswith("· record v2")


def test_a_new_week_typed_while_a_basket_waits_says_so_and_how_to_start_it(
    tmp_path: Path,
) -> None:
    console(tmp_path, None, "pasta on Monday")
    again = console(tmp_path, None, "tacos on Friday")
    assert again.returncode == 0, again.stderr
    assert (
        'A basket is waiting for your answer, so "tacos on Friday" was not started. Answer '
        'this one, or start the new week with: weekly-shop --new "tacos on Friday"'
    ) in again.stdout
    assert "Shopping for: tacos" not in again.stdout
    same = console(tmp_path, None, "pasta on Monday")  # the waiting week itself: nothing to say
    assert "was not started" not in same.stdout


def test_no_week_given_says_it_is_the_example_and_an_order_says_where_it_went(
    tmp_path: Path,
) -> None:
    first = console(tmp_path, None)
    assert "offline shopper" in first.stdout.splitlines()[0]
    assert first.stdout.splitlines()[1].startswith("No week given, so this is the example week")
    done = console(tmp_path, "y\n")
    assert "Ordered " in done.stdout
    assert done.stdout.rstrip().endswith(
        "The console sends the order nowhere: the basket above is your list. (The Slack bot "
        "sends it to a canvas, Instacart or a webhook.)"
    )


def test_history_prints_the_last_weeks_outcomes_newest_first(tmp_path: Path) -> None:
    """An ended week's checkpoints go; what became of it stays in the outcome log, signed: a
    record edited by hand is left out."""
    for week, answer in (("tacos on Friday", "y\n"), ("pasta on Monday", "n\n")):
        console(tmp_path, None, week)  # basket 1, then waiting
        console(tmp_path, answer)  # the next run answers it: the week ends
    lines = console(tmp_path, None, "--history").stdout.splitlines()
    assert lines[0] == "Last outcomes:"
    assert lines[1].endswith("No order placed: rejected (basket 1)  pasta on Monday")
    assert " Ordered " in lines[2] and lines[2].endswith("(basket 1)  tacos on Friday")
    assert lines[3] == "No basket is waiting."
    (oldest, _) = sorted((tmp_path / "state").rglob("outcomes/*.json"), reverse=True)
    oldest.write_text(oldest.read_text().replace("tacos", "caviar"))
    lines = console(tmp_path, None, "--history").stdout.splitlines()
    assert "caviar" not in "\n".join(lines) and len([ln for ln in lines if "basket 1" in ln]) == 1


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
    assert out.index("Start the same week again?") < out.index("[basket checked]")  # version 5
    assert out.index("Basket 1 of 3:") < out.index("Approve this basket?")
    assert out.rstrip().endswith("Ordered 10 items.\n" + SENT_NOWHERE)
    assert "pasta on Monday" in str(claude.requests[-1])  # the same week's request
    assert claude.message_calls == 2


@pytest.mark.parametrize("command", [["--help"], ["sandbox", "--help"]])
def test_help_is_plain_text(command: list[str], capsys: pytest.CaptureFixture[str]) -> None:
    from bot.cli import main

    with pytest.raises(SystemExit) as done:
        main(command)
    assert done.value.code == 0
    text = capsys.readouterr().out
    assert text.startswith("usage: weekly-shop")
    for markup in ("`", "%", "**", ":data:", ":class:", ":func:", "\\", ".. ", "<br"):
        assert markup not in text, f"{markup!r} in --help"


def test_the_readmes_sandbox_commands_work_without_an_activated_venv() -> None:
    """A fresh clone has no ``weekly-shop`` on PATH until the venv is activated: the README
    says ``make run ARGS='--workspaces many'``, which runs the venv's own command with them."""
    readme = (ROOT / "README.md").read_text()
    assert "make run ARGS='--workspaces many'" in readme
    assert "\n- `weekly-shop sandbox" not in readme and ": `weekly-shop sandbox" not in readme
    done = subprocess.run(
        ["make", "-n", "-W", ".venv/bin/.installed", "run", "ARGS=--workspaces many"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode == 0, done.stderr
    assert ".venv/bin/weekly-shop sandbox --port 8080 --workspaces many" in done.stdout


def test_offline_a_change_that_changes_nothing_is_said_and_asked_again(tmp_path: Path) -> None:
    """Issue 20: "maybe later" gave a basket 2 identical to basket 1. It uses up no round: the
    console says so and asks about the same basket again."""
    console(tmp_path, None, "tacos, pasta")  # basket 1, waiting
    done = console(tmp_path, "maybe later\nno pizza, add oat milk\ny\n")
    assert done.returncode == 0, done.stderr
    out = done.stdout
    assert "That didn't change the basket." in out
    assert out.count("Basket 1 of 3:") == 2 and out.count("Basket 2 of 3:") == 1
    assert "Basket 3 of 3" not in out and "[basket revised]" in out
    assert "  500 g tomato passata" in out.split("Basket 2 of 3:")[1]  # no pizza in the week
    assert out.rstrip().splitlines()[-2].startswith("Ordered ")


def test_offline_a_request_with_no_dinner_starts_nothing(tmp_path: Path) -> None:
    """Issue 20: a request naming nothing the offline shopper knows became a basket of one
    "ingredients for …" line. Now it says why, no basket is shown, and nothing waits."""
    failed = console(tmp_path, None, "<!channel> ~strike~ *bold*")
    assert failed.returncode == 1
    assert "found no dinners it knows" in failed.stderr
    assert "Basket" not in failed.stdout
    again = console(tmp_path, None, "pasta on Monday")
    assert "Basket 1 of 3" in again.stdout  # a new week, not a failed one waiting
