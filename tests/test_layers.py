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
    "steps-independent": ("bot/steps/home.py", "import bot.steps.clicks"),
    "listeners-by-surface": ("bot/listeners/views.py", "import bot.listeners.commands"),
    "runtime-by-concern": ("bot/runtime/orders.py", "import bot.runtime.records"),
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


LOADED = (
    "import sys, bot.handler; print(sorted(m for m in sys.modules if m.split('.')[0] in "
    "('moto', 'aiohttp', 'tests', 'bench') or m.startswith(('bot.sandbox', 'bot.cli'))))"
)


def loaded_by_the_handler(root: Path) -> str:
    done = subprocess.run(
        [sys.executable, "-c", LOADED],
        cwd=root,
        capture_output=True,
        text=True,
        timeout=120,
        env={"PATH": "/usr/bin:/bin", "PYTHONPATH": str(root)},
    )
    assert done.returncode == 0, done.stderr
    return done.stdout.strip()


def test_what_ships_loads_no_stand_in_even_through_a_package_init(tmp_path: Path) -> None:
    """The import graph lint-imports reads does not record that ``import bot.handler`` first
    runs ``bot/__init__.py``: a fresh interpreter does. Nothing of the stand-ins, the tests or
    their servers is loaded by the Lambda entry, and a planted ``bot/__init__.py`` import
    (which every contract keeps) shows here."""
    assert loaded_by_the_handler(ROOT) == "[]"
    for tree in ("bot", "workflow"):
        shutil.copytree(ROOT / tree, tmp_path / tree, ignore=shutil.ignore_patterns("__pycache__"))
    (tmp_path / "bot" / "__init__.py").write_text("import bot.sandbox.world\n")
    assert "bot.sandbox.world" in loaded_by_the_handler(tmp_path)
