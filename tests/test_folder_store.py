"""The folder store: one process at a time, and what its files on disk look like."""

from __future__ import annotations

import dataclasses
import json
import subprocess
import sys
import zlib
from collections.abc import Iterator
from datetime import UTC, datetime
from pathlib import Path

import pytest

from workflow.errors import (
    CheckpointConflict,
    CheckpointCorrupt,
    CheckpointFromNewerVersion,
    CheckpointTampered,
    StoreInUse,
)
from workflow.persistence.folder_store import FolderCheckpointStore
from workflow.persistence.record_format import PLAIN, RECORD_VERSION
from workflow.persistence.session import SessionCheckpoints
from workflow.persistence.signing import CheckpointSigner
from workflow.persistence.store import CheckpointRecord, new_checkpoint_id, uuid7

REPO = Path(__file__).resolve().parents[1]
TENANT, SESSION = "acme", "sess-1"

# Opens the store at argv[1]; prints "opened" or "in use: <message>". With argv[2] == "hold",
# keeps it open until its standard input closes, so the parent knows exactly when it holds it.
OPEN_STORE = """
import sys
from workflow.errors import StoreInUse
from workflow.persistence.folder_store import FolderCheckpointStore
try:
    store = FolderCheckpointStore(sys.argv[1])
except StoreInUse as exc:
    print("in use:", exc, flush=True)
    sys.exit(0)
print("opened", flush=True)
if sys.argv[2:] == ["hold"]:
    sys.stdin.read()
store.close()
"""


def open_in_other_process(root: Path) -> str:
    done = subprocess.run(
        [sys.executable, "-c", OPEN_STORE, str(root)],
        capture_output=True,
        text=True,
        timeout=60,
        cwd=REPO,
        check=True,
    )
    return done.stdout.strip()


@pytest.fixture
def root(tmp_path: Path) -> Path:
    return tmp_path / "store"


@pytest.fixture
def store(root: Path) -> Iterator[FolderCheckpointStore]:
    with FolderCheckpointStore(root) as opened:
        yield opened


def a_record(sequence: int = 0, state: str = '{"basket":["milk"]}') -> CheckpointRecord:
    return CheckpointRecord(
        id=str(uuid7()),
        checkpoint_id=new_checkpoint_id(sequence),
        parent_checkpoint_id=None,
        run_id=str(uuid7()),
        session_id=SESSION,
        tenant_id=TENANT,
        created_at=datetime(2025, 1, 6, 9, 30, tzinfo=UTC),
        sequence=sequence,
        state=state,
        signature="sig",
    )


def checkpoint_file(root: Path, sequence: int = 0) -> Path:
    return root / TENANT / SESSION / f"{sequence:06d}.ckpt"


# -- one process at a time -----------------------------------------------------------------------


def test_another_process_cannot_open_a_store_in_use(store: FolderCheckpointStore) -> None:
    answer = open_in_other_process(store.root)
    assert answer.startswith("in use:")
    assert "already in use" in answer


def test_another_process_can_open_it_after_close(root: Path) -> None:
    store = FolderCheckpointStore(root)
    store.create(a_record())
    store.close()

    assert open_in_other_process(root) == "opened"


def test_this_process_gets_store_in_use_while_another_holds_it(root: Path) -> None:
    holder = subprocess.Popen(
        [sys.executable, "-c", OPEN_STORE, str(root), "hold"],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
        cwd=REPO,
    )
    try:
        assert holder.stdout is not None
        assert holder.stdout.readline().strip() == "opened"  # it holds the lock from here on

        with pytest.raises(StoreInUse, match="already in use"):
            FolderCheckpointStore(root)
    finally:
        holder.communicate(input="", timeout=60)  # closing stdin lets it close and exit
    assert holder.returncode == 0

    # Its lock went with it.
    FolderCheckpointStore(root).close()


# -- files on disk ------------------------------------------------------------------------------


def test_a_checkpoint_file_is_compressed_not_plain_json(
    store: FolderCheckpointStore, root: Path
) -> None:
    written = store.create(a_record(state='{"z":1,"a":"ünïcode"}'))
    data = checkpoint_file(root).read_bytes()

    with pytest.raises(ValueError):
        json.loads(data)
    assert b"basket" not in data and b"z" not in data[:2]

    header, _, state = zlib.decompress(data).partition(b"\n")
    assert json.loads(header)["cp"] == written.checkpoint_id
    assert state == '{"z":1,"a":"ünïcode"}'.encode()
    assert PLAIN.from_bytes(data, "x", TENANT, SESSION) == written


@pytest.mark.parametrize(
    "damage",
    [
        pytest.param(lambda data: data[: len(data) // 2], id="truncated"),
        pytest.param(lambda data: data[:-1], id="last-byte-missing"),
        pytest.param(lambda data: data[:10] + bytes([data[10] ^ 0xFF]) + data[11:], id="bit-flip"),
        pytest.param(lambda data: b"", id="empty"),
        pytest.param(lambda data: b'{"v":1}\n{}', id="plain-json"),
        pytest.param(lambda data: zlib.compress(b'{"v":1,"id":"x"}\n{}'), id="header-incomplete"),
        pytest.param(lambda data: zlib.compress(b"not json\n{}"), id="header-not-json"),
        pytest.param(lambda data: data + b"trailing", id="trailing-bytes"),
    ],
)
def test_a_damaged_file_is_corrupt(
    store: FolderCheckpointStore, root: Path, damage: object
) -> None:
    written = store.create(a_record())
    path = checkpoint_file(root)
    path.write_bytes(damage(path.read_bytes()))  # type: ignore[operator]

    with pytest.raises(CheckpointCorrupt):
        store.latest(TENANT, SESSION)
    with pytest.raises(CheckpointCorrupt):
        store.read(TENANT, SESSION, written.checkpoint_id)


def test_a_file_from_a_newer_format_is_incompatible(
    store: FolderCheckpointStore, root: Path
) -> None:
    store.create(a_record())
    path = checkpoint_file(root)
    header, _, state = zlib.decompress(path.read_bytes()).partition(b"\n")
    path.write_bytes(
        zlib.compress(
            json.dumps({**json.loads(header), "v": RECORD_VERSION + 1}).encode() + b"\n" + state
        )
    )

    with pytest.raises(CheckpointFromNewerVersion):
        store.latest(TENANT, SESSION)


async def test_a_state_rewritten_on_disk_is_tampered(
    store: FolderCheckpointStore, root: Path, signer: CheckpointSigner
) -> None:
    await SessionCheckpoints(store, signer, TENANT, SESSION).save('{"total":12.5}')
    path = checkpoint_file(root)
    saved = PLAIN.from_bytes(path.read_bytes(), str(path), TENANT, SESSION)
    # A well-formed file, re-compressed: only the signature can tell.
    path.write_bytes(PLAIN.to_bytes(dataclasses.replace(saved, state='{"total":0.01}')))

    with pytest.raises(CheckpointTampered):
        await SessionCheckpoints(store, signer, TENANT, SESSION).load()


def test_the_store_leaves_no_temporary_files(store: FolderCheckpointStore, root: Path) -> None:
    store.create(a_record(0))
    store.create(a_record(1))
    with pytest.raises(CheckpointConflict):
        store.create(a_record(1))
    assert sorted(p.name for p in (root / TENANT / SESSION).iterdir()) == [
        "000000.ckpt",
        "000001.ckpt",
    ]
