"""One contract for the receipt seam, over its in-memory twin and S3 (moto)."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest

from bot.receipts import InMemoryReceipts, Receipts, S3Receipts
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
