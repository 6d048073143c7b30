"""The import contracts of ``make lint`` (``[tool.importlinter]`` in pyproject.toml) hold, and
each one fails when a wrong import is planted in a copy of the tree: a contract that cannot fail
checks nothing."""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
LINT_IMPORTS = Path(sys.executable).with_name("lint-imports")

# contract id -> (a module of the tree, the import planted in it)
PLANTED = {
    "engine-below-bot": ("workflow/persistence/store.py", "import bot.handler"),
    "workflow-layers": ("workflow/engine/runner.py", "import workflow.shop.basket"),
    "bot-layers": ("bot/slack/outbox.py", "import bot.steps.turn"),
    "steps-independent": ("bot/steps/clicks.py", "import bot.steps.start"),
    "listeners-by-surface": ("bot/listeners/commands.py", "import bot.listeners.actions"),
    "records-know-no-slack": ("bot/records/timers.py", "import slack_sdk"),
    "shipped-without-stand-ins": ("bot/slack/outbox.py", "import bot.sandbox.world"),
    "no-circles": ("bot/slack/payloads.py", "import bot.slack.lost_said"),
}


def lint_imports(root: Path, *contracts: str) -> subprocess.CompletedProcess[str]:
    only = [arg for contract in contracts for arg in ("--contract", contract)]
    return subprocess.run(
        [str(LINT_IMPORTS), "--no-cache", *only],
        cwd=root,
        capture_output=True,
        text=True,
        timeout=120,
        env={"PATH": "/usr/bin:/bin", "PYTHONPATH": str(root)},
    )


def test_the_tree_keeps_every_contract() -> None:
    done = lint_imports(ROOT)
    assert done.returncode == 0, done.stdout + done.stderr
    assert f"Contracts: {len(PLANTED)} kept, 0 broken." in done.stdout


@pytest.mark.parametrize("contract", sorted(PLANTED))
def test_a_planted_wrong_import_breaks_its_contract(contract: str, tmp_path: Path) -> None:
    for tree in ("bot", "workflow", "tests", "bench"):
        shutil.copytree(ROOT / tree, tmp_path / tree, ignore=shutil.ignore_patterns("__pycache__"))
    shutil.copy(ROOT / "pyproject.toml", tmp_path / "pyproject.toml")
    assert lint_imports(tmp_path, contract).returncode == 0  # the copy keeps it...
    module, planted = PLANTED[contract]
    with (tmp_path / module).open("a") as source:
        source.write(f"\n{planted}  # planted by tests/test_layers.py\n")
    done = lint_imports(tmp_path, contract)  # ...until the wrong import is planted
    assert done.returncode != 0 and "0 kept, 1 broken" in done.stdout, done.stdout
