"""Each person's Kroger refresh token (issue 34, item 4): kept as an SSM SecureString under the
stack's KMS key, one parameter per person, read and replaced by name, listed only to forget a
workspace that removed the app.

Against moto's SSM and KMS (``mock_aws``). SSM facts the fake is held to here:

- ``GetParametersByPath`` answers at most 10 parameters (``MaxResults`` 1 to 10; an answer may
  hold fewer, with a ``NextToken``): moto refuses more than 10 with ``ValidationException``, as
  SSM does (API reference, "GetParametersByPath").
- ``DeleteParameters`` takes 1 to 10 names (API reference, "DeleteParameters"); moto 5.2.5
  deletes any number, so :func:`ssm_refuses_more_than_ten` makes it refuse as SSM would.
- A SecureString read without ``WithDecryption`` answers its ciphertext; moto writes it as
  ``kms:<key>:<value>``, naming the key it was encrypted under.

Removing the app, through the real handler: ``tests/test_kroger_accounts_uninstall.py``.
"""

from __future__ import annotations

import datetime
import io
import logging
from collections.abc import Iterator
from typing import Any

import boto3
import pytest
from botocore.exceptions import ClientError

from bot.records.kroger_accounts import KrogerAccounts
from bot.records.workspace_secrets import SecretsDown

PATH = "/weekly-shop/test/workspaces"
TEAM, OTHER = "T0TEAM", "T0OTHER"
TOKEN = "kroger-refresh-Zm9vYmFyLTAxMjM0NTY3ODk"
ROTATED = "kroger-refresh-cm90YXRlZC05ODc2NTQzMjE"


@pytest.fixture(autouse=True)
def ssm_refuses_more_than_ten(monkeypatch: pytest.MonkeyPatch) -> None:
    """SSM's ``DeleteParameters`` refuses more than 10 names; moto's does not."""
    from moto.ssm.exceptions import ValidationException
    from moto.ssm.models import SimpleSystemManagerBackend

    delete = SimpleSystemManagerBackend.delete_parameters

    def at_most_ten(self: Any, names: list[str]) -> list[str]:
        if len(names) > 10:
            raise ValidationException(
                "1 validation error detected: Value at 'names' failed to satisfy constraint: "
                "Member must have length less than or equal to 10"
            )
        return delete(self, names)

    monkeypatch.setattr(SimpleSystemManagerBackend, "delete_parameters", at_most_ten)


class MotoClock:
    """moto's SSM clock (``LastModifiedDate``), moved by hand: one hour a save unless set."""

    def __init__(self, monkeypatch: pytest.MonkeyPatch) -> None:
        self.now = datetime.datetime(2026, 12, 1, 9, 0, 0)
        monkeypatch.setattr("moto.ssm.models.utcnow", self.tick)

    def tick(self) -> datetime.datetime:
        self.now += datetime.timedelta(hours=1)
        return self.now


@pytest.fixture
def ssm(aws_env: None) -> Iterator[Any]:
    from moto import mock_aws

    with mock_aws():
        yield boto3.client("ssm", region_name="us-east-1")


@pytest.fixture
def kms_key(ssm: Any) -> str:
    kms = boto3.client("kms", region_name="us-east-1")
    return str(kms.create_key(Description="weekly-shop keys")["KeyMetadata"]["Arn"])


@pytest.fixture
def accounts(ssm: Any, kms_key: str) -> KrogerAccounts:
    return KrogerAccounts(ssm, PATH + "/", kms_key)


def names_under(ssm: Any, path: str) -> list[str]:
    pages = ssm.get_paginator("get_parameters_by_path").paginate(Path=path, Recursive=True)
    return sorted(p["Name"] for page in pages for p in page["Parameters"])


def people(n: int) -> list[str]:
    return [f"U0P{i:03d}" for i in range(n)]


def test_a_token_is_kept_encrypted_under_the_stacks_key_and_read_back(
    ssm: Any, kms_key: str, accounts: KrogerAccounts
) -> None:
    assert accounts.read(TEAM, "U0ALICE") is None
    accounts.save(TEAM, "U0ALICE", TOKEN)
    name = f"{PATH}/{TEAM}/kroger/U0ALICE"
    stored = ssm.get_parameter(Name=name)["Parameter"]
    assert stored["Type"] == "SecureString"
    assert stored["Value"].startswith(f"kms:{kms_key}:")  # encrypted under the stack's key
    (described,) = ssm.describe_parameters()["Parameters"]
    assert described["KeyId"] == kms_key and described["Tier"] == "Standard"
    assert accounts.read(TEAM, "U0ALICE") == TOKEN
    assert accounts.read(TEAM, "U0BOB") is None and accounts.read(OTHER, "U0ALICE") is None


def test_a_renewed_token_replaces_the_old_one(
    ssm: Any, accounts: KrogerAccounts, monkeypatch: pytest.MonkeyPatch
) -> None:
    MotoClock(monkeypatch)
    accounts.save(TEAM, "U0ALICE", TOKEN)
    first = accounts.connected_at(TEAM, "U0ALICE")
    accounts.save(TEAM, "U0ALICE", ROTATED)
    assert accounts.read(TEAM, "U0ALICE") == ROTATED
    renewed = accounts.connected_at(TEAM, "U0ALICE")
    assert first is not None and renewed is not None
    assert renewed - first == datetime.timedelta(hours=1)
    assert names_under(ssm, PATH) == [f"{PATH}/{TEAM}/kroger/U0ALICE"]  # one parameter
    later = KrogerAccounts(ssm, PATH, clock=lambda: renewed.timestamp() + 600)
    assert later.token_age(TEAM, "U0ALICE") == 600
    assert later.token_age(TEAM, "U0BOB") is None


def test_when_a_person_connected_is_read_without_decrypting(
    ssm: Any, accounts: KrogerAccounts
) -> None:
    """What SSM was asked, as the request went out: ``WithDecryption`` false."""
    asked: list[dict[str, Any]] = []
    ssm.meta.events.register(
        "provide-client-params.ssm.GetParameter", lambda params, **_: asked.append(dict(params))
    )
    assert accounts.connected_at(TEAM, "U0ALICE") is None
    accounts.save(TEAM, "U0ALICE", TOKEN)
    at = accounts.connected_at(TEAM, "U0ALICE")
    assert isinstance(at, datetime.datetime)
    assert [a["WithDecryption"] for a in asked] == [False, False]


def test_a_person_who_disconnects_is_forgotten_and_no_one_else(
    ssm: Any, accounts: KrogerAccounts
) -> None:
    for team, user in ((TEAM, "U0ALICE"), (TEAM, "U0BOB"), (OTHER, "U0ALICE")):
        accounts.save(team, user, f"{TOKEN}-{team}-{user}")
    assert accounts.forget_person(TEAM, "U0ALICE") is True
    assert accounts.forget_person(TEAM, "U0ALICE") is False  # already gone: nothing to do
    assert accounts.read(TEAM, "U0ALICE") is None
    assert accounts.read(TEAM, "U0BOB") == f"{TOKEN}-{TEAM}-U0BOB"
    assert accounts.read(OTHER, "U0ALICE") == f"{TOKEN}-{OTHER}-U0ALICE"


def test_a_workspace_of_25_people_is_forgotten_page_by_page(
    ssm: Any, accounts: KrogerAccounts
) -> None:
    """25 tokens: three pages of ``GetParametersByPath`` and three ``DeleteParameters`` (10,
    10, 5), the workspace's own keys and another workspace's people untouched."""
    asked: list[str] = []
    ssm.meta.events.register(
        "provide-client-params.ssm", lambda params, model, **_: asked.append(model.name)
    )
    for user in people(25):
        accounts.save(TEAM, user, f"{TOKEN}-{user}")
    accounts.save(OTHER, "U0ALICE", TOKEN)
    ssm.put_parameter(Name=f"{PATH}/{TEAM}/instacart-api-key", Value="k", Type="SecureString")
    asked.clear()
    assert accounts.forget(TEAM) == 25
    assert asked.count("GetParametersByPath") == 3 and asked.count("DeleteParameters") == 3
    assert names_under(ssm, PATH) == [
        f"{PATH}/{OTHER}/kroger/U0ALICE",
        f"{PATH}/{TEAM}/instacart-api-key",
    ]
    assert accounts.forget(TEAM) == 0  # a second delivery of the removal finds nothing


def test_forgetting_with_before_keeps_a_token_saved_since(
    ssm: Any, accounts: KrogerAccounts, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A late removal (the workspace installed the app again since) deletes only what was
    saved before it: Bob connected under the new installation and stays."""
    MotoClock(monkeypatch)
    accounts.save(TEAM, "U0ALICE", TOKEN)
    accounts.save(TEAM, "U0BOB", ROTATED)
    bob = accounts.connected_at(TEAM, "U0BOB")
    assert bob is not None
    assert accounts.forget(TEAM, before=bob.timestamp()) == 1
    assert accounts.read(TEAM, "U0ALICE") is None and accounts.read(TEAM, "U0BOB") == ROTATED


@pytest.mark.parametrize(
    ("team", "user"),
    [
        ("../T0TEAM", "U0ALICE"),
        ("T0TEAM/kroger", "U0ALICE"),
        ("", "U0ALICE"),
        (TEAM, ""),
        (TEAM, "u0alice"),
        (TEAM, "<@U0ALICE>"),
        (TEAM, "U0ALICE/../U0BOB"),
        (TEAM, "C0CHANNEL"),
    ],
)
def test_ids_that_are_not_slacks_are_refused_before_ssm_is_asked(
    ssm: Any, accounts: KrogerAccounts, team: str, user: str
) -> None:
    for call in (
        lambda: accounts.save(team, user, TOKEN),
        lambda: accounts.read(team, user),
        lambda: accounts.connected_at(team, user),
        lambda: accounts.forget_person(team, user),
    ):
        with pytest.raises(ValueError):
            call()
    if team != TEAM:
        with pytest.raises(ValueError):
            accounts.forget(team)
    assert names_under(ssm, "/") == []


def test_an_empty_or_oversized_token_is_refused_without_saying_it(
    ssm: Any, accounts: KrogerAccounts
) -> None:
    """A Standard parameter's value is at most 4 KB."""
    for bad in ("", "x" * 4097):
        with pytest.raises(ValueError) as refused:
            accounts.save(TEAM, "U0ALICE", bad)
        assert "xxxx" not in str(refused.value)
    accounts.save(TEAM, "U0ALICE", "y" * 4096)
    assert accounts.read(TEAM, "U0ALICE") == "y" * 4096


@pytest.mark.parametrize(
    ("operation", "call", "said"),
    [
        ("PutParameter", "save", "save a person's Kroger refresh token: ThrottlingException"),
        ("GetParameter", "read", "read a person's Kroger refresh token: ThrottlingException"),
        ("GetParameter", "connected_at", "check a person's Kroger account: ThrottlingException"),
        (
            "DeleteParameters",
            "forget_person",
            "delete a person's Kroger account: ThrottlingException",
        ),
        (
            "GetParametersByPath",
            "forget",
            "list the workspace's Kroger accounts: ThrottlingException",
        ),
    ],
)
def test_ssm_down_is_secrets_down_naming_the_operation_never_the_token(
    ssm: Any, accounts: KrogerAccounts, operation: str, call: str, said: str
) -> None:
    """SSM throttling (its answer to too many requests, HTTP 400 ``ThrottlingException``), after
    botocore's own retries: the error names what failed and SSM's code, not the token."""
    accounts.save(TEAM, "U0ALICE", TOKEN)

    def throttled(**_: Any) -> None:
        raise ClientError(
            {"Error": {"Code": "ThrottlingException", "Message": "Rate exceeded"}}, operation
        )

    ssm.meta.events.register(f"before-call.ssm.{operation}", throttled)
    args = {
        "save": (TEAM, "U0ALICE", ROTATED),
        "forget": (TEAM,),
    }.get(call, (TEAM, "U0ALICE"))
    with pytest.raises(SecretsDown) as down:
        getattr(accounts, call)(*args)
    assert str(down.value) == said
    assert TOKEN not in repr(down.value) and ROTATED not in repr(down.value)
    assert TOKEN not in repr(accounts) and PATH in accounts.folder(TEAM)


def test_with_botocore_at_debug_no_token_reaches_a_log_line(
    ssm: Any, accounts: KrogerAccounts
) -> None:
    """botocore at DEBUG logs each request's body and each answer's; the project's JSON log
    lines mask bodies (``bot.logs.redact``), so neither a saved nor a read token is written."""
    from bot.logs import JsonFormatter

    out = io.StringIO()
    handler = logging.StreamHandler(out)
    handler.setFormatter(JsonFormatter())
    names = ("", "botocore", "urllib3")
    levels = {name: logging.getLogger(name).level for name in names}
    logging.getLogger().addHandler(handler)
    for name in names:
        logging.getLogger(name).setLevel(logging.DEBUG)
    try:
        accounts.save(TEAM, "U0ALICE", TOKEN)
        assert accounts.read(TEAM, "U0ALICE") == TOKEN
        assert accounts.forget(TEAM) == 1
    finally:
        logging.getLogger().removeHandler(handler)
        for name, level in levels.items():
            logging.getLogger(name).setLevel(level)
    logged = out.getvalue()
    assert "PutParameter" in logged and "Response body" in logged  # botocore did log
    assert "Kroger accounts deleted" in logged
    assert TOKEN not in logged
