"""The settings document of a workspace in S3 (``bot.records.workspace_settings``), on moto.

S3 facts these tests rely on, each as S3 documents it and moto answers it:
- ``GetObject`` with ``If-None-Match: <etag>`` of the current object answers 304 Not Modified,
  no body (so a warm container pays one small request, and no signature check, to learn nothing
  changed);
- ``PutObject`` with ``If-Match`` answers 412 PreconditionFailed when the object changed, and
  with ``If-None-Match: *`` when one exists (conditional writes, S3 since 2024).
"""

from __future__ import annotations

import json
from typing import Any

import pytest

from bot.records.workspace_settings import Change, WorkspaceSettings
from bot.records.workspace_settings_store import (
    SCHEMA_VERSION,
    S3WorkspaceSettings,
    SettingsChanged,
    decode,
    encode,
    settings_key,
    settings_prefix,
)
from workflow.shop.household import Household

KEY = b"k" * 32
TENANT = "T0HOME"
PREFIX = settings_prefix("weekly-shop/")


def counting(s3: Any) -> list[str]:
    calls: list[str] = []
    s3.meta.events.register("before-call.s3", lambda model, **_: calls.append(model.name))
    return calls


def saved() -> WorkspaceSettings:
    return WorkspaceSettings(
        approvers=("U0ALICE", "U0BOB"),
        approvals_needed=2,
        rounds=4,
        household=Household(people=4, avoid="pork", staples="oat milk"),
    )


def test_the_settings_live_beside_the_checkpoints_not_under_their_30_day_rule() -> None:
    assert PREFIX == "weekly-shop-settings/"
    assert settings_key(PREFIX, TENANT) == "weekly-shop-settings/T0HOME/settings"
    assert not settings_key(PREFIX, TENANT).startswith("weekly-shop/")


def test_a_saved_document_reads_back_the_same(s3: Any, bucket: str) -> None:
    store = S3WorkspaceSettings(bucket, PREFIX, s3, KEY)
    assert store.read(TENANT).saved is None  # nothing saved: the deploy's defaults apply
    store.save(TENANT, saved(), None)
    fresh = S3WorkspaceSettings(bucket, PREFIX, s3, KEY)  # another container
    found = fresh.read(TENANT)
    assert found.saved == saved() and found.problem is None and found.etag


def test_a_warm_container_asks_once_with_its_etag_and_gets_304(s3: Any, bucket: str) -> None:
    writer = S3WorkspaceSettings(bucket, PREFIX, s3, KEY)
    writer.save(TENANT, saved(), None)
    reader = S3WorkspaceSettings(bucket, PREFIX, s3, KEY)
    first = reader.read(TENANT)
    calls = counting(s3)
    again = reader.read(TENANT)
    assert again is first and calls == ["GetObject"]  # the 304: one request, nothing decoded


def test_a_change_saved_elsewhere_holds_on_the_next_read(s3: Any, bucket: str) -> None:
    a = S3WorkspaceSettings(bucket, PREFIX, s3, KEY)
    b = S3WorkspaceSettings(bucket, PREFIX, s3, KEY)
    a.save(TENANT, saved(), None)
    assert b.read(TENANT).saved == saved()
    etag = a.read(TENANT).etag
    a.save(TENANT, WorkspaceSettings(rounds=2), etag)
    assert b.read(TENANT).saved == WorkspaceSettings(rounds=2)


def test_two_admins_saving_at_once_the_second_is_told_and_nothing_is_lost(
    s3: Any, bucket: str
) -> None:
    store = S3WorkspaceSettings(bucket, PREFIX, s3, KEY)
    store.save(TENANT, saved(), None)
    opened = store.read(TENANT).etag  # both modals opened on this version
    store.save(TENANT, WorkspaceSettings(rounds=2), opened)  # admin A
    with pytest.raises(SettingsChanged):
        store.save(TENANT, WorkspaceSettings(rounds=5), opened)  # admin B: 412
    assert S3WorkspaceSettings(bucket, PREFIX, s3, KEY).read(TENANT).saved == WorkspaceSettings(
        rounds=2
    )


def test_two_first_saves_cannot_both_win(s3: Any, bucket: str) -> None:
    store = S3WorkspaceSettings(bucket, PREFIX, s3, KEY)
    store.save(TENANT, WorkspaceSettings(rounds=2), None)
    with pytest.raises(SettingsChanged):
        store.save(TENANT, WorkspaceSettings(rounds=5), None)  # If-None-Match: * → 412


def test_a_document_edited_in_s3_is_refused_as_tampered(s3: Any, bucket: str) -> None:
    store = S3WorkspaceSettings(bucket, PREFIX, s3, KEY)
    store.save(TENANT, saved(), None)
    key = settings_key(PREFIX, TENANT)
    doc = json.loads(s3.get_object(Bucket=bucket, Key=key)["Body"].read())
    doc["settings"]["approvers"] = ["U0MALLORY"]
    doc["settings"]["approvals_needed"] = 1
    s3.put_object(Bucket=bucket, Key=key, Body=json.dumps(doc).encode())
    found = S3WorkspaceSettings(bucket, PREFIX, s3, KEY).read(TENANT)
    assert found.saved is None and found.problem == "tampered"
    assert found.etag  # an admin can save over it (If-Match on what is there)


def test_a_document_of_another_workspace_or_key_is_tampered() -> None:
    raw = encode(KEY, TENANT, saved())
    assert decode(KEY, "T0OTHER", raw) == "tampered"
    assert decode(b"x" * 32, TENANT, raw) == "tampered"
    assert decode(KEY, TENANT, b"not json") == "tampered"
    assert decode(KEY, TENANT, b'{"v": true, "settings": {}, "mac": ""}') == "tampered"


def test_a_document_that_is_signed_but_out_of_bounds_is_tampered() -> None:
    from bot.records import workspace_settings_store as ws

    body = {**saved().to_json(), "approvals_needed": 3}  # more than the two approvers
    mac = ws._mac(KEY, TENANT, SCHEMA_VERSION, body)
    raw = json.dumps({"v": SCHEMA_VERSION, "settings": body, "mac": mac}).encode()
    assert decode(KEY, TENANT, raw) == "tampered"


def test_a_newer_schema_is_not_used_and_not_overwritten_blindly() -> None:
    from bot.records import workspace_settings_store as ws

    body = saved().to_json()
    newer = SCHEMA_VERSION + 1
    raw = json.dumps({"v": newer, "settings": body, "mac": ws._mac(KEY, TENANT, newer, body)})
    assert decode(KEY, TENANT, raw.encode()) == "newer"


def test_an_older_schema_is_upgraded_as_it_is_read(monkeypatch: pytest.MonkeyPatch) -> None:
    """The upgrade path: a version-n body goes through UPGRADES[n], …, to the current one."""
    from bot.records import workspace_settings_store as ws

    monkeypatch.setattr(ws, "SCHEMA_VERSION", 2)
    monkeypatch.setitem(ws.UPGRADES, 1, lambda body: {**body, "rounds": 5})
    body = saved().to_json()
    raw = json.dumps({"v": 1, "settings": body, "mac": ws._mac(KEY, TENANT, 1, body)})
    found = decode(KEY, TENANT, raw.encode())
    assert isinstance(found, WorkspaceSettings) and found.rounds == 5


@pytest.mark.parametrize(
    ("changes", "says"),
    [
        ({"approvers": ("U0ALICE",), "approvals_needed": 2}, "at most the number of approvers"),
        ({"approvals_needed": 51}, "at most 50"),
        ({"approvers": ("U0ALICE", "U0ALICE")}, "names someone twice"),
        ({"approvers": ("<!channel>",)}, "not a Slack user ID"),
        ({"expire_after": 22 * 86400}, "at most 21 days"),
        ({"rounds": 0}, "rounds must be >= 1"),
        ({"max_reminders": 11}, "at most 10 reminders"),
    ],
)
def test_settings_out_of_bounds_are_refused(changes: dict[str, Any], says: str) -> None:
    with pytest.raises(ValueError, match=says):
        WorkspaceSettings(**changes)


def test_each_saved_change_is_kept_as_one_line_newest_first() -> None:
    s = WorkspaceSettings()
    for n in range(25):
        s = s.saved_by("U0CAROL", 1_700_000_000 + n, f"rounds: {n}")
    assert len(s.changes) == 20 and s.changes[0] == Change(
        at=1_700_000_024, by="U0CAROL", what="rounds: 24"
    )


def test_the_household_is_said_to_the_shopper_and_shown_in_a_line() -> None:
    home = Household(people=4, avoid="pork", staples="oat milk")
    assert home.line() == "For 4 · no pork · always oat milk"
    assert home.brief() == "We are 4. We don't eat: pork. Always include: oat milk."
    assert not Household().said and Household().line() == ""


@pytest.mark.parametrize(
    ("env", "says"),
    [
        (
            {"APPROVER_IDS": "alice,U0BOB"},
            "APPROVER_IDS is invalid: 'alice' is not a Slack user ID",
        ),
        ({"APPROVER_IDS": ",".join(f"U0P{n:03d}" for n in range(51))}, "at most 50 people"),
    ],
)
def test_the_deploys_approvers_are_checked_at_cold_start(env: dict[str, str], says: str) -> None:
    """The environment is every workspace's default settings: what no workspace could save
    fails at start-up, naming the variable, never at a click."""
    from bot.settings import Settings, SettingsError

    base = {"SLACK_SIGNING_SECRET": "s", "CHECKPOINT_BUCKET": "bucket", "SLACK_BOT_TOKEN": "xoxb-1"}
    with pytest.raises(SettingsError, match=says):
        Settings.from_env({**base, **env})


def test_any_valid_environment_makes_valid_default_settings() -> None:
    """The widest the environment allows is a workspace's default settings too."""
    from bot.runtime import Runtime
    from bot.settings import Settings

    env = {
        "SLACK_SIGNING_SECRET": "s",
        "CHECKPOINT_BUCKET": "bucket",
        "SLACK_BOT_TOKEN": "xoxb-1",
        "APPROVER_IDS": ",".join(f"U0P{n:03d}" for n in range(50)),
        "APPROVALS_NEEDED": "50",
        "MAX_ROUNDS": "10",
        "REMIND_AFTER": "7d",
        "MAX_REMINDERS": "10",
        "EXPIRE_AFTER": "21d",
        "NO_SELF_APPROVAL": "true",
    }
    defaults = Runtime.from_settings(Settings.from_env(env), web=object()).defaults
    assert defaults.approvals_needed == 50 and defaults.rounds == 10
    anyone = Settings.from_env({**env, "APPROVER_IDS": ""})
    assert Runtime.from_settings(anyone, web=object()).defaults.approvals_needed == 50


def test_a_409_on_the_save_is_tried_once_more_then_counts_as_changed(
    s3: Any, bucket: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """S3 answers 409 ConditionalRequestConflict while another conditional write on the key
    is in flight (botocore does not retry it): once more, then the other write won."""
    from tests.fault_kit import S3Faults, moto_skips_refused, op

    moto_skips_refused(monkeypatch)
    faults = S3Faults().install(s3)
    store = S3WorkspaceSettings(bucket, PREFIX, s3, KEY)
    faults.add(op("PutObject", "settings"), 409, "ConditionalRequestConflict", 1)
    store.save(TENANT, saved(), None)  # the second attempt wins
    assert S3WorkspaceSettings(bucket, PREFIX, s3, KEY).read(TENANT).saved == saved()
    faults.add(op("PutObject", "settings"), 409, "ConditionalRequestConflict", 2)
    with pytest.raises(SettingsChanged):
        store.save(TENANT, WorkspaceSettings(rounds=2), store.read(TENANT).etag)
    faults.uninstall(s3)


def test_a_workspace_that_saved_nothing_keeps_one_cached_read(s3: Any, bucket: str) -> None:
    """Nothing saved, still nothing saved: the same object, so a warm container keeps the
    runtime it built for it (and its clients) instead of building one a click."""
    store = S3WorkspaceSettings(bucket, PREFIX, s3, KEY)
    first = store.read(TENANT)
    calls = counting(s3)
    assert store.read(TENANT) is first and calls == ["GetObject"]


def test_a_switched_off_weekly_runs_kept_fields_sit_beside_the_body_under_their_own_mac() -> None:
    """Kept beside the signed body (as the generation is): the body is what older code reads,
    unchanged; the kept fields read back; altered, or moved to another document, they are
    refused as tampered."""
    from dataclasses import replace

    from bot.records.workspace_settings import KeptRun

    kept = KeptRun(channel="C0WEEKLY", time="09:30", timezone="Europe/London", request="tacos")
    settings = replace(saved(), weekly_kept=kept)
    doc = json.loads(encode(KEY, TENANT, settings, generation=3))
    assert doc["settings"] == saved().to_json()  # what a deploy from before reads
    assert decode(KEY, TENANT, json.dumps(doc).encode()) == settings
    altered = {**doc, "kept": {**doc["kept"], "request": "steak"}}
    assert decode(KEY, TENANT, json.dumps(altered).encode()) == "tampered"
    other = json.loads(encode(KEY, TENANT, replace(settings, rounds=2), generation=3))
    moved = {**other, "kept": doc["kept"], "kept_mac": doc["kept_mac"]}
    assert decode(KEY, TENANT, json.dumps(moved).encode()) == "tampered"
    with pytest.raises(ValueError):
        KeptRun(channel="<!channel>")
