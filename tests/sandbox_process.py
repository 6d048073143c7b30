"""Start ``weekly-shop sandbox`` as its own process and wait until it says where it listens."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass


@dataclass
class SandboxProcess:
    process: subprocess.Popen[str]
    url: str
    port: int


def _env() -> dict[str, str]:
    drop = ("ANTHROPIC_", "AWS_", "SLACK_", "CHECKPOINT_")
    return {k: v for k, v in os.environ.items() if not k.startswith(drop)}


@contextmanager
def running_sandbox(port: int = 0, workspaces: str = "one") -> Iterator[SandboxProcess]:
    command = ["sandbox", "--port", str(port), "--workspaces", workspaces]
    process = subprocess.Popen(
        [sys.executable, "-m", "bot.cli", *command],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=_env(),
    )
    try:
        assert process.stdout is not None
        line = process.stdout.readline()
        found = re.search(r"http://127\.0\.0\.1:(\d+)/", line)
        assert found, (
            f"no URL in {line!r}; stderr: {process.stderr.read() if process.stderr else ''}"
        )
        yield SandboxProcess(process, found.group(0), int(found.group(1)))
    finally:
        if process.poll() is None:
            process.terminate()
            process.wait(timeout=20)
