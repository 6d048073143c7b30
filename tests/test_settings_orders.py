"""Where a workspace's orders go, chosen in its Settings (issue 22): the destination, Instacart's
server, the webhook's URL, and the write-only keys (an Instacart API key, a webhook signing
secret) kept as SSM SecureString parameters under the stack's KMS key.

Through the real handler, moto (S3, SSM, KMS under ``mock_aws``), the fake Web API, the local
Instacart stand-in and the HTTPS webhook receiver. SSM facts written into the fakes' use:
``PutParameter`` with ``Type=SecureString`` and ``KeyId`` encrypts under that KMS key, and
``GetParameter`` without ``WithDecryption`` answers the ciphertext (moto writes it as
``kms:<key>:<value>``, naming the key it was encrypted under).
"""

from __future__ import annotations

import io
import json
import logging
from collections.abc import Iterator
from typing import Any

import boto3
import pytest

from bot.sandbox.instacart_api import FakeInstacart
from bot.sandbox.slack_events import event_callback
from bot.sandbox.webhook_receiver import WebhookReceiver
from bot.sandbox.world import CHANNEL
from bot.slack.order_form import NO_KEYS_HERE
from bot.steps.settings import CHANGED_MEANWHILE, NO_KEY, NO_KEYS_KEPT, key_not_kept
from tests.bot_kit import SECRET, World, objects, start_basket
from tests.settings_kit import open_settings, option, save, text
from tests.test_settings import saved

TENANT = "T0TEAM"
PATH = "/weekly-shop/test/workspaces"
KEY = "ic-dev-0123456789abcdef"
PARAMETER = f"{PATH}/{TENANT}/instacart-api-key"


@pytest.fixture
def carol(world: World) -> World:
    world.slack.set_person("U0CAROL", is_admin=True, tz="Europe/London")
    return world


@pytest.fixture
def kms_key(carol: World) -> str:
    """The stack's key for the workspaces' keys (moto's KMS), and the bot told where they go."""
    arn = str(boto3.client("kms").create_key(Description="weekly-shop keys")["KeyMetadata"]["Arn"])
    carol.boot(WORKSPACE_SECRETS_PATH=PATH, WORKSPACE_SECRETS_KEY=arn)
    return arn


@pytest.fixture
def instacart(carol: World) -> Iterator[FakeInstacart]:
    with FakeInstacart(api_key=KEY) as running:
        carol.boot(INSTACART_API_URL=running.url)
        yield running


def inputs(view: dict[str, Any]) -> dict[str, dict[str, Any]]:
    return {b["block_id"]: b for b in view["blocks"] if b["type"] == "input"}


def ssm() -> Any:
    return boto3.client("ssm")


def order_reply(world: World, basket: dict[str, Any]) -> dict[str, Any]:
    (reply,) = [r for r in world.slack.thread(CHANNEL, basket["ts"]) if "rder" in r["text"]]
    return reply


def everything_in(s3: Any, bucket: str) -> str:
    return "".join(
        s3.get_object(Bucket=bucket, Key=key)["Body"].read().decode(errors="replace")
        for key in objects(s3, bucket)
    )


def test_an_admin_chooses_instacart_and_its_key_is_kept_write_only(
    carol: World,
    kms_key: str,
    instacart: FakeInstacart,
    s3: Any,
    bucket: str,
    caplog: pytest.LogCaptureFixture,
) -> None:
    """The key goes to one SecureString parameter under the stack's key; no S3 object, log line
    or modal ever holds it again; the next approve makes the page with it."""
    caplog.set_level(logging.DEBUG)
    form = open_settings(carol, "U0CAROL")
    assert form is not None
    fields = inputs(form)
    assert "initial_value" not in fields["instacart_key"]["element"]
    assert fields["instacart_key"]["hint"]["text"].startswith("None saved yet.")
    answer = save(
        carol,
        "U0CAROL",
        form,
        destination=option("instacart"),
        instacart_key=text(KEY),
    )
    assert answer == {}
    found = ssm().get_parameter(Name=PARAMETER)["Parameter"]
    assert found["Type"] == "SecureString"
    assert found["Value"].startswith(f"kms:{kms_key}:")  # encrypted under the stack's key
    assert ssm().get_parameter(Name=PARAMETER, WithDecryption=True)["Parameter"]["Value"] == KEY
    again = open_settings(carol, "U0CAROL")
    assert again is not None and KEY not in json.dumps(again)
    assert inputs(again)["instacart_key"]["hint"]["text"].startswith("A key is saved (since ")
    assert inputs(again)["destination"]["element"]["initial_option"]["value"] == "instacart"
    basket = start_basket(carol)
    carol.click(basket, "approve_basket", user="U0BOB")
    carol.run_lazies()
    assert order_reply(carol, basket)["text"] == "Ordered 10 items."
    assert len(instacart.lists) == 1  # the stand-in took the workspace's Bearer key
    assert KEY not in everything_in(s3, bucket)
    assert KEY not in caplog.text
    home = json.dumps((carol.open_home("U0ALICE") or {}).get("blocks", []))
    assert "an Instacart shopping-list page (development)" in home
    assert "Instacart API key" in home  # the change log says a key was set, never which


def test_instacart_without_any_key_is_refused_in_the_modal_and_nothing_is_saved(
    carol: World, kms_key: str, s3: Any, bucket: str
) -> None:
    form = open_settings(carol, "U0CAROL")
    assert form is not None
    answer = save(carol, "U0CAROL", form, destination=option("instacart"))
    assert answer == {"response_action": "errors", "errors": {"instacart_key": NO_KEY}}
    assert objects(s3, bucket) == [] or all("settings" not in k for k in objects(s3, bucket))
    with pytest.raises(ssm().exceptions.ParameterNotFound):
        ssm().get_parameter(Name=PARAMETER)


@pytest.mark.parametrize(
    ("url", "said"),
    [
        ("http://hooks.example.com/x", "An https:// URL."),
        ("https://169.254.169.254/latest/meta-data/", "This URL must not point at an internal"),
        ("https://127.0.0.1/hook", "This URL must not point at an internal"),
        ("https://127.0.0.1:8443/hook", "This URL must be an https:// URL on port 443"),
        ("https://hooks.example.com:6379/x", "This URL must be an https:// URL on port 443"),
        ("https://[64:ff9b::a9fe:a9fe]/meta-data/", "This URL must not point at an internal"),
        ("https://user:pass@hooks.example.com/x", "This URL must be a URL without a user name"),
        ("https://[fd00:ec2::254]/x", "This URL must not point at an internal"),
    ],
)
def test_a_webhook_url_that_points_inside_is_refused_at_save(
    carol: World, kms_key: str, s3: Any, bucket: str, url: str, said: str
) -> None:
    """Server-side request forgery, refused where it is typed: not https, the metadata
    address (IPv4, IPv6 and NAT64), loopback, user info, a port but 443; nothing is saved, no
    key stored."""
    form = open_settings(carol, "U0CAROL")
    assert form is not None
    answer = save(
        carol,
        "U0CAROL",
        form,
        destination=option("webhook"),
        webhook_url=text(url),
        webhook_secret=text("s" * 32),
    )
    assert answer["response_action"] == "errors"
    assert answer["errors"]["webhook_url"].startswith(said)
    assert not any("settings" in k for k in objects(s3, bucket))
    with pytest.raises(ssm().exceptions.ParameterNotFound):
        ssm().get_parameter(Name=f"{PATH}/{TENANT}/webhook-signing-secret")


def test_a_url_saved_while_unused_is_checked_when_the_webhook_is_chosen(
    carol: World, kms_key: str
) -> None:
    """A URL typed while the canvas was chosen was checked for https only; choosing the webhook
    later, with that URL unchanged, checks it then."""
    form = open_settings(carol, "U0CAROL")
    assert form is not None
    inside = "https://169.254.169.254/latest/meta-data/"
    assert save(carol, "U0CAROL", form, webhook_url=text(inside)) == {}  # (canvas: unused)
    again = open_settings(carol, "U0CAROL")
    assert again is not None
    answer = save(
        carol,
        "U0CAROL",
        again,
        destination=option("webhook"),
        webhook_secret=text("s" * 32),
    )
    assert answer["errors"]["webhook_url"].startswith("This URL must not point at an internal")


@pytest.mark.parametrize(
    ("block", "typed"),
    [
        ("instacart_key", "short"),
        ("instacart_key", "has a space in it"),
        ("webhook_secret", "fifteen-chars.."),
        ("instacart_key", "x" * 513),
    ],
)
def test_a_bad_key_is_answered_under_its_input(
    carol: World, kms_key: str, block: str, typed: str
) -> None:
    form = open_settings(carol, "U0CAROL")
    assert form is not None
    answer = save(carol, "U0CAROL", form, **{block: text(typed)})
    assert answer["response_action"] == "errors" and set(answer["errors"]) == {block}


def test_a_workspace_webhook_is_signed_with_the_workspace_secret(
    carol: World, kms_key: str
) -> None:
    """The receiver knows only the secret typed in Settings; the delivery verifies with it."""
    with WebhookReceiver(secret="the-household-own-secret-42") as receiver:
        order_by_webhook(carol, receiver)
        assert sum(receiver.counts().values()) == 1 and receiver.refused == 0


def order_by_webhook(carol: World, receiver: WebhookReceiver) -> None:
    """Carol chooses the webhook (``receiver``'s URL and secret) and Bob's approve orders."""
    carol.boot(**receiver.env)  # (its host pinned to 127.0.0.1, its CA trusted)
    form = open_settings(carol, "U0CAROL")
    assert form is not None
    answer = save(
        carol,
        "U0CAROL",
        form,
        destination=option("webhook"),
        webhook_url=text(receiver.url),
        webhook_secret=text(receiver.secret),
    )
    assert answer == {}
    basket = start_basket(carol)
    carol.click(basket, "approve_basket", user="U0BOB")
    carol.run_lazies()
    assert order_reply(carol, basket)["text"] == "Ordered 10 items."


def test_the_deploy_webhook_secret_never_signs_for_a_workspace_url(carol: World) -> None:
    """A deploy's ORDER_WEBHOOK_SECRET is for ORDER_WEBHOOK_URL only: choosing another URL
    without a secret of the workspace's own is refused (here, a deploy that keeps none)."""
    with WebhookReceiver() as receiver:
        carol.boot(
            ORDER_DESTINATION="webhook",
            ORDER_WEBHOOK_URL=receiver.url,
            ORDER_WEBHOOK_SECRET=receiver.secret,
            **receiver.env,
        )
        form = open_settings(carol, "U0CAROL")
        assert form is not None
        assert "instacart_key" not in inputs(form)  # no keys kept: nothing to type
        assert NO_KEYS_HERE in json.dumps(form["blocks"])
        assert inputs(form)["webhook_url"]["element"]["initial_value"] == receiver.url
        other = receiver.url.replace("/weekly-shop/orders", "/elsewhere")
        answer = save(carol, "U0CAROL", form, webhook_url=text(other))
        assert answer["errors"] == {"destination": NO_KEYS_KEPT}
        assert save(carol, "U0CAROL", form, rounds=option("2")) == {}  # its own URL: fine


def test_removing_the_app_deletes_the_workspace_keys(carol: World, kms_key: str) -> None:
    form = open_settings(carol, "U0CAROL")
    assert form is not None
    assert (
        save(
            carol,
            "U0CAROL",
            form,
            instacart_key=text(KEY),
            webhook_secret=text("w" * 24),
        )
        == {}
    )
    names = [f"{PATH}/{TENANT}/instacart-api-key", f"{PATH}/{TENANT}/webhook-signing-secret"]
    assert len(ssm().get_parameters(Names=names)["Parameters"]) == 2
    carol.send(event_callback(SECRET, {"type": "app_uninstalled"}, team_id=TENANT))
    carol.run_lazies()
    assert ssm().get_parameters(Names=names)["Parameters"] == []


def test_ssm_down_when_settings_open_still_shows_the_form_and_says_it_could_not_check(
    carol: World, kms_key: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """SSM answering ThrottlingException (or not at all) as the modal opens: the form opens,
    each key's hint says it could not check, and an empty input still keeps any saved key."""
    from bot.records.workspace_secrets import SecretsDown, WorkspaceSecrets

    def down(*args: Any, **kwargs: Any) -> None:
        raise SecretsDown("read the workspace's key: ThrottlingException")

    monkeypatch.setattr(WorkspaceSecrets, "_get", down)
    form = open_settings(carol, "U0CAROL")
    assert form is not None and form["submit"]["text"] == "Save"
    hint = inputs(form)["instacart_key"]["hint"]["text"]
    assert hint.startswith("I couldn't check just now whether a key is saved")


def test_with_botocore_at_debug_neither_key_reaches_a_log_line(carol: World, kms_key: str) -> None:
    """botocore at DEBUG logs each request's params (``botocore.endpoint``: ``'body':
    b'{"Name": …, "Value": …}'``) and each answer (``botocore.parsers``: ``Response body:
    b'…'``), bytes reprs that a redaction of quoted names alone lets through. Nothing turns
    DEBUG on; if an operator does, neither the Instacart key nor the webhook secret is written
    (``bot.logs.redact`` masks every bytes literal: a body)."""
    from bot.logs import JsonFormatter

    out = io.StringIO()
    handler = logging.StreamHandler(out)
    handler.setFormatter(JsonFormatter())
    names = ("", "botocore", "urllib3")
    levels = {name: logging.getLogger(name).level for name in names}
    logging.getLogger().addHandler(handler)
    for name in names:
        logging.getLogger(name).setLevel(logging.DEBUG)
    receiver = WebhookReceiver(secret="the-households-own-webhook-secret")
    try:
        form = open_settings(carol, "U0CAROL")
        assert form is not None
        saved = save(
            carol, "U0CAROL", form, destination=option("instacart"), instacart_key=text(KEY)
        )
        assert saved == {}
        with receiver:
            order_by_webhook(carol, receiver)
    finally:
        logging.getLogger().removeHandler(handler)
        for name, level in levels.items():
            logging.getLogger(name).setLevel(level)
    logged = out.getvalue()
    assert "PutParameter" in logged and "GetParameter" in logged  # botocore did log at DEBUG
    assert "Response body" in logged
    assert KEY not in logged and receiver.secret not in logged


def test_a_save_refused_as_stale_writes_no_key(
    carol: World, kms_key: str, s3: Any, bucket: str
) -> None:
    """Carol and Dave both have the modal open; Dave saves first; Carol's save, with a new
    Instacart key, is refused as stale (412) and writes nothing, the key included: SSM keeps
    every version of a parameter (GetParameterHistory), so a key written for a refused save
    could not be taken back."""
    carol.slack.set_person("U0DAVE", is_owner=True)
    mine, theirs = open_settings(carol, "U0CAROL"), open_settings(carol, "U0DAVE")
    assert mine is not None and theirs is not None
    assert save(carol, "U0DAVE", theirs, rounds=option("2")) == {}
    answer = save(carol, "U0CAROL", mine, destination=option("instacart"), instacart_key=text(KEY))
    assert answer["response_action"] == "update"
    assert CHANGED_MEANWHILE in json.dumps(answer["view"]["blocks"])
    with pytest.raises(ssm().exceptions.ParameterNotFound):
        ssm().get_parameter(Name=PARAMETER)
    doc = saved(s3, bucket)
    assert doc is not None and doc["settings"]["rounds"] == 2  # Dave's, untouched
    assert doc["settings"]["orders"]["destination"] == "canvas"


def test_ssm_refusing_the_key_after_the_settings_saved_is_said_and_typing_it_again_keeps_it(
    carol: World, kms_key: str, s3: Any, bucket: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The key is written only once the settings are: SSM throttling that PutParameter leaves
    the settings saved (Instacart chosen) and no key. The modal says so, with the saved
    values on their new ETag, so the key typed again is saved, not refused as stale."""
    from botocore.client import BaseClient
    from botocore.exceptions import ClientError

    real = BaseClient._make_api_call

    def throttled(client: Any, operation: str, params: dict[str, Any]) -> Any:
        if operation == "PutParameter":
            error = {"Error": {"Code": "ThrottlingException", "Message": "Rate exceeded"}}
            raise ClientError(error, operation)  # type: ignore[arg-type]
        return real(client, operation, params)

    form = open_settings(carol, "U0CAROL")
    assert form is not None
    with monkeypatch.context() as patched:
        patched.setattr(BaseClient, "_make_api_call", throttled)
        answer = save(
            carol, "U0CAROL", form, destination=option("instacart"), instacart_key=text(KEY)
        )
    assert answer["response_action"] == "update"
    view = answer["view"]
    assert key_not_kept(["instacart-api-key"]) in json.dumps(view["blocks"])
    assert inputs(view)["destination"]["element"]["initial_option"]["value"] == "instacart"
    doc = saved(s3, bucket)
    assert doc is not None and doc["settings"]["orders"]["destination"] == "instacart"
    with pytest.raises(ssm().exceptions.ParameterNotFound):
        ssm().get_parameter(Name=PARAMETER)

    assert save(carol, "U0CAROL", view, instacart_key=text(KEY)) == {}
    assert ssm().get_parameter(Name=PARAMETER, WithDecryption=True)["Parameter"]["Value"] == KEY
