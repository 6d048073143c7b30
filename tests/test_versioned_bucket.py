"""The session lock on a versioned bucket, as serverless.yml deploys it (issue 35, 6).

Versioning changes what a delete is: ``DeleteObject`` without a version ID puts a delete marker
over the object instead of removing it. AWS documents that conditional writes still see the
current version only: "For buckets with versioning enabled, if there's no current object version
with the same name, or if the current object version is a delete marker, the write operation
succeeds" (S3 user guide, "How to prevent object overwrites with conditional writes"), and
"Conditional delete evaluations only apply to the current version of the object" ("How to
perform conditional deletes"). moto 5 does the same; these tests hold the lock to it, with the
bucket versioned as the stack makes it.
"""

from __future__ import annotations

from typing import Any

import pytest

from workflow.errors import LeaseLost, SessionBusy
from workflow.persistence.s3_lock import S3SessionLock

LEASE = 90.0  # LOCK_TTL_SECONDS as deployed


@pytest.fixture
def versioned(s3: Any, bucket: str) -> Any:
    s3.put_bucket_versioning(Bucket=bucket, VersioningConfiguration={"Status": "Enabled"})
    return s3


def _lock(s3: Any, bucket: str, now: list[float]) -> S3SessionLock:
    return S3SessionLock(bucket, "weekly-shop/", s3_client=s3, clock=lambda: now[0])


def test_a_released_lock_leaves_a_delete_marker_and_can_be_taken_again(
    versioned: Any, bucket: str
) -> None:
    now = [1_000.0]
    lock = _lock(versioned, bucket, now)
    first = lock.acquire("T1", "s1", "A", LEASE)
    with pytest.raises(SessionBusy):
        lock.acquire("T1", "s1", "B", LEASE)
    lock.release(first)
    listed = versioned.list_object_versions(Bucket=bucket, Prefix="weekly-shop/")
    assert [m["IsLatest"] for m in listed["DeleteMarkers"]] == [True]  # not deleted: covered
    assert len(listed["Versions"]) == 1  # A's lock, now a noncurrent version
    second = lock.acquire("T1", "s1", "B", LEASE)  # If-None-Match over the marker: free
    assert lock.holder("T1", "s1") == second
    lock.release(second)


def test_an_expired_lease_is_taken_over_once_and_its_holder_cannot_delete_the_new_one(
    versioned: Any, bucket: str
) -> None:
    now = [1_000.0]
    lock = _lock(versioned, bucket, now)
    stale = lock.acquire("T1", "s1", "A", LEASE)
    now[0] += LEASE + 1
    taken = lock.acquire("T1", "s1", "B", LEASE)
    with pytest.raises(LeaseLost):
        lock.release(stale)  # If-Match on A's ETag: the current version is B's
    assert lock.holder("T1", "s1") == taken
    lock.release(taken)
    assert lock.holder("T1", "s1") is None
