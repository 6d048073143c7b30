"""Start ``weekly-shop sandbox`` as its own process and wait until it says where it listens."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path


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


def listening_sockets(pid: int) -> list[tuple[str, int]]:
    """The TCP (address, port) pairs process ``pid`` listens on: its socket inodes
    (``/proc/<pid>/fd``) found among the LISTEN rows of ``/proc/net/tcp`` and ``tcp6``."""
    inodes = set()
    for fd in Path(f"/proc/{pid}/fd").iterdir():
        try:
            target = os.readlink(fd)
        except FileNotFoundError:  # a connection closed while we looked
            continue
        if target.startswith("socket:["):
            inodes.add(target[len("socket:[") : -1])
    listening = []
    for table in ("/proc/net/tcp", "/proc/net/tcp6"):
        for line in Path(table).read_text().splitlines()[1:]:
            fields = line.split()
            if fields[3] == "0A" and fields[9] in inodes:  # 0A: LISTEN
                address, port = fields[1].split(":")
                dotted = ".".join(str(int(address[i : i + 2], 16)) for i in (6, 4, 2, 0))
                listening.append((dotted if len(address) == 8 else address, int(port, 16)))
    return listening
