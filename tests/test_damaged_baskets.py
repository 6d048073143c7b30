"""A damaged basket says so and offers Start again; S3 being down still says "try again".

Damaged is lasting: junk bytes at the session's newest key, more stray objects under its ``cp/``
than a read skips, a checkpoint that fails its checks. Asking again meets the same objects, so
"couldn't reach the basket store" would be a lie and a dead end. Each case here is planted in
moto and driven through the real handler with signed clicks: the click changes nothing in S3 and
leaves no lock, the basket's thread says it is damaged with a Start again button, and Start again
writes the same week's request afresh (read from the newest checkpoint that still verifies),
which is all it writes.
"""

from __future__ import annotations

import dataclasses
import random
from typing import Any

import pytest

from bot.slack.blocks import START_AGAIN
from bot.slack.outcome import BROKEN, STORE_DOWN
from bot.steps.start import ALREADY_AGAIN, NO_REQUEST
from tests.bot_kit import World, context_text, header, objects, start_basket
from tests.fault_kit import TENANT, ephemeral_texts, lock_keys, session_of, thread_texts
from workflow.persistence.s3_store import STRAY_KEYS_SKIPPED
from workflow.shop.records import SHOP_RECORDS

DAMAGE = ["junk at cp/000000", "stray keys under cp/", "newest checkpoint edited"]


def _cp(s3: Any, bucket: str, session: str) -> list[str]:
    return sorted(k for k in objects(s3, bucket) if f"/{session}/cp/" in k)


def damage(s3: Any, bucket: str, session: str, kind: str) -> None:
    """Plant ``kind`` of damage in the session's checkpoints, as another tool or a bad copy
    would leave it."""
    keys = _cp(s3, bucket, session)
    folder = keys[0].rsplit("/", 1)[0]
    if kind == "junk at cp/000000":  # the highest sequence's key: it sorts first
        junk = random.Random(7).randbytes(200)
        s3.put_object(Bucket=bucket, Key=f"{folder}/000000", Body=junk)
    elif kind == "stray keys under cp/":  # names that sort before every checkpoint key
        for n in range(STRAY_KEYS_SKIPPED + 1):
            s3.put_object(Bucket=bucket, Key=f"{folder}/.part-{n:02d}", Body=b"not a checkpoint")
    elif kind == "newest checkpoint edited":
        raw = s3.get_object(Bucket=bucket, Key=keys[0])["Body"].read()
        record = SHOP_RECORDS.from_bytes(raw, "checkpoint", TENANT, session)
        caviar = record.state.replace("chicken breast", "beluga caviar")  # signature kept
        edited = SHOP_RECORDS.to_bytes(dataclasses.replace(record, state=caviar))
        s3.put_object(Bucket=bucket, Key=keys[0], Body=edited)
    else:
        raise AssertionError(kind)


def click_damaged(world: World, basket: dict[str, Any], s3: Any, bucket: str) -> dict[str, Any]:
    """Approve the damaged basket: the offer in its thread; nothing in S3 changed, no lock."""
    before = objects(s3, bucket)
    world.click(basket, "approve_basket")
    world.run_lazies()
    (said,) = world.slack.thread("C0SHOP", basket["ts"])
    assert said["text"] == BROKEN and STORE_DOWN not in said["text"]
    assert list(world.buttons(said)) == [START_AGAIN]
    assert objects(s3, bucket) == before and lock_keys(s3, bucket) == []
    assert world.buttons(world.baskets()[0])  # restored, the checkpoint answers them again
    return said


@pytest.mark.parametrize("kind", DAMAGE)
def test_a_damaged_basket_says_so_and_starts_again(
    world: World, s3: Any, bucket: str, kind: str
) -> None:
    basket = start_basket(world)
    session = session_of(world, basket)
    damage(s3, bucket, session, kind)
    said = click_damaged(world, basket, s3, bucket)
    before = objects(s3, bucket)

    world.click(said, START_AGAIN, user="U0CAROL")
    world.run_lazies()

    again = world.baskets()[-1]
    assert again["ts"] != basket["ts"] and header(again) == "Basket 1 of 3"
    assert "For <@U0ALICE>:" in context_text(again)  # the same week's request, and asker
    assert "dinners this week" in str(world.claude.requests[-1])
    new_session = session_of(world, again)
    assert new_session != session
    after = objects(s3, bucket)
    written = {k for k in after if before.get(k) != after[k]}
    assert set(before) <= set(after)  # nothing deleted
    assert written and all(f"/{new_session}/" in k for k in written), written
    assert lock_keys(s3, bucket) == []
    settled = world.slack.thread("C0SHOP", basket["ts"])[0]
    assert world.buttons(settled) == {} and "<@U0CAROL> started this week again" in settled["text"]

    world.click(again, "approve_basket")
    world.run_lazies()
    assert thread_texts(world, again) == ["Ordered 10 items."]
    # The damaged basket's buttons still say it is damaged; its Start again starts nothing more.
    world.click(basket, "approve_basket", user="U0DAVE")
    world.run_lazies()
    offer = world.slack.thread("C0SHOP", basket["ts"])[-1]
    world.click(offer, START_AGAIN, user="U0DAVE")
    world.run_lazies()
    assert ephemeral_texts(world, "U0DAVE") == [ALREADY_AGAIN]
    assert len(world.baskets()) == 2


def test_a_damaged_basket_with_no_readable_checkpoint_starts_nothing(
    world: World, s3: Any, bucket: str
) -> None:
    """Every checkpoint of the session junk: there is no trusted request to start again from,
    so the presser is told to use /shop, and nothing is written."""
    basket = start_basket(world)
    session = session_of(world, basket)
    for key in _cp(s3, bucket, session):
        s3.put_object(Bucket=bucket, Key=key, Body=b"junk")
    said = click_damaged(world, basket, s3, bucket)
    before = objects(s3, bucket)
    world.click(said, START_AGAIN, user="U0CAROL")
    world.run_lazies()
    assert ephemeral_texts(world, "U0CAROL") == [NO_REQUEST]
    assert len(world.baskets()) == 1 and objects(s3, bucket) == before


def test_a_damaged_basket_restored_answers_again(world: World, s3: Any, bucket: str) -> None:
    """Damage that someone repairs (the stray objects removed): the basket's own buttons,
    which the offer left in place, answer it as before."""
    basket = start_basket(world)
    session = session_of(world, basket)
    damage(s3, bucket, session, "stray keys under cp/")
    click_damaged(world, basket, s3, bucket)
    for key in _cp(s3, bucket, session):
        if "/.part-" in key:
            s3.delete_object(Bucket=bucket, Key=key)
    world.click(basket, "approve_basket")
    world.run_lazies()
    assert thread_texts(world, basket)[-1] == "Ordered 10 items."
