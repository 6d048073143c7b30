"""What is particular to the S3 store: keys, encryption, request counts, S3's errors."""

from __future__ import annotations

import random
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from types import SimpleNamespace
from typing import Any

import boto3
import pytest
from botocore.awsrequest import AWSResponse
from botocore.config import Config
from botocore.exceptions import ClientError
from botocore.stub import ANY, Stubber
from moto.core.botocore_stubber import MockRawResponse

from workflow.errors import CheckpointConflict, CheckpointCorrupt, CheckpointsHidden, StoreError
from workflow.persistence import s3_store
from workflow.persistence.s3_client import S3_CONFIG
from workflow.persistence.s3_lock import S3SessionLock
from workflow.persistence.s3_store import CONFLICT_RETRIES, STRAY_KEYS_SKIPPED, S3CheckpointStore
from workflow.persistence.store import CheckpointRecord, new_checkpoint_id, uuid7

PREFIX = "ws/"
TENANT, SESSION = "acme", "sess-1"
RUN = str(uuid7())


@pytest.fixture
def store(s3: Any, bucket: str) -> S3CheckpointStore:
    return S3CheckpointStore(bucket, prefix=PREFIX, s3_client=s3)


@pytest.fixture
def backoff(monkeypatch: pytest.MonkeyPatch) -> list[float]:
    """The store's 409 back-off delays, recorded instead of slept."""
    delays: list[float] = []
    monkeypatch.setattr(s3_store, "time", SimpleNamespace(sleep=delays.append))
    return delays


def a_record(sequence: int = 0, session: str = SESSION) -> CheckpointRecord:
    return CheckpointRecord(
        id=str(uuid7()),
        checkpoint_id=new_checkpoint_id(sequence),
        parent_checkpoint_id=None,
        run_id=RUN,
        session_id=session,
        tenant_id=TENANT,
        created_at=datetime(2025, 1, 6, 9, 30, tzinfo=UTC) + timedelta(seconds=sequence),
        sequence=sequence,
        state=f'{{"step":{sequence}}}',
        signature="sig",
    )


def all_keys(s3: Any, bucket: str) -> list[str]:
    return [o["Key"] for o in s3.list_objects_v2(Bucket=bucket).get("Contents", [])]


class Requests:
    """The S3 operations a client sends, counted with botocore's event hooks."""

    def __init__(self, s3: Any) -> None:
        self.names: list[str] = []
        self._s3 = s3

    def __call__(self, model: Any, **_: Any) -> None:
        self.names.append(model.name)

    def __enter__(self) -> Requests:
        self._s3.meta.events.register("before-call.s3", self)
        return self

    def __exit__(self, *exc: object) -> None:
        self._s3.meta.events.unregister("before-call.s3", self)


# -- keys and encryption ------------------------------------------------------------------------


def test_keys_name_the_tenant_and_session_and_the_lock_sits_beside_the_checkpoints(
    s3: Any, bucket: str, store: S3CheckpointStore
) -> None:
    store.create(a_record(0))
    store.create(a_record(1))
    S3SessionLock(bucket, prefix=PREFIX, s3_client=s3).acquire(TENANT, SESSION, "me", 60)

    session_prefix = f"{PREFIX}{TENANT}/s/{SESSION}/"
    assert sorted(all_keys(s3, bucket)) == [
        f"{session_prefix}cp/999998",  # newest first: 999999 - sequence
        f"{session_prefix}cp/999999",
        f"{session_prefix}lock",
    ]
    assert store.keys.lock(TENANT, SESSION) == f"{session_prefix}lock"
    assert store.keys.checkpoint(TENANT, SESSION, 1).startswith(session_prefix)


def test_every_object_written_is_encrypted(s3: Any, bucket: str, store: S3CheckpointStore) -> None:
    clock = SimpleNamespace(now=1000.0)
    lock = S3SessionLock(bucket, prefix=PREFIX, s3_client=s3, clock=lambda: clock.now)
    store.create(a_record(0))
    store.create(a_record(0, session="sess-2"))
    lock.acquire(TENANT, SESSION, "first", 10)
    clock.now += 11
    lock.acquire(TENANT, SESSION, "second", 10)  # the take-over rewrites the lock object

    keys = all_keys(s3, bucket)
    assert len(keys) == 3  # two checkpoints, one lock
    for key in keys:
        assert s3.head_object(Bucket=bucket, Key=key)["ServerSideEncryption"] == "AES256", key


def test_checkpoint_metadata_carries_the_listing(
    s3: Any, bucket: str, store: S3CheckpointStore
) -> None:
    written = store.create(a_record(0))
    head = s3.head_object(Bucket=bucket, Key=store.keys.checkpoint(TENANT, SESSION, 0))
    assert head["Metadata"] == {
        "id": written.id,
        "checkpoint-id": written.checkpoint_id,
        "parent": "",
        "run": RUN,
        "at": written.created_at.isoformat(),
    }


# -- request counts ------------------------------------------------------------------------------


@pytest.mark.parametrize("count", [1, 100])
def test_latest_costs_two_requests_however_long_the_session(
    s3: Any, store: S3CheckpointStore, count: int
) -> None:
    for seq in range(count):
        store.create(a_record(seq))

    with Requests(s3) as requests:
        latest = store.latest(TENANT, SESSION)

    assert latest is not None and latest.sequence == count - 1
    assert requests.names == ["ListObjectsV2", "GetObject"]


def test_latest_of_an_empty_session_costs_one_request(s3: Any, store: S3CheckpointStore) -> None:
    with Requests(s3) as requests:
        assert store.latest(TENANT, SESSION) is None
    assert requests.names == ["ListObjectsV2"]


def test_list_reads_metadata_not_payloads(s3: Any, store: S3CheckpointStore) -> None:
    for seq in range(3):
        store.create(a_record(seq))
    with Requests(s3) as requests:
        assert [i.sequence for i in store.list(TENANT, SESSION)] == [0, 1, 2]
    assert requests.names == ["ListObjectsV2"] + ["HeadObject"] * 3


def test_a_checkpoint_is_one_conditional_put(s3: Any, store: S3CheckpointStore) -> None:
    with Requests(s3) as requests:
        store.create(a_record(0))
        store.create(a_record(1))
    assert requests.names == ["PutObject", "PutObject"]


# -- S3's answers --------------------------------------------------------------------------------


def put_checkpoint_params(store: S3CheckpointStore, record: CheckpointRecord) -> dict[str, Any]:
    return {
        "Bucket": store.bucket,
        "Key": store.keys.checkpoint(record.tenant_id, record.session_id, record.sequence),
        "Body": ANY,
        "IfNoneMatch": "*",
        "ServerSideEncryption": "AES256",
        "ContentType": ANY,
        "Metadata": ANY,
    }


def conflict_409(stub: Stubber, params: dict[str, Any]) -> None:
    stub.add_client_error(
        "put_object",
        service_error_code="ConditionalRequestConflict",
        service_message="A conflicting conditional operation is in progress",
        http_status_code=409,
        expected_params=params,
    )


@pytest.fixture
def stub(s3: Any) -> Iterator[Stubber]:
    with Stubber(s3) as stubber:
        yield stubber
        stubber.assert_no_pending_responses()


def test_a_409_is_retried_and_the_write_then_succeeds(
    stub: Stubber, store: S3CheckpointStore, backoff: list[float]
) -> None:
    record = a_record(0)
    params = put_checkpoint_params(store, record)
    conflict_409(stub, params)
    conflict_409(stub, params)
    stub.add_response("put_object", {"ETag": '"cp"'}, params)

    assert store.create(record) == record
    assert backoff == [0.05, 0.1]


def test_a_409_then_412_is_a_conflict(
    stub: Stubber, store: S3CheckpointStore, backoff: list[float]
) -> None:
    record = a_record(0)
    params = put_checkpoint_params(store, record)
    for _ in range(CONFLICT_RETRIES):
        conflict_409(stub, params)
    stub.add_client_error(
        "put_object",
        service_error_code="PreconditionFailed",
        http_status_code=412,
        expected_params=params,
    )

    with pytest.raises(CheckpointConflict):
        store.create(record)
    assert len(backoff) == CONFLICT_RETRIES


def test_409s_that_never_end_are_a_store_error(
    stub: Stubber, store: S3CheckpointStore, backoff: list[float]
) -> None:
    record = a_record(0)
    for _ in range(CONFLICT_RETRIES + 1):
        conflict_409(stub, put_checkpoint_params(store, record))

    with pytest.raises(StoreError, match="ConditionalRequestConflict") as caught:
        store.create(record)
    assert not isinstance(caught.value, ClientError | CheckpointConflict)


def test_a_500_on_get_is_a_store_error_not_a_client_error(
    stub: Stubber, store: S3CheckpointStore
) -> None:
    # A stubbed response skips botocore's retry loop: one queued 500 is the final answer.
    key = store.keys.checkpoint(TENANT, SESSION, 0)
    stub.add_response("list_objects_v2", {"Contents": [{"Key": key}]})
    stub.add_client_error("get_object", service_error_code="InternalError", http_status_code=500)
    stub.add_client_error("get_object", service_error_code="InternalError", http_status_code=500)

    with pytest.raises(StoreError, match="InternalError") as caught:
        store.latest(TENANT, SESSION)
    assert not isinstance(caught.value, ClientError)
    assert isinstance(caught.value.__cause__, ClientError)

    with pytest.raises(StoreError):
        store.read(TENANT, SESSION, new_checkpoint_id(0))


def test_a_500_from_the_wire_is_a_store_error(s3: Any, bucket: str) -> None:
    # The same through botocore's own parsing, with retries off (total_max_attempts=1: the
    # retries "max_attempts" key counts retries, not attempts).
    client = boto3.client("s3", config=S3_CONFIG.merge(Config(retries={"total_max_attempts": 1})))
    store = S3CheckpointStore(bucket, prefix=PREFIX, s3_client=client)
    store.create(a_record(0))
    sent: list[str] = []

    def fail(request: Any, **_: Any) -> AWSResponse:
        sent.append(request.url)
        body = (
            b"<Error><Code>InternalError</Code><Message>We encountered an error</Message></Error>"
        )
        return AWSResponse(request.url, 500, {}, MockRawResponse(body))

    client.meta.events.register_first("before-send.s3.GetObject", fail)
    with pytest.raises(StoreError, match="InternalError"):
        store.latest(TENANT, SESSION)
    assert len(sent) == 1


def test_a_corrupt_object_is_checkpoint_corrupt(
    s3: Any, bucket: str, store: S3CheckpointStore
) -> None:
    store.create(a_record(0))
    # Random bytes where the next checkpoint goes: latest must not skip it and fall back.
    junk = random.Random(1234).randbytes(256)
    s3.put_object(Bucket=bucket, Key=store.keys.checkpoint(TENANT, SESSION, 1), Body=junk)

    with pytest.raises(CheckpointCorrupt):
        store.latest(TENANT, SESSION)
    with pytest.raises(CheckpointCorrupt):
        store.read(TENANT, SESSION, new_checkpoint_id(1))


@pytest.mark.parametrize("name", [".part", "000001.bak", "notes", "99999", "0000001"])
def test_objects_under_cp_that_are_not_checkpoints_are_skipped(
    store: S3CheckpointStore, s3: Any, bucket: str, name: str
) -> None:
    """Another tool's object, or a later layout: latest and list skip it (with a warning), at
    one more LIST for latest, instead of failing every read of the session."""
    for sequence in range(2):
        store.create(a_record(sequence))
    s3.put_object(Bucket=bucket, Key=f"{PREFIX}{TENANT}/s/{SESSION}/cp/{name}", Body=b"x")
    latest = store.latest(TENANT, SESSION)
    assert latest is not None and latest.sequence == 1
    assert [i.sequence for i in store.list(TENANT, SESSION)] == [0, 1]


def test_more_stray_objects_than_latest_skips_are_damage_not_an_s3_failure(
    store: S3CheckpointStore, s3: Any, bucket: str
) -> None:
    """Past the bound, the newest checkpoint is out of reach however often it is asked:
    CheckpointsHidden (a CheckpointError the bot calls damaged), not StoreError (which it
    calls "try again in a minute"). ``list`` still finds every checkpoint."""
    for sequence in range(2):
        store.create(a_record(sequence))
    for n in range(STRAY_KEYS_SKIPPED + 1):
        s3.put_object(Bucket=bucket, Key=f"{PREFIX}{TENANT}/s/{SESSION}/cp/.part{n:02d}", Body=b"")
    with pytest.raises(CheckpointsHidden) as raised:
        store.latest(TENANT, SESSION)
    assert not isinstance(raised.value, StoreError)
    assert [i.sequence for i in store.list(TENANT, SESSION)] == [0, 1]
