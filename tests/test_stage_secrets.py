"""The deploy's secrets come from SSM SecureString parameters, read once per cold start
(``bot.stage_secrets``), never from the function's environment (issue 35, 5).

The refusals run against moto in this process; the cold start runs in fresh interpreters
against a moto server, through the real handler, with Slack's own signed ``url_verification``
request: the signing secret that checks it is the one read from SSM."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Iterator
from typing import Any

import boto3
import pytest
from moto import mock_aws

from bot.sandbox.moto_server import client_of
from bot.sandbox.slack_events import url_verification
from bot.sandbox.slack_requests import with_bad_signature
from bot.sandbox.world import SECRET, TOKEN
from bot.settings import Settings, SettingsError
from bot.stage_secrets import PARAMETERS, with_stage_secrets
from tests.bot_kit import World

PATH = "/weekly-shop/test"
NAMES = "slack-signing-secret,anthropic-api-key,checkpoint-signing-key,slack-bot-token"
CHECKPOINT_KEY = "c" * 64


@pytest.fixture
def ssm() -> Iterator[Any]:
    with mock_aws():
        client = boto3.client("ssm", region_name="eu-west-1")
        key = boto3.client("kms", region_name="eu-west-1").create_key()["KeyMetadata"]["KeyId"]
        for name, value in (
            ("slack-signing-secret", SECRET),
            ("anthropic-api-key", "sk-ant-test-0f1e2d"),
            ("checkpoint-signing-key", CHECKPOINT_KEY),
            ("slack-bot-token", TOKEN),
        ):
            client.put_parameter(Name=f"{PATH}/{name}", Value=value, Type="SecureString", KeyId=key)
        yield client


def deployed(**extra: str) -> dict[str, str]:
    """The environment serverless.yml gives the function: a path and names, no secret."""
    return {
        "STAGE_SECRETS_PATH": PATH,
        "STAGE_SECRETS": NAMES,
        "CHECKPOINT_BUCKET": "bot-bucket",
        **extra,
    }


def test_a_deploy_s_secrets_are_read_from_ssm_into_settings_only(ssm: Any) -> None:
    environ = deployed()
    settings = Settings.from_env(with_stage_secrets(environ, ssm))
    assert settings.slack_signing_secret.get_secret_value() == SECRET
    assert settings.slack_bot_token.get_secret_value() == TOKEN
    assert settings.checkpoint_signing_key is not None
    assert settings.checkpoint_signing_key.get_secret_value() == CHECKPOINT_KEY
    assert settings.anthropic_api_key is not None
    assert environ == deployed()  # the environment given is not changed...
    assert not {SECRET, TOKEN, CHECKPOINT_KEY} & set(os.environ.values())  # ...nor the process's
    assert SECRET not in repr(settings)


def test_without_a_path_the_environment_is_used_as_it_is() -> None:
    """The sandbox, the tests and the console keep their secrets in the environment."""
    environ = {"SLACK_SIGNING_SECRET": SECRET, "SLACK_BOT_TOKEN": TOKEN}
    assert with_stage_secrets(environ, ssm=object()) is environ


def test_a_string_parameter_is_used_with_a_warning_naming_it(
    ssm: Any, caplog: pytest.LogCaptureFixture
) -> None:
    """A String parameter (as put-secrets.sh wrote before) is readable by anyone allowed to
    read it, without the key. A stage upgraded by a deploy still has them until put-secrets.sh
    (which needs the key that deploy makes) converts them: it keeps answering meanwhile, and
    each cold start says which and what to do, never the value."""
    ssm.put_parameter(Name=f"{PATH}/anthropic-api-key", Value="sk-1", Type="String", Overwrite=True)
    environ = with_stage_secrets(deployed(), ssm)
    assert environ["ANTHROPIC_API_KEY"] == "sk-1"
    (warned,) = [r for r in caplog.records if r.levelname == "WARNING"]
    assert f"{PATH}/anthropic-api-key: String parameters" in warned.getMessage()
    assert "infra/put-secrets.sh" in warned.getMessage() and "sk-1" not in warned.getMessage()


def test_a_missing_parameter_is_refused_by_name(ssm: Any) -> None:
    """GetParameters answers an unknown name in InvalidParameters, not with an error (SSM API
    reference, GetParameters): each one the deploy needs must be there."""
    ssm.delete_parameter(Name=f"{PATH}/slack-bot-token")
    with pytest.raises(SettingsError, match=f"{PATH}/slack-bot-token not found in SSM: put"):
        with_stage_secrets(deployed(), ssm)


@pytest.mark.parametrize(
    ("extra", "said"),
    [
        ({"SLACK_SIGNING_SECRET": "old"}, "SLACK_SIGNING_SECRET is set in the environment and"),
        ({"STAGE_SECRETS": "slack-signing-secret,github-token"}, "github-token is not one"),
        ({"STAGE_SECRETS": " , "}, "STAGE_SECRETS is not set"),
        ({"STAGE_SECRETS_PATH": "weekly-shop/test"}, "STAGE_SECRETS_PATH is invalid"),
    ],
)
def test_what_cannot_be_right_is_refused_before_ssm_is_asked(
    extra: dict[str, str], said: str
) -> None:
    """A secret both in the environment and in SSM (an old value would silently win or lose),
    a name that is not a secret of the stage, none at all, a path that is not one."""

    class Unasked:
        def get_parameters(self, **_: Any) -> Any:
            raise AssertionError("SSM asked")

    with pytest.raises(SettingsError, match=said):
        with_stage_secrets(deployed(**extra), Unasked())


def test_ssm_out_of_reach_fails_the_cold_start_naming_the_path() -> None:
    closed = boto3.client(
        "ssm",
        region_name="eu-west-1",
        endpoint_url="http://127.0.0.1:9",  # discard: nothing listens
        aws_access_key_id="testing",
        aws_secret_access_key="testing",
        config=boto3.session.Config(retries={"max_attempts": 1}, connect_timeout=1),
    )
    with pytest.raises(SettingsError, match=f"the stage's secrets under {PATH} could not be read"):
        with_stage_secrets(deployed(), closed)


def test_every_secret_name_is_a_settings_variable() -> None:
    from bot.settings_env import ENV_NAMES

    assert set(PARAMETERS.values()) <= set(ENV_NAMES.values())


# --- a cold start, in fresh interpreters ---------------------------------------------------------

CHILD = r"""
import json, sys
import boto3
calls = []
boto3.setup_default_session()
boto3.DEFAULT_SESSION.events.register(
    "before-call.ssm.GetParameters", lambda **kw: calls.append(1))
from bot.sandbox.aws_events import lambda_context
from bot.handler import handler
for line in sys.stdin:
    try:
        answer = handler(json.loads(line), lambda_context())
        said = {"status": answer["statusCode"], "body": answer.get("body", "")}
    except Exception as exc:
        said = {"error": f"{type(exc).__name__}: {exc}"}
    print(json.dumps({**said, "ssm_reads": len(calls)}), flush=True)
"""


class Process:
    """One Lambda instance: a fresh interpreter handling one event a line."""

    def __init__(self, env: dict[str, str]) -> None:
        self.child = subprocess.Popen(
            [sys.executable, "-c", CHILD],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            env=env,
        )

    def send(self, event: dict[str, Any]) -> dict[str, Any]:
        assert self.child.stdin and self.child.stdout
        self.child.stdin.write(json.dumps(event) + "\n")
        self.child.stdin.flush()
        line = self.child.stdout.readline()
        assert line, self.child.stderr.read() if self.child.stderr else ""
        answer: dict[str, Any] = json.loads(line)
        return answer

    def stop(self) -> None:
        assert self.child.stdin
        self.child.stdin.close()
        self.child.wait(timeout=30)


def test_a_cold_start_reads_the_secrets_once_and_keeps_them(served: World) -> None:
    """The secrets only in SSM: the first request's signature is checked with the signing secret
    read from there, in one GetParameters call; the next requests in the same instance read
    nothing (a parameter deleted meanwhile changes nothing there), and a forged one is still
    refused. A new instance reads again, and so fails, naming the missing parameter only."""
    env = {k: v for k, v in served.env_all().items() if k not in PARAMETERS.values()}
    env.update(STAGE_SECRETS_PATH=PATH, STAGE_SECRETS=NAMES)
    ssm = client_of(env, "ssm")
    key = client_of(env, "kms").create_key()["KeyMetadata"]["KeyId"]
    for name, value in (
        ("slack-signing-secret", SECRET),
        ("anthropic-api-key", served.env["ANTHROPIC_API_KEY"]),
        ("checkpoint-signing-key", CHECKPOINT_KEY),
        ("slack-bot-token", TOKEN),
    ):
        ssm.put_parameter(Name=f"{PATH}/{name}", Value=value, Type="SecureString", KeyId=key)
    warm = Process(env)
    try:
        first = warm.send(url_verification(SECRET, "challenge-1"))
        assert (first["status"], first["ssm_reads"]) == (200, 1), first
        assert json.loads(first["body"]) == {"challenge": "challenge-1"}
        ssm.delete_parameter(Name=f"{PATH}/slack-signing-secret")
        again = warm.send(url_verification(SECRET, "challenge-2"))
        assert (again["status"], again["ssm_reads"]) == (200, 1), again
        forged = warm.send(with_bad_signature(url_verification(SECRET, "challenge-3")))
        assert (forged["status"], forged["ssm_reads"]) == (401, 1), forged
    finally:
        warm.stop()
    cold = Process(env)
    try:
        failed = cold.send(url_verification(SECRET, "challenge-4"))
    finally:
        cold.stop()
    assert failed["error"] == (
        f"SettingsError: {PATH}/slack-signing-secret not found in SSM: "
        "put them with infra/put-secrets.sh"
    )
    assert failed["ssm_reads"] == 1
