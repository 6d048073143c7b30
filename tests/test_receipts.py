"""One contract for the receipt seam, over its in-memory twin and S3 (moto)."""

from __future__ import annotations

import time
from collections.abc import Iterator
from typing import Any

import pytest

from bot.records.receipts import InMemoryReceipts, Receipts, S3Receipts, Waiting
from workflow.errors import InvalidIdentifier, StoreError
from workflow.shop.records import SHOP_PREFIX

CP = "000003-0a1b2c3d"


@pytest.fixture(params=["memory", "s3"])
def receipts(request: pytest.FixtureRequest) -> Iterator[Receipts]:
    if request.param == "memory":
        yield InMemoryReceipts()
    else:
        s3: Any = request.getfixturevalue("s3")
        yield S3Receipts(request.getfixturevalue("bucket"), SHOP_PREFIX, s3)


def test_nothing_shown_before_a_receipt(receipts: Receipts) -> None:
    assert receipts.shown("T1", "s1") is None


def test_the_last_receipt_wins(receipts: Receipts) -> None:
    receipts.mark_shown("T1", "s1", "000001-00000000")
    receipts.mark_shown("T1", "s1", CP)
    assert receipts.shown("T1", "s1") == CP


def test_receipts_are_per_tenant_and_session(receipts: Receipts) -> None:
    receipts.mark_shown("T1", "s1", CP)
    assert receipts.shown("T1", "s2") is None
    assert receipts.shown("T2", "s1") is None


@pytest.mark.parametrize("bad", ["", "../s1", "a/b", "x" * 200])
def test_unsafe_ids_are_refused_as_bad_input(receipts: Receipts, bad: str) -> None:
    with pytest.raises(InvalidIdentifier):
        receipts.mark_shown("T1", bad, CP)
    with pytest.raises(InvalidIdentifier):
        receipts.shown(bad, "s1")
    with pytest.raises(InvalidIdentifier):
        receipts.mark_shown("T1", "s1", bad)


def test_an_s3_failure_is_a_store_error(s3: Any, bucket: str) -> None:
    receipts = S3Receipts("no-such-bucket", SHOP_PREFIX, s3)
    with pytest.raises(StoreError):
        receipts.mark_shown("T1", "s1", CP)
    with pytest.raises(StoreError):
        receipts.shown("T1", "s1")


def _waiting(ts: str) -> Waiting:
    return Waiting(
        request_id="r1", channel="C0SHOP", ts=ts, round=1, requested_by="U0ALICE", posted_at=1
    )


def test_newest_waiting_reads_only_the_newest_receipts_and_counts_the_rest(
    receipts: Receipts,
) -> None:
    """S3 keeps LastModified in whole seconds: the newer receipt is written a second later."""
    receipts.mark_shown("T1", "old", CP, _waiting("1.000001"))
    receipts.mark_shown("T1", "ended", CP, _waiting("1.000002"))
    receipts.mark_shown("T2", "theirs", CP, _waiting("1.000003"))
    time.sleep(1.1)
    before_new = time.time()
    receipts.mark_shown("T1", "new", CP, _waiting("2.000001"))
    assert receipts.newest_waiting("T1", {"ended"}, 1) == ([("new", _waiting("2.000001"))], 1)
    found, unread = receipts.newest_waiting("T1", {"ended"}, 5)
    assert sorted(found) == [("new", _waiting("2.000001")), ("old", _waiting("1.000001"))]
    assert unread == 0
    # Those written at or before ``since`` are not read, nor counted as unread. The others were
    # written over 1.1 s before "new": in S3's whole seconds, a second or more before the one
    # "new" was written in; in memory's exact time, more than 1.05 s before it.
    since = max(int(before_new) - 0.5, before_new - 1.05)
    found, unread = receipts.newest_waiting("T1", (), 5, since=since)
    assert [session for session, _ in found] == ["new"] and unread == 0


def test_a_receipt_that_names_no_basket_is_read_and_not_listed(receipts: Receipts) -> None:
    receipts.mark_shown("T1", "done", CP)
    assert receipts.newest_waiting("T1", (), 5) == ([], 0)


def test_a_held_basket_says_until_when_and_by_whom(receipts: Receipts) -> None:
    """Issue 33, 5: a basket approved and held for its undo window is read back as such (the
    Home tab shows it approved, with its order time and Undo); one that waits reads as before."""
    held = Waiting(
        request_id="r1",
        channel="C0SHOP",
        ts="1.000001",
        round=2,
        requested_by="U0ALICE",
        posted_at=100,
        request="tacos on Friday",
        held_until=220,
        approved_by=("U0BOB", "U0CAROL"),
    )
    receipts.mark_shown("T1", "held", CP, held)
    receipts.mark_shown("T1", "waits", CP, _waiting("1.000002"))
    assert sorted(receipts.newest_waiting("T1", (), 5)[0]) == [
        ("held", held),
        ("waits", _waiting("1.000002")),
    ]
    assert receipts.basket("T1", "held") == held
    assert receipts.basket("T1", "waits") == _waiting("1.000002")
    assert receipts.basket("T1", "nothing") is None


def test_a_receipt_written_before_the_undo_window_still_reads(s3: Any, bucket: str) -> None:
    """A receipt as older code wrote it (no request excerpt, no held-until, no approved-by in
    its metadata) names its basket, waiting; and a waiting basket's receipt written now holds
    none of the held basket's metadata, so older code reading it finds what it always did."""
    receipts = S3Receipts(bucket, SHOP_PREFIX, s3)
    key = receipts.keys.beside("T1", "old", "shown")
    older = {
        "request-id": "r1",
        "channel": "C0SHOP",
        "ts": "1.000001",
        "round": "1",
        "requested-by": "U0ALICE",
        "posted-at": "1",
    }
    s3.put_object(Bucket=bucket, Key=key, Body=CP.encode(), Metadata=older)
    assert receipts.basket("T1", "old") == _waiting("1.000001")
    receipts.mark_shown("T1", "new", CP, _waiting("1.000002"))
    written = s3.head_object(Bucket=bucket, Key=receipts.keys.beside("T1", "new", "shown"))
    assert set(written["Metadata"]) == {*older, "request"}
