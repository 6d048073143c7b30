"""An older signed settings document put back is a rollback, caught by its generation.

Every save signs a generation one above the last into the document and then records it in SSM
(``bot.records.settings_generations``), where someone who can write to the bucket cannot write.
A document whose generation is below the record's (a backup restored, an S3 object version
brought back, bytes copied in) is "rolled-back": not used, the rules closed, as for a damaged one
(tests/test_settings_unreadable.py), until an admin saves again.

S3 and SSM facts these tests rely on, as AWS documents them and moto answers them:
- a single-part ``PutObject``'s ETag (SSE-S3) is the MD5 of its bytes, so the very bytes put back
  get the very ETag a warm container holds, and its ``If-None-Match`` GET is answered 304: the
  store compares with the record at least every ``CHECK_EVERY`` seconds for that reason;
- ``GetParameter`` of a parameter never written answers ``ParameterNotFound``;
  ``DeleteParameters`` of one that is not there succeeds (it is listed as invalid).
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterator
from typing import Any

import boto3
import pytest

from bot.records.settings_generations import (
    CHECK_EVERY,
    GenerationsDown,
    InMemoryGenerations,
    SsmGenerations,
)
from bot.records.workspace_settings import WorkspaceSettings
from bot.records.workspace_settings_store import (
    SCHEMA_VERSION,
    S3WorkspaceSettings,
    _mac,
    read_document,
    settings_key,
    settings_prefix,
)
from bot.sandbox.slack_events import event_callback
from bot.slack.outcome import STORE_DOWN
from bot.slack.settings_summary import ROLLED_BACK
from bot.steps.rules import UNREADABLE
from tests.bot_kit import SECRET, World, context_text, start_basket
from tests.fault_kit import ephemeral_texts, lock_keys, thread_texts
from tests.settings_kit import settle
from workflow.errors import StoreError

KEY = b"k" * 32
TENANT = "T0TEAM"
PREFIX = settings_prefix("weekly-shop/")
PATH = "/weekly-shop/test/workspaces"
BOB_ALONE = WorkspaceSettings(approvers=("U0BOB",))
BOB_AND_DAVE = WorkspaceSettings(approvers=("U0BOB", "U0DAVE"), approvals_needed=2)


class Clock:
    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


class Counted(InMemoryGenerations):
    def __init__(self) -> None:
        super().__init__()
        self.asked = 0

    def recorded(self, team: str) -> int:
        self.asked += 1
        return super().recorded(team)


def doc_of(s3: Any, bucket: str, prefix: str = PREFIX) -> bytes:
    body: bytes = s3.get_object(Bucket=bucket, Key=settings_key(prefix, TENANT))["Body"].read()
    return body


def put_back(s3: Any, bucket: str, body: bytes, prefix: str = PREFIX) -> str:
    answer = s3.put_object(Bucket=bucket, Key=settings_key(prefix, TENANT), Body=body)
    return str(answer["ETag"])


# -- the store, on moto's S3 ------------------------------------------------------------------


def test_each_save_signs_the_next_generation_and_records_it(s3: Any, bucket: str) -> None:
    kept = InMemoryGenerations()
    store = S3WorkspaceSettings(bucket, PREFIX, s3, KEY, kept)
    for n, settings in enumerate((BOB_ALONE, BOB_AND_DAVE, BOB_ALONE), start=1):
        store.save(TENANT, settings, store.read(TENANT).etag)
        assert read_document(KEY, TENANT, doc_of(s3, bucket)) == (settings, n)
        assert kept.recorded(TENANT) == n


def test_an_older_copy_put_back_is_rolled_back_and_a_save_over_it_goes_above(
    s3: Any, bucket: str
) -> None:
    """Bob alone (1), then Bob and Dave with 2 needed (2); the copy of 1 put back is not used,
    in a container that read 2 and in one that never read anything; an admin's save over it
    (on its ETag) is generation 3, and read as the settings again."""
    kept = InMemoryGenerations()
    warm = S3WorkspaceSettings(bucket, PREFIX, s3, KEY, kept)
    warm.save(TENANT, BOB_ALONE, None)
    first = doc_of(s3, bucket)
    warm.save(TENANT, BOB_AND_DAVE, warm.read(TENANT).etag)
    assert warm.read(TENANT).saved == BOB_AND_DAVE
    etag = put_back(s3, bucket, first)
    for store in (warm, S3WorkspaceSettings(bucket, PREFIX, s3, KEY, kept)):
        found = store.read(TENANT)
        assert (found.saved, found.problem, found.etag, found.generation) == (
            None,
            "rolled-back",
            etag,
            2,
        )
    warm.save(TENANT, BOB_AND_DAVE, etag)
    assert read_document(KEY, TENANT, doc_of(s3, bucket)) == (BOB_AND_DAVE, 3)
    assert S3WorkspaceSettings(bucket, PREFIX, s3, KEY, kept).read(TENANT).saved == BOB_AND_DAVE


def test_a_document_deleted_where_one_was_saved_is_rolled_back(s3: Any, bucket: str) -> None:
    """No document at all is the oldest copy of all (the deploy's defaults): with generation 1
    recorded, it is not "nothing saved"; a first save again (If-None-Match: *) is generation 2."""
    kept = InMemoryGenerations()
    store = S3WorkspaceSettings(bucket, PREFIX, s3, KEY, kept)
    store.save(TENANT, BOB_AND_DAVE, None)
    s3.delete_object(Bucket=bucket, Key=settings_key(PREFIX, TENANT))
    found = S3WorkspaceSettings(bucket, PREFIX, s3, KEY, kept).read(TENANT)
    assert (found.saved, found.problem, found.etag) == (None, "rolled-back", None)
    store.save(TENANT, BOB_AND_DAVE, None)
    assert read_document(KEY, TENANT, doc_of(s3, bucket))[1] == 2


def test_the_very_bytes_a_warm_container_holds_put_back_are_caught_within_check_every(
    s3: Any, bucket: str
) -> None:
    """Container A read generation 1 and holds its ETag; B saves 2; 1's bytes are put back,
    with 1's ETag (the MD5 of the bytes), so A's conditional GET is a 304. A trusts what it
    compared for CHECK_EVERY seconds, then asks the record again and finds 2."""
    kept, clock = InMemoryGenerations(), Clock()
    a = S3WorkspaceSettings(bucket, PREFIX, s3, KEY, kept, clock)
    b = S3WorkspaceSettings(bucket, PREFIX, s3, KEY, kept)
    b.save(TENANT, BOB_ALONE, None)
    first = doc_of(s3, bucket)
    held = a.read(TENANT)
    assert held.etag == f'"{hashlib.md5(first).hexdigest()}"'  # noqa: S324 - S3's ETag
    b.save(TENANT, BOB_AND_DAVE, b.read(TENANT).etag)
    assert put_back(s3, bucket, first) == held.etag
    clock.now += CHECK_EVERY - 1
    assert a.read(TENANT) is held  # the window: a 304, compared less than CHECK_EVERY ago
    clock.now += 1
    assert a.read(TENANT).problem == "rolled-back"


def test_a_warm_container_asks_the_record_only_when_the_document_changed(
    s3: Any, bucket: str
) -> None:
    """Warm clicks cost nothing more: a 304 asks nothing, a changed document asks once, and a
    workspace that saved nothing asks once per CHECK_EVERY (its document could only be missing
    because it was deleted)."""
    kept, clock = Counted(), Clock()
    store = S3WorkspaceSettings(bucket, PREFIX, s3, KEY, kept, clock)
    for _ in range(3):
        store.read(TENANT)
    assert kept.asked == 1
    elsewhere = S3WorkspaceSettings(bucket, PREFIX, s3, KEY, InMemoryGenerations())
    elsewhere.save(TENANT, BOB_ALONE, None)
    for _ in range(3):
        assert store.read(TENANT).saved == BOB_ALONE
    assert kept.asked == 2
    clock.now += CHECK_EVERY
    store.read(TENANT)
    store.read(TENANT)
    assert kept.asked == 3


def test_a_document_from_before_generations_reads_as_generation_0(s3: Any, bucket: str) -> None:
    """Written by code from before generations (no generation, no generation_mac): read as
    before where nothing is recorded; rolled back where a later save was."""
    body = BOB_ALONE.to_json()
    old = {"v": SCHEMA_VERSION, "settings": body, "mac": _mac(KEY, TENANT, SCHEMA_VERSION, body)}
    raw = json.dumps(old).encode()
    assert read_document(KEY, TENANT, raw) == (BOB_ALONE, 0)
    put_back(s3, bucket, raw)
    kept = InMemoryGenerations()
    assert S3WorkspaceSettings(bucket, PREFIX, s3, KEY, kept).read(TENANT).saved == BOB_ALONE
    kept.record(TENANT, 4)
    assert S3WorkspaceSettings(bucket, PREFIX, s3, KEY, kept).read(TENANT).problem == "rolled-back"


@pytest.mark.parametrize(
    "change",
    [
        {"generation": 9},  # a higher generation, its MAC the old one's
        {"generation_mac": "0" * 64},
        {"generation": True},
        {"generation": -1},
    ],
)
def test_a_generation_that_is_not_the_signed_one_is_tampered(change: dict[str, Any]) -> None:
    from bot.records.workspace_settings_store import encode

    doc = json.loads(encode(KEY, TENANT, BOB_ALONE, 3))
    assert read_document(KEY, TENANT, json.dumps(doc).encode()) == (BOB_ALONE, 3)
    assert read_document(KEY, TENANT, json.dumps({**doc, **change}).encode()) == ("tampered", 0)


def test_a_record_that_fails_after_the_save_leaves_it_saved(
    s3: Any, bucket: str, caplog: pytest.LogCaptureFixture
) -> None:
    """The document is written first: SSM failing after it is logged, the save stands (the
    record lags one generation behind; a higher generation is never read as a rollback)."""

    class Failing(InMemoryGenerations):
        def record(self, team: str, generation: int) -> None:
            raise GenerationsDown("SSM record settings generation: ThrottlingException")

    kept = Failing()
    store = S3WorkspaceSettings(bucket, PREFIX, s3, KEY, kept)
    assert store.save(TENANT, BOB_ALONE, None).generation == 1
    assert "could not be recorded" in caplog.text
    assert S3WorkspaceSettings(bucket, PREFIX, s3, KEY, kept).read(TENANT).saved == BOB_ALONE


def test_a_record_that_cannot_be_read_is_a_store_error(s3: Any, bucket: str) -> None:
    class Down(InMemoryGenerations):
        def recorded(self, team: str) -> int:
            raise GenerationsDown("SSM read settings generation: InternalServerError")

    S3WorkspaceSettings(bucket, PREFIX, s3, KEY).save(TENANT, BOB_ALONE, None)
    with pytest.raises(StoreError):
        S3WorkspaceSettings(bucket, PREFIX, s3, KEY, Down()).read(TENANT)


@pytest.fixture(params=["ssm", "memory"])
def generations(request: pytest.FixtureRequest, s3: Any) -> Iterator[Any]:
    """Each backend of the record (SSM through moto, and its in-memory twin)."""
    if request.param == "ssm":
        yield SsmGenerations(boto3.client("ssm", region_name="us-east-1"), PATH + "/")
    else:
        yield InMemoryGenerations()


def test_the_record_contract(generations: Any) -> None:
    assert generations.recorded(TENANT) == 0
    generations.record(TENANT, 5)
    generations.record(TENANT, 6)
    assert generations.recorded(TENANT) == 6 and generations.recorded("T0OTHER") == 0
    generations.forget(TENANT)
    generations.forget(TENANT)  # (nothing there: no error)
    assert generations.recorded(TENANT) == 0


def test_the_parameter_is_a_plain_string_under_the_workspaces_path(s3: Any) -> None:
    ssm = boto3.client("ssm", region_name="us-east-1")
    SsmGenerations(ssm, PATH).record(TENANT, 7)
    found = ssm.get_parameter(Name=f"{PATH}/{TENANT}/settings-generation")["Parameter"]
    assert (found["Type"], found["Value"]) == ("String", "7")


# -- through the real handler, the record in moto's SSM ---------------------------------------


@pytest.fixture
def carol(world: World) -> World:
    """Carol is a workspace admin; the deploy keeps per-workspace parameters (SSM, moto)."""
    world.slack.set_person("U0CAROL", is_admin=True, tz="Europe/London")
    world.boot(WORKSPACE_SECRETS_PATH=PATH)
    return world


def approve(world: World, user: str) -> dict[str, Any]:
    world.click(world.baskets()[0], "approve_basket", user=user)
    world.run_lazies()
    return world.baskets()[0]


SHOP_SETTINGS = settings_prefix("weekly-shop/")


def test_an_older_signed_copy_put_back_orders_nothing_until_an_admin_saves(
    carol: World, s3: Any, bucket: str
) -> None:
    """Approvers Bob alone, then Bob and Dave with 2 needed; the first document put back over
    the second. In a container started after it (nothing in memory: the record in SSM says 2),
    Bob's approve, which the copy would let order alone, orders nothing and he is told why; the
    Home tab says an older copy was put back. Carol's save repairs it: 1 of 2, then ordered."""
    settle(carol, "U0BOB", needed=1)
    first = doc_of(s3, bucket, SHOP_SETTINGS)
    settle(carol, "U0BOB", "U0DAVE", needed=2)
    basket = start_basket(carol)
    ssm = boto3.client("ssm", region_name="us-east-1")
    name = f"{PATH}/{TENANT}/settings-generation"
    assert ssm.get_parameter(Name=name)["Parameter"]["Value"] == "2"
    put_back(s3, bucket, first, SHOP_SETTINGS)
    carol.boot()  # a cold start: only the record knows 2 was saved
    approve(carol, "U0BOB")
    assert ephemeral_texts(carol, "U0BOB") == [UNREADABLE]
    assert thread_texts(carol, basket) == [] and lock_keys(s3, bucket) == []
    assert ROLLED_BACK in json.dumps(carol.open_home("U0CAROL"))
    settle(carol, "U0BOB", "U0DAVE", needed=2)
    assert ssm.get_parameter(Name=name)["Parameter"]["Value"] == "3"
    assert "Approved by <@U0BOB> · 1 of 2 needed" in context_text(approve(carol, "U0BOB"))
    assert thread_texts(carol, approve(carol, "U0DAVE")) == ["Ordered 10 items."]


def test_the_record_unreachable_is_said_as_s3_down_and_orders_nothing(
    carol: World, s3: Any, bucket: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    settle(carol, "U0BOB", "U0DAVE", needed=2)
    basket = start_basket(carol)

    def down(self: Any, team: str) -> int:
        raise GenerationsDown("SSM read settings generation: InternalServerError")

    monkeypatch.setattr(SsmGenerations, "recorded", down)
    carol.boot()  # a cold start must ask the record
    approve(carol, "U0ALICE")
    assert thread_texts(carol, basket) == [STORE_DOWN]


def test_removing_the_app_forgets_the_recorded_generation(carol: World) -> None:
    """Else the workspace, installing the app again, would read its missing document as a
    rollback and order nothing until an admin saved."""
    settle(carol, "U0BOB", needed=1)
    ssm = boto3.client("ssm", region_name="us-east-1")
    name = f"{PATH}/{TENANT}/settings-generation"
    assert ssm.get_parameter(Name=name)["Parameter"]["Value"] == "1"
    carol.send(event_callback(SECRET, {"type": "app_uninstalled"}, team_id=TENANT))
    carol.run_lazies()
    with pytest.raises(ssm.exceptions.ParameterNotFound):
        ssm.get_parameter(Name=name)


def test_without_a_record_an_older_copy_is_read_as_the_readme_says(
    world: World, s3: Any, bucket: str
) -> None:
    """WORKSPACE_SECRETS_PATH unset: nothing is recorded, so a copy put back is read as the
    settings (README, Settings: what detecting it needs)."""
    world.slack.set_person("U0CAROL", is_admin=True, tz="Europe/London")
    settle(world, "U0BOB", needed=1)
    first = doc_of(s3, bucket, SHOP_SETTINGS)
    settle(world, "U0BOB", "U0DAVE", needed=2)
    basket = start_basket(world)
    put_back(s3, bucket, first, SHOP_SETTINGS)
    assert thread_texts(world, approve(world, "U0BOB")) == ["Ordered 10 items."]
    assert basket["ts"] == world.baskets()[0]["ts"]
