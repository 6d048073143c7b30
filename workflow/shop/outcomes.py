"""What became of the console's past weeks: one small signed record per ended session.

The console deletes a week's checkpoints once it ends (the next run starts a new week); before
that it keeps what happened in an outcome log beside them, and ``weekly-shop --history`` prints
the newest. A folder store keeps them as files, an S3 store as objects, named so that a listing
is newest first:

    <folder>/outcomes/<9999999999999 - ms>.json
    <prefix>local/outcomes/<9999999999999 - ms>

Each record is JSON with a MAC (``CheckpointSigner.mac_of``), checked field by field when read:
one that does not verify is left out, as a damaged checkpoint would be refused.
"""

from __future__ import annotations

import hmac
import json
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Protocol

from workflow.engine.runner import Run
from workflow.persistence.folder_store import FolderCheckpointStore
from workflow.persistence.signing import CheckpointSigner
from workflow.persistence.store import CheckpointStore
from workflow.persistence.values import AllFields, check_int, check_str, check_str_list

from .basket import Basket
from .run_state import shop_request

PURPOSE = "weekly-shop console outcomes v1"
MAX_MS = 9_999_999_999_999
KINDS = ("ordered", "rejected")


@dataclass(frozen=True, slots=True, kw_only=True)
class Outcome(AllFields):
    at: int  # epoch seconds
    kind: str  # ordered / rejected
    round: int
    request: str
    items: list[str]  # the basket's lines, as shown
    said: str  # the workflow's output ("Ordered 10 items.")

    def __post_init__(self) -> None:
        check_int(self.at, "Outcome.at", ge=0)
        if self.kind not in KINDS:
            raise ValueError(f"Outcome.kind must be one of {', '.join(KINDS)}")
        check_int(self.round, "Outcome.round", ge=1)
        check_str(self.request, "Outcome.request", max_length=3000)
        check_str_list(self.items, "Outcome.items", max_length=500)
        check_str(self.said, "Outcome.said", max_length=1000)


def encode(signer: CheckpointSigner, outcome: Outcome) -> bytes:
    body = json.dumps(outcome.to_json(), sort_keys=True, separators=(",", ":"))
    return json.dumps({"outcome": body, "mac": signer.mac_of(PURPOSE, body.encode())}).encode()


def decode(signer: CheckpointSigner, raw: bytes) -> Outcome | None:
    try:
        data = json.loads(raw)
        body, mac = data["outcome"], data["mac"]
        if not isinstance(body, str) or not isinstance(mac, str):
            return None
        if not hmac.compare_digest(mac.encode(), signer.mac_of(PURPOSE, body.encode()).encode()):
            return None
        return Outcome.from_json(json.loads(body))
    except (ValueError, TypeError, KeyError):
        return None


def name_now() -> str:
    return f"{MAX_MS - time.time_ns() // 1_000_000:013d}"


class OutcomeLog(Protocol):
    def add(self, outcome: Outcome) -> None: ...

    def newest(self, limit: int) -> list[Outcome]: ...


class FolderOutcomeLog:
    def __init__(self, folder: Path, signer: CheckpointSigner) -> None:
        self.folder = folder / "outcomes"
        self.signer = signer

    def add(self, outcome: Outcome) -> None:
        self.folder.mkdir(parents=True, exist_ok=True, mode=0o700)
        (self.folder / f"{name_now()}.json").write_bytes(encode(self.signer, outcome))

    def newest(self, limit: int) -> list[Outcome]:
        if not self.folder.is_dir():
            return []
        names = sorted(p for p in self.folder.iterdir() if p.suffix == ".json")[:limit]
        found = (decode(self.signer, p.read_bytes()) for p in names)
        return [o for o in found if o is not None]


class S3OutcomeLog:
    def __init__(self, s3: Any, bucket: str, prefix: str, signer: CheckpointSigner) -> None:
        self.s3, self.bucket, self.signer = s3, bucket, signer
        self.prefix = f"{prefix}local/outcomes/"

    def add(self, outcome: Outcome) -> None:
        self.s3.put_object(
            Bucket=self.bucket,
            Key=self.prefix + name_now(),
            Body=encode(self.signer, outcome),
            ServerSideEncryption="AES256",
        )

    def newest(self, limit: int) -> list[Outcome]:
        listed = self.s3.list_objects_v2(Bucket=self.bucket, Prefix=self.prefix, MaxKeys=limit)
        out = []
        for obj in listed.get("Contents", []):
            raw = self.s3.get_object(Bucket=self.bucket, Key=obj["Key"])["Body"].read()
            outcome = decode(self.signer, raw)
            if outcome is not None:
                out.append(outcome)
        return out


def outcome_log(store: CheckpointStore, signer: CheckpointSigner) -> OutcomeLog:
    """Where the console keeps its ended weeks: beside the store's checkpoints."""
    from workflow.persistence.s3_store import S3CheckpointStore

    if isinstance(store, S3CheckpointStore):
        return S3OutcomeLog(store.s3, store.bucket, store.keys.prefix, signer)
    if isinstance(store, FolderCheckpointStore):
        return FolderOutcomeLog(store.root, signer)
    raise TypeError(f"no outcome log for {type(store).__name__}")


def ended_week(run: Run) -> Outcome | None:
    """What became of a run that ended: its last answered basket and what the workflow said."""
    said = str(run.outputs[-1]) if run.outputs else ""
    answered = [a.data for a in run.answered.values() if isinstance(a.data, Basket)]
    if not answered:
        return None
    basket, asked = answered[-1], shop_request(run)
    return Outcome(
        at=int(time.time()),
        kind="ordered" if said.startswith("Ordered") else "rejected",
        round=basket.round,
        request=asked.text if asked is not None else "",
        items=basket.lines,
        said=said[:1000],
    )
