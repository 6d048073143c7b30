"""`serverless package` (osls, which continues Serverless Framework v3) and the template it writes.

Packaging needs neither AWS credentials nor AWS itself: secrets are CloudFormation dynamic
references and ARNs are Fn::Sub expressions, so nothing is looked up at package time. It does
need Node.js: `npm ci` installs the pinned framework and plugin when node_modules lacks them, and
the requirements plugin pip-installs the Lambda's dependencies (manylinux aarch64 wheels for
CPython 3.11) into its cache under ~/.cache/serverless-python-requirements on the first run.

Each scenario packages a copy of the service in a temporary folder (node_modules linked), so the
repository's own .serverless/ is left alone.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import tomllib
import zipfile
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from bot.records.history import history_prefix
from bot.records.orders import orders_prefix
from bot.records.workspace_settings_store import settings_prefix
from bot.slack.installs import STATES, install_prefix
from bot.slack.oauth_states import USED
from tests.infra_scripts import load

ROOT = Path(__file__).resolve().parent.parent
STAGE = "test"
REGION = "eu-west-1"
FUNCTION = f"weekly-shop-{STAGE}-slack"
FUNCTION_ARN = (
    f"arn:${{AWS::Partition}}:lambda:${{AWS::Region}}:${{AWS::AccountId}}:function:{FUNCTION}"
)
TIMER_GROUP = f"weekly-shop-{STAGE}-baskets"
PREFIX = "weekly-shop/"
SETTINGS = settings_prefix(PREFIX)  # "weekly-shop-settings/", as workspace_settings derives it
ORDERS = orders_prefix(PREFIX)  # "weekly-shop-orders/", as bot/records/orders.py derives it
HISTORY = history_prefix(PREFIX)  # "weekly-shop-history/", as bot/records/history.py derives it
INSTALLS = install_prefix(PREFIX)  # "weekly-shop-installs/", as bot/slack/installs.py derives it
SCHEDULE = "cron(0 9 ? * SAT *)"
SECRET_PARAMETERS = {
    "SLACK_BOT_TOKEN": "slack-bot-token",
    "SLACK_SIGNING_SECRET": "slack-signing-secret",
    "ANTHROPIC_API_KEY": "anthropic-api-key",
    "CHECKPOINT_SIGNING_KEY": "checkpoint-signing-key",
}
# Set in the packaging environment: none of them may reach the template.
CANARIES = {name: f"canary-{name.lower()}-0f1e2d" for name in SECRET_PARAMETERS}
# The environment serverless.yml reads; cleared so the developer's own values can't leak in.
CONFIG_VARIABLES = (
    "SHOP_SCHEDULE",
    "SHOP_CHANNEL",
    "SHOP_REQUEST",
    "ANTHROPIC_MODEL",
    "APPROVER_IDS",
    "NO_SELF_APPROVAL",
    "APPROVALS_NEEDED",
    "ORDER_DELAY",
    "SECRETS_REVISION",
    "WORKSPACES",
    "SHOP_TEAM",
    "ORDER_DESTINATION",
    "INSTACART_SERVER",
    "ORDER_WEBHOOK_URL",
    "PRICES",
    "ALARM_EMAIL",
    "MONTHLY_BUDGET_USD",
    "RESERVED_CONCURRENCY",
    "API_BURST_LIMIT",
    "API_RATE_LIMIT",
    "NONCURRENT_DAYS",
)
PACKAGE_TIMEOUT = 600
ALARM_EMAIL = "ops@example.com"
XRAY = ["xray:PutTraceSegments", "xray:PutTelemetryRecords"]


@dataclass
class Packaged:
    template: dict[str, Any]
    template_text: str
    state_text: str
    artifact: Path
    output: str

    def resources(self, type_: str) -> dict[str, dict[str, Any]]:
        return {
            name: resource
            for name, resource in self.template["Resources"].items()
            if resource["Type"] == type_
        }

    def one(self, type_: str) -> dict[str, Any]:
        found = self.resources(type_)
        assert len(found) == 1, f"expected one {type_}, found {sorted(found)}"
        return next(iter(found.values()))["Properties"]

    @property
    def function(self) -> dict[str, Any]:
        return self.template["Resources"]["SlackLambdaFunction"]["Properties"]

    @property
    def statements(self) -> list[dict[str, Any]]:
        role = self.template["Resources"]["IamRoleLambdaExecution"]["Properties"]
        return [s for policy in role["Policies"] for s in policy["PolicyDocument"]["Statement"]]


def _as_list(value: Any) -> list[Any]:
    return value if isinstance(value, list) else [value]


def _ensure_node_modules() -> None:
    if (ROOT / "node_modules" / "osls" / "package.json").exists():
        return
    subprocess.run(
        ["npm", "ci", "--no-audit", "--no-fund"],
        cwd=ROOT,
        check=True,
        timeout=PACKAGE_TIMEOUT,
        stdin=subprocess.DEVNULL,
    )


_service_copy = load("lint_template").service_copy  # the copy the template linters package


def _serverless_env(extra: dict[str, str]) -> dict[str, str]:
    env = {
        name: value
        for name, value in os.environ.items()
        if not name.startswith(("AWS_", "SLS_", "SERVERLESS_")) and name not in CONFIG_VARIABLES
    }
    env.update(
        {
            # No credentials at all: packaging must not need them.
            "AWS_ACCESS_KEY_ID": "",
            "AWS_SECRET_ACCESS_KEY": "",
            "AWS_CONFIG_FILE": os.devnull,
            "AWS_SHARED_CREDENTIALS_FILE": os.devnull,
            "SLS_TELEMETRY_DISABLED": "1",
            "SLS_NOTIFICATIONS_MODE": "off",
            # The requirements plugin runs pip from this interpreter (a venv always has pip).
            "PYTHON_BIN": sys.executable,
            **CANARIES,
        }
    )
    env.update(extra)
    return env


def _run_package(service: Path, extra: dict[str, str]) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        ["npx", "--no-install", "serverless", "package", "--stage", STAGE, "--region", REGION],
        cwd=service,
        env=_serverless_env(extra),
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        timeout=PACKAGE_TIMEOUT,
    )


def _package(service: Path, extra: dict[str, str]) -> Packaged:
    result = _run_package(service, extra)
    output = result.stdout + result.stderr
    assert result.returncode == 0, output
    out = service / ".serverless"
    template_text = (out / "cloudformation-template-update-stack.json").read_text()
    return Packaged(
        template=json.loads(template_text),
        template_text=template_text,
        state_text=(out / "serverless-state.json").read_text(),
        artifact=out / "weekly-shop.zip",
        output=output,
    )


@pytest.fixture(scope="module")
def node_modules() -> None:
    _ensure_node_modules()


@pytest.fixture(scope="module")
def packaged(node_modules: None, tmp_path_factory: pytest.TempPathFactory) -> Packaged:
    """No SHOP_SCHEDULE: the weekly rule must exist but be disabled."""
    service = _service_copy(tmp_path_factory.mktemp("sls") / "default")
    return _package(service, {})


@pytest.fixture(scope="module")
def scheduled(
    node_modules: None, packaged: Packaged, tmp_path_factory: pytest.TempPathFactory
) -> Packaged:
    """SHOP_SCHEDULE and friends set. Runs after `packaged`, whose pip run warms the cache."""
    service = _service_copy(tmp_path_factory.mktemp("sls") / "scheduled")
    return _package(
        service,
        {
            "SHOP_SCHEDULE": SCHEDULE,
            "SHOP_CHANNEL": "C0123456789",
            "SHOP_REQUEST": "tacos on Friday, we have rice",
            "ANTHROPIC_MODEL": "claude-sonnet-test",
            "APPROVER_IDS": "U01,U02",
            "NO_SELF_APPROVAL": "true",
            "APPROVALS_NEEDED": "2",
            "WORKSPACES": "many",
            "SHOP_TEAM": "T0123456",
            "PRICES": "kroger",
            "ALARM_EMAIL": ALARM_EMAIL,
            "MONTHLY_BUDGET_USD": "35",
            "RESERVED_CONCURRENCY": "5",
            "API_BURST_LIMIT": "8",
            "API_RATE_LIMIT": "4",
            "NONCURRENT_DAYS": "14",
        },
    )


# --- the function ------------------------------------------------------------------------------


def test_function_runtime_architecture_and_handler(packaged: Packaged) -> None:
    function = packaged.function
    assert function["FunctionName"] == FUNCTION
    assert function["Runtime"] == "python3.11"
    assert function["Architectures"] == ["arm64"]
    assert function["Handler"] == "bot/handler.handler"
    assert function["Timeout"] == 60
    assert function["MemorySize"] == 1769  # one full vCPU: the cold start is CPU-bound


def test_no_schema_warnings(packaged: Packaged) -> None:
    """python3.11 is in the schema (3.12 was not in v3's), so any complaint is a typo in
    serverless.yml (and configValidationMode: error makes it fail the package)."""
    invalid_at = re.findall(r"^\s*at '([^']+)'", packaged.output, flags=re.MULTILINE)
    assert invalid_at == [], packaged.output


def test_http_api_route(packaged: Packaged) -> None:
    routes = packaged.resources("AWS::ApiGatewayV2::Route")
    assert sorted(r["Properties"]["RouteKey"] for r in routes.values()) == [
        "GET /kroger/connect",
        "GET /kroger/oauth_redirect",
        "GET /slack/install",
        "GET /slack/oauth_redirect",
        "POST /slack/events",
    ]
    integration = packaged.one("AWS::ApiGatewayV2::Integration")
    assert integration["IntegrationUri"] == {"Fn::GetAtt": ["SlackLambdaFunction", "Arn"]}
    assert integration["PayloadFormatVersion"] == "2.0"
    outputs = packaged.template["Outputs"]
    assert outputs["SlackEventsUrl"]["Value"]["Fn::Sub"].endswith("/slack/events")
    assert outputs["CheckpointBucketName"]["Value"] == {"Ref": "CheckpointBucket"}


def test_no_secret_is_in_the_function_s_environment(
    packaged: Packaged, scheduled: Packaged
) -> None:
    """The secrets are SSM SecureString parameters the function reads at its cold start
    (bot/stage_secrets.py): the environment names the path and which parameters, never a value
    nor a reference CloudFormation would resolve into one, and it is encrypted with the stack's
    own key (checkov CKV_AWS_173). The packaging environment's values never reach the template."""
    from bot.stage_secrets import PARAMETERS

    for template in (packaged, scheduled):
        variables = template.function["Environment"]["Variables"]
        assert not set(variables) & set(PARAMETERS.values())
        assert "resolve:ssm" not in template.template_text
        assert variables["STAGE_SECRETS_PATH"] == f"/weekly-shop/{STAGE}"
        assert template.function["KmsKeyArn"] == {"Fn::GetAtt": ["StageSecretsKey", "Arn"]}
        for canary in CANARIES.values():
            assert canary not in template.template_text
            assert canary not in template.state_text


def test_environment_defaults(packaged: Packaged) -> None:
    variables = packaged.function["Environment"]["Variables"]
    assert variables["CHECKPOINT_BUCKET"] == {"Ref": "CheckpointBucket"}
    assert variables["CHECKPOINT_PREFIX"] == PREFIX
    assert variables["ANTHROPIC_MODEL"] == "claude-haiku-5-5"
    assert variables["MAX_ROUNDS"] == "3"
    assert int(variables["LOCK_TTL_SECONDS"]) > packaged.function["Timeout"]  # lease > invocation
    assert variables["APPROVER_IDS"] == ""
    assert variables["NO_SELF_APPROVAL"] == "false"
    assert variables["APPROVALS_NEEDED"] == "1"
    assert variables["SHOP_CHANNEL"] == ""
    assert variables["SHOP_REQUEST"] == ""
    assert (variables["REMIND_AFTER"], variables["MAX_REMINDERS"]) == ("6h", "2")
    assert variables["EXPIRE_AFTER"] == "72h"
    assert variables["ORDER_DELAY"] == "2m"  # the undo window
    assert variables["ORDER_DESTINATION"] == "canvas"
    assert variables["INSTACART_SERVER"] == "development"
    assert variables["ORDER_WEBHOOK_URL"] == ""
    assert variables["WORKSPACE_SECRETS_PATH"] == f"/weekly-shop/{STAGE}/workspaces"
    assert variables["WORKSPACE_SECRETS_KEY"] == {"Fn::GetAtt": ["WorkspaceKeysKey", "Arn"]}
    assert variables["TIMER_GROUP"] == {"Ref": "BasketTimerGroup"}
    assert variables["TIMER_TARGET_ARN"] == {"Fn::Sub": FUNCTION_ARN}
    assert variables["TIMER_ROLE_ARN"] == {"Fn::GetAtt": ["BasketTimerRole", "Arn"]}


def test_environment_overrides(scheduled: Packaged) -> None:
    variables = scheduled.function["Environment"]["Variables"]
    assert variables["ANTHROPIC_MODEL"] == "claude-sonnet-test"
    assert variables["APPROVER_IDS"] == "U01,U02"
    assert variables["NO_SELF_APPROVAL"] == "true"
    assert variables["APPROVALS_NEEDED"] == "2"
    assert variables["SHOP_CHANNEL"] == "C0123456789"
    assert variables["SHOP_REQUEST"] == "tacos on Friday, we have rice"


def test_one_workspace_by_default_and_many_with_workspaces_many(
    packaged: Packaged, scheduled: Packaged
) -> None:
    """One workspace: its bot token read from SSM, no OAuth credentials. Many (WORKSPACES=many,
    as put-secrets.sh --workspaces many wrote them): the client ID and secret, no bot token, and
    the schedule's workspace named (SHOP_TEAM)."""
    one = packaged.function["Environment"]["Variables"]
    assert one["STAGE_SECRETS"].split(",") == [
        "slack-signing-secret",
        "anthropic-api-key",
        "checkpoint-signing-key",
        "slack-bot-token",
    ]
    assert one["SHOP_TEAM"] == ""
    many = scheduled.function["Environment"]["Variables"]
    read = many["STAGE_SECRETS"].split(",")
    assert {"slack-client-id", "slack-client-secret"} <= set(read)
    assert "slack-bot-token" not in read
    assert many["SHOP_TEAM"] == "T0123456"


def test_no_prices_by_default_and_kroger_with_prices_kroger(
    packaged: Packaged, scheduled: Packaged
) -> None:
    """No Kroger app by default: neither its client ID nor its secret is read (baskets have no
    prices). PRICES=kroger (as put-secrets.sh --prices kroger wrote them): both read from SSM."""
    none = packaged.function["Environment"]["Variables"]
    assert "kroger" not in none["STAGE_SECRETS"]
    kroger = scheduled.function["Environment"]["Variables"]
    assert {"kroger-client-id", "kroger-client-secret"} <= set(kroger["STAGE_SECRETS"].split(","))
    # The redirect URL to register with the Kroger app: the HTTP API's own route, the one
    # bot.handler dispatches (bot.steps.kroger_connect).
    from bot.handler import KROGER_CONNECT, KROGER_REDIRECT
    from bot.steps.kroger_connect import CONNECT_PATH, REDIRECT_PATH

    assert (KROGER_REDIRECT, KROGER_CONNECT) == (REDIRECT_PATH, CONNECT_PATH)
    redirect = kroger["KROGER_REDIRECT_URL"]["Fn::Sub"]
    assert redirect.startswith("https://${HttpApi}.execute-api.")
    assert redirect.endswith(REDIRECT_PATH)


# --- IAM ---------------------------------------------------------------------------------------


def test_s3_object_access_only_under_the_prefix(packaged: Packaged) -> None:
    """Sessions' objects, installations, outcome records, workspace settings and order records:
    read, written and deleted (an outcome, a workspace's settings or an order's record only when
    it removes the app) under the prefixes the code derives."""
    object_actions = {"s3:GetObject", "s3:PutObject", "s3:DeleteObject"}
    sessions, installs, history, settings, orders = [
        s for s in packaged.statements if object_actions & set(_as_list(s["Action"]))
    ]
    assert set(_as_list(orders["Action"])) == object_actions
    assert _as_list(orders["Resource"]) == [{"Fn::Sub": f"${{CheckpointBucket.Arn}}/{ORDERS}*"}]
    assert set(_as_list(settings["Action"])) == object_actions
    assert _as_list(settings["Resource"]) == [{"Fn::Sub": f"${{CheckpointBucket.Arn}}/{SETTINGS}*"}]
    assert set(_as_list(installs["Action"])) == object_actions
    assert _as_list(installs["Resource"]) == [{"Fn::Sub": f"${{CheckpointBucket.Arn}}/{INSTALLS}*"}]
    assert sessions["Effect"] == "Allow" and history["Effect"] == "Allow"
    assert set(_as_list(sessions["Action"])) == object_actions
    assert _as_list(sessions["Resource"]) == [{"Fn::Sub": f"${{CheckpointBucket.Arn}}/{PREFIX}*"}]
    assert set(_as_list(history["Action"])) == object_actions
    assert _as_list(history["Resource"]) == [{"Fn::Sub": f"${{CheckpointBucket.Arn}}/{HISTORY}*"}]
    assert packaged.function["Environment"]["Variables"]["CHECKPOINT_PREFIX"] == PREFIX


def test_list_bucket_only_with_the_prefix(packaged: Packaged) -> None:
    [statement] = [s for s in packaged.statements if "s3:ListBucket" in _as_list(s["Action"])]
    assert _as_list(statement["Action"]) == ["s3:ListBucket"]
    assert _as_list(statement["Resource"]) == [{"Fn::GetAtt": ["CheckpointBucket", "Arn"]}]
    assert statement["Condition"] == {
        "StringLike": {
            "s3:prefix": [f"{PREFIX}*", f"{HISTORY}*", f"{INSTALLS}*", f"{SETTINGS}*", f"{ORDERS}*"]
        }
    }


def test_lambda_invokes_only_itself(packaged: Packaged) -> None:
    [statement] = [
        s for s in packaged.statements if "lambda:InvokeFunction" in _as_list(s["Action"])
    ]
    arn = f"arn:${{AWS::Partition}}:lambda:${{AWS::Region}}:${{AWS::AccountId}}:function:{FUNCTION}"
    assert _as_list(statement["Action"]) == ["lambda:InvokeFunction"]
    assert _as_list(statement["Resource"]) == [{"Fn::Sub": arn}, {"Fn::Sub": f"{arn}:*"}]


def test_no_wildcard_resources_or_actions(packaged: Packaged) -> None:
    for statement in packaged.statements:
        if _as_list(statement["Resource"]) == ["*"]:
            # tracing.lambda: X-Ray's PutTraceSegments and PutTelemetryRecords have no
            # resource-level permissions ("Actions, resources, and condition keys for AWS X-Ray").
            assert statement["Action"] == XRAY, statement
            continue
        assert "*" not in _as_list(statement["Resource"]), statement
        for action in _as_list(statement["Action"]):
            assert not action.endswith(":*") and action != "*", statement
    granted = {a for s in packaged.statements for a in _as_list(s["Action"])}
    assert granted == {
        "s3:GetObject",
        "s3:PutObject",
        "s3:DeleteObject",
        "s3:ListBucket",
        "lambda:InvokeFunction",
        "sqs:SendMessage",  # the on-failure destination
        "sqs:ReceiveMessage",  # ...which the function consumes (bot/steps/lost.py)
        "sqs:DeleteMessage",
        "sqs:GetQueueAttributes",
        "scheduler:CreateSchedule",  # a basket's timer (bot/records/timers.py)
        "scheduler:DeleteSchedule",
        "scheduler:UpdateSchedule",  # a workspace's weekly run (bot/records/weekly.py)
        "scheduler:GetSchedule",
        "iam:PassRole",  # ...invoking the function through BasketTimerRole
        "ssm:GetParameter",  # a workspace's keys (bot/records/workspace_secrets.py)
        "ssm:PutParameter",
        "ssm:DeleteParameters",
        "ssm:GetParametersByPath",  # ...and the kroger folders (bot/records/kroger_accounts.py)
        "ssm:GetParameters",  # the stage's secrets, at the cold start (bot/stage_secrets.py)
        "kms:Decrypt",  # ...and the function's environment, with StageSecretsKey only
        "logs:CreateLogStream",  # the framework's own, for the function's log group
        "logs:CreateLogGroup",
        "logs:TagResource",
        "logs:PutLogEvents",
        *XRAY,  # tracing.lambda (Lambda's own tracing)
    }


def _iam_like(pattern: str, value: str) -> bool:
    """IAM's StringLike and resource matching: ``*`` is any run of characters, ``/`` included,
    and ``?`` any one character (IAM User Guide, "IAM JSON policy elements: Condition operators"
    and "Resource")."""
    glob = "".join({"*": ".*", "?": "."}.get(c, re.escape(c)) for c in pattern)
    return re.fullmatch(glob, value, flags=re.DOTALL) is not None


def _arn(template: str) -> str:
    """An ``Fn::Sub`` ARN with the pseudo parameters of one account and region."""
    for name, value in (("Partition", "aws"), ("Region", REGION), ("AccountId", "123456789012")):
        template = template.replace(f"${{AWS::{name}}}", value)
    return template


def test_workspace_keys_are_read_written_and_deleted_under_their_path_only(
    packaged: Packaged,
) -> None:
    """SSM: Get/Put/DeleteParameters on the workspaces' path, and listing only each workspace's
    kroger folder; the KMS key they are encrypted with lets the account administer it and only
    this role use it, only via SSM and only for those parameters, a person's Kroger token
    included (the aws/ssm key would let every principal of the account decrypt:
    docs.aws.amazon.com, "Restricting decryption of SecureString parameter values").

    ``GetParametersByPath`` is authorised against the path in the request, not the parameters
    it returns, and access to a path is access to every level below it (Systems Manager User
    Guide, "How Parameter Store authorizes parameter retrieval"; API reference, ``Recursive``):
    so its resource is ``<path>/*/kroger``, never ``<path>/*`` (which would let the role list a
    workspace's folder, keys and all)."""
    arn = "arn:${AWS::Partition}:ssm:${AWS::Region}:${AWS::AccountId}:parameter"
    path = f"{arn}/weekly-shop/{STAGE}/workspaces/*"
    [statement] = [s for s in packaged.statements if "ssm:GetParameter" in _as_list(s["Action"])]
    assert set(_as_list(statement["Action"])) == {
        "ssm:GetParameter",
        "ssm:PutParameter",
        "ssm:DeleteParameters",
    }
    assert _as_list(statement["Resource"]) == [{"Fn::Sub": path}]
    [listing] = [
        s for s in packaged.statements if "ssm:GetParametersByPath" in _as_list(s["Action"])
    ]
    assert listing == {
        "Effect": "Allow",
        "Action": ["ssm:GetParametersByPath"],
        "Resource": [{"Fn::Sub": f"{path}/kroger"}],
    }
    workspaces = _arn(f"{arn}/weekly-shop/{STAGE}/workspaces")
    listed = _arn(f"{path}/kroger")
    assert _iam_like(listed, f"{workspaces}/T0TEAM/kroger")  # what KrogerAccounts.forget asks
    for refused in ("", "/T0TEAM", "/T0TEAM/instacart-api-key", "/T0TEAM/kroger/U0ALICE"):
        assert not _iam_like(listed, f"{workspaces}{refused}"), refused
    kms = [s for s in packaged.statements if any("kms:" in a for a in _as_list(s["Action"]))]
    assert "WorkspaceKeysKey" not in json.dumps(kms)  # its key policy alone grants its use
    key = packaged.template["Resources"]["WorkspaceKeysKey"]["Properties"]
    assert key["EnableKeyRotation"] is True
    admin, use = key["KeyPolicy"]["Statement"]
    assert not {"kms:Decrypt", "kms:Encrypt", "kms:*"} & set(admin["Action"])
    assert "GenerateDataKey" not in json.dumps(admin["Action"])
    assert use["Principal"] == {"AWS": {"Fn::GetAtt": ["IamRoleLambdaExecution", "Arn"]}}
    assert set(use["Action"]) == {"kms:Encrypt", "kms:Decrypt", "kms:GenerateDataKey"}
    assert use["Condition"]["StringEquals"] == {
        "kms:ViaService": {"Fn::Sub": "ssm.${AWS::Region}.amazonaws.com"}
    }
    assert use["Condition"]["StringLike"] == {
        "kms:EncryptionContext:PARAMETER_ARN": {"Fn::Sub": path}
    }
    context = _arn(path)
    for name in ("T0TEAM/instacart-api-key", "T0TEAM/kroger/U0ALICE"):
        assert _iam_like(context, f"{workspaces}/{name}"), name
    assert not _iam_like(context, _arn(f"{arn}/weekly-shop/{STAGE}/slack-bot-token"))


def test_the_stage_secrets_are_read_by_name_and_decrypted_with_their_own_key(
    packaged: Packaged,
) -> None:
    """GetParameters on each of the stage's secrets by name (never listed, never written by the
    function), kms:Decrypt on StageSecretsKey only; that key kept with the stack's data, rotated,
    and named by the alias infra/put-secrets.sh encrypts with (it is made by the first deploy,
    so put-secrets.sh runs after it)."""
    from bot.stage_secrets import PARAMETERS

    arn = "arn:${AWS::Partition}:ssm:${AWS::Region}:${AWS::AccountId}:parameter"
    [read] = [s for s in packaged.statements if "ssm:GetParameters" in _as_list(s["Action"])]
    assert _as_list(read["Action"]) == ["ssm:GetParameters"]
    assert _as_list(read["Resource"]) == [
        {"Fn::Sub": f"{arn}/weekly-shop/{STAGE}/{name}"} for name in PARAMETERS
    ]
    [decrypt] = [s for s in packaged.statements if "kms:Decrypt" in _as_list(s["Action"])]
    assert decrypt == {
        "Effect": "Allow",
        "Action": ["kms:Decrypt"],
        "Resource": [{"Fn::GetAtt": ["StageSecretsKey", "Arn"]}],
    }
    key = packaged.template["Resources"]["StageSecretsKey"]["Properties"]
    assert key["EnableKeyRotation"] is True
    alias = packaged.template["Resources"]["StageSecretsKeyAlias"]["Properties"]
    assert alias == {
        "AliasName": f"alias/weekly-shop-{STAGE}-secrets",
        "TargetKeyId": {"Ref": "StageSecretsKey"},
    }
    script = (ROOT / "infra" / "put-secrets.sh").read_text()
    assert "alias/weekly-shop-${stage}-secrets" in script
    assert "--type SecureString" in script and "--type String " not in script


def test_timers_are_made_and_deleted_in_their_group_only(packaged: Packaged) -> None:
    """Least privilege for a basket's timer: CreateSchedule and DeleteSchedule on schedules of
    the one group (no ListSchedules: nothing lists every basket), and iam:PassRole on the
    timer role only, only to Scheduler (CreateSchedule needs PassRole on the target's role)."""
    granted = {
        _as_list(s["Resource"])[0]["Fn::Sub"]: sorted(_as_list(s["Action"]))
        for s in packaged.statements
        if any(a.startswith("scheduler:") for a in _as_list(s["Action"]))
    }
    group_arn = (
        f"arn:${{AWS::Partition}}:scheduler:${{AWS::Region}}:${{AWS::AccountId}}:"
        f"schedule/{TIMER_GROUP}/"
    )
    assert granted == {
        f"{group_arn}basket-*": ["scheduler:CreateSchedule", "scheduler:DeleteSchedule"],
        f"{group_arn}weekly-*": [  # the weekly runs' statement, below
            "scheduler:CreateSchedule",
            "scheduler:DeleteSchedule",
            "scheduler:GetSchedule",
            "scheduler:UpdateSchedule",
        ],
    }
    [passing] = [s for s in packaged.statements if "iam:PassRole" in _as_list(s["Action"])]
    assert _as_list(passing["Action"]) == ["iam:PassRole"]
    assert _as_list(passing["Resource"]) == [{"Fn::GetAtt": ["BasketTimerRole", "Arn"]}]
    assert passing["Condition"] == {
        "StringEquals": {"iam:PassedToService": "scheduler.amazonaws.com"}
    }
    group = packaged.one("AWS::Scheduler::ScheduleGroup")
    assert group["Name"] == TIMER_GROUP


def test_weekly_runs_are_made_changed_and_deleted_by_their_own_names_only(
    packaged: Packaged,
) -> None:
    """Least privilege for a workspace's weekly run (bot/records/weekly.py): its one schedule,
    weekly-<team>, in the timers' group: create, update (a saved change), get (a late removal
    keeps one saved after a reinstall) and delete; none of these on a basket's timers, no
    ListSchedules, and the schedule names bot/records/weekly.py writes match the resource."""
    from bot.records.timers import schedule_name as basket_name
    from bot.records.weekly import schedule_name

    [weekly] = [s for s in packaged.statements if "scheduler:UpdateSchedule" in s["Action"]]
    [resource] = _as_list(weekly["Resource"])
    assert resource["Fn::Sub"].endswith(f":schedule/{TIMER_GROUP}/weekly-*")
    assert schedule_name("T0123ABCD").startswith("weekly-")
    assert basket_name("T0123ABCD", "s", "r", 0).startswith("basket-")
    listing = [s for s in packaged.statements if "scheduler:ListSchedules" in s["Action"]]
    assert listing == []


def test_the_timer_role_lets_only_scheduler_invoke_only_this_function(packaged: Packaged) -> None:
    role = packaged.template["Resources"]["BasketTimerRole"]["Properties"]
    [trust] = role["AssumeRolePolicyDocument"]["Statement"]
    assert trust["Principal"] == {"Service": "scheduler.amazonaws.com"}
    group = (
        f"arn:${{AWS::Partition}}:scheduler:${{AWS::Region}}:${{AWS::AccountId}}:"
        f"schedule-group/{TIMER_GROUP}"
    )
    assert trust["Condition"] == {
        "StringEquals": {
            "aws:SourceAccount": {"Ref": "AWS::AccountId"},
            "aws:SourceArn": {"Fn::Sub": group},
        }
    }
    [policy] = role["Policies"]
    [statement] = policy["PolicyDocument"]["Statement"]
    assert statement["Action"] == "lambda:InvokeFunction"
    assert _as_list(statement["Resource"]) == [{"Fn::Sub": FUNCTION_ARN}]


# --- asynchronous invocations (lazy listeners) -------------------------------------------------


def test_async_invocations_expire_before_slack_signatures_and_land_in_a_queue(
    packaged: Packaged,
) -> None:
    config = packaged.one("AWS::Lambda::EventInvokeConfig")
    assert config["FunctionName"] == {"Ref": "SlackLambdaFunction"}
    assert config["Qualifier"] == "$LATEST"
    assert config["MaximumEventAgeInSeconds"] < 300
    assert config["MaximumRetryAttempts"] == 2
    queue_arn = {"Fn::GetAtt": ["LostLazyRunsQueue", "Arn"]}
    assert config["DestinationConfig"]["OnFailure"]["Destination"] == queue_arn
    queue = packaged.template["Resources"]["LostLazyRunsQueue"]["Properties"]
    assert queue["MessageRetentionPeriod"] == 14 * 24 * 3600
    [send] = [s for s in packaged.statements if "sqs:SendMessage" in _as_list(s["Action"])]
    assert _as_list(send["Resource"]) == [queue_arn]


def test_the_function_consumes_what_it_lost_and_an_alarm_counts_it(packaged: Packaged) -> None:
    """Nothing is lost silently: the lost-lazy-runs queue is an event source of the function
    (small batches, partial batch failures), whose visibility timeout covers the function's
    timeout, with a dead queue after five failed reports, and an alarm on LostLazyRuns."""
    mapping = packaged.one("AWS::Lambda::EventSourceMapping")
    queue_arn = {"Fn::GetAtt": ["LostLazyRunsQueue", "Arn"]}
    assert mapping["EventSourceArn"] == queue_arn
    assert mapping["BatchSize"] == 5
    assert mapping["FunctionResponseTypes"] == ["ReportBatchItemFailures"]
    queue = packaged.template["Resources"]["LostLazyRunsQueue"]["Properties"]
    assert queue["VisibilityTimeout"] >= packaged.function["Timeout"]
    dead = {"Fn::GetAtt": ["LostLazyRunsDeadQueue", "Arn"]}
    assert queue["RedrivePolicy"] == {"deadLetterTargetArn": dead, "maxReceiveCount": 5}
    receive = [s for s in packaged.statements if "sqs:ReceiveMessage" in _as_list(s["Action"])]
    assert receive and all(_as_list(s["Resource"]) == [queue_arn] for s in receive)
    alarm = packaged.template["Resources"]["LostLazyRunsAlarm"]["Properties"]
    assert (alarm["Namespace"], alarm["MetricName"]) == ("weekly-shop", "LostLazyRuns")
    assert alarm["Dimensions"] == [{"Name": "FunctionName", "Value": FUNCTION}]
    assert alarm["Threshold"] == 1 and alarm["ComparisonOperator"].startswith("GreaterThanOrEqual")


# --- alarms, the budget, the dashboard, logs and limits (issue 35) ----------------------------

# The function's embedded metrics (namespace weekly-shop, dimension FunctionName; orders also by
# Destination): the contract the function's side emits and this stack charts and alarms on.
CONTRACT_METRICS = {
    "BasketsStarted",
    "BasketsApproved",
    "BasketsRejected",
    "BasketsExpired",
    "BasketsChanged",
    "BasketFeedbackGood",
    "BasketFeedbackBad",
    "AnswerSeconds",
    "OrdersPlaced",
    "OrdersFailed",
    "OrdersUnknown",
    "ModelInputTokens",
    "ModelCachedTokens",
    "ModelOutputTokens",
    "ModelCostUSD",
    "SlackRetries",
    "S3Retries",
    "LostLazyRuns",
}
DESTINATIONS = {"canvas", "instacart", "webhook", "kroger"}


def _alarms(packaged: Packaged) -> dict[str, dict[str, Any]]:
    return {
        name: r["Properties"] for name, r in packaged.resources("AWS::CloudWatch::Alarm").items()
    }


def _dimensions(alarm: dict[str, Any]) -> dict[str, Any]:
    return {d["Name"]: d["Value"] for d in alarm["Dimensions"]}


def test_every_alarm_tells_the_alarms_topic(packaged: Packaged) -> None:
    """An alarm without an action notifies nobody (issue 35: the only alarm had none)."""
    alarms = _alarms(packaged)
    assert len(alarms) >= 10
    for name, alarm in alarms.items():
        assert alarm["AlarmActions"] == [{"Ref": "Alarms"}], name
        assert alarm["OKActions"] == [{"Ref": "Alarms"}], name
        assert alarm["TreatMissingData"] == "notBreaching", name  # no traffic is not trouble
        assert alarm["AlarmName"].startswith(f"weekly-shop-{STAGE}-"), name
    assert packaged.template["Resources"]["Alarms"]["Type"] == "AWS::SNS::Topic"


def test_the_alarms_watch_what_breaks(packaged: Packaged) -> None:
    """EventBridge Scheduler's metrics are in AWS/Scheduler with the dimension ScheduleGroup
    (Scheduler user guide, "Monitoring Amazon EventBridge Scheduler with Amazon CloudWatch"); the
    HTTP API's 5xx is AWS/ApiGateway's with ApiId."""
    function = {"FunctionName": FUNCTION}
    watched = {
        (a["Namespace"], a["MetricName"], json.dumps(_dimensions(a), sort_keys=True))
        for a in _alarms(packaged).values()
    }
    expected = [
        ("AWS/Lambda", "Errors", function),
        ("AWS/Lambda", "Throttles", function),
        (
            "AWS/SQS",
            "ApproximateNumberOfMessagesVisible",
            {"QueueName": {"Fn::GetAtt": ["LostLazyRunsQueue", "QueueName"]}},
        ),
        (
            "AWS/SQS",
            "ApproximateNumberOfMessagesVisible",
            {"QueueName": {"Fn::GetAtt": ["LostLazyRunsDeadQueue", "QueueName"]}},
        ),
        ("AWS/ApiGateway", "5xx", {"ApiId": {"Ref": "HttpApi"}}),
        ("AWS/Scheduler", "TargetErrorCount", {"ScheduleGroup": TIMER_GROUP}),
        ("AWS/Scheduler", "InvocationDroppedCount", {"ScheduleGroup": TIMER_GROUP}),
        ("weekly-shop", "LostLazyRuns", function),
        ("weekly-shop", "OrdersFailed", function),
        ("weekly-shop", "OrdersUnknown", function),
    ]
    assert watched == {(n, m, json.dumps(d, sort_keys=True)) for n, m, d in expected}
    assert {m for n, m, _ in watched if n == "weekly-shop"} <= CONTRACT_METRICS
    # The dead queue: one message is one person never told; the live queue only when the function
    # has not drained it for three periods in a row.
    for alarm in _alarms(packaged).values():
        assert alarm["Threshold"] == 1
        assert alarm["ComparisonOperator"] == "GreaterThanOrEqualToThreshold"
    waiting = packaged.template["Resources"]["LostRunsWaitingAlarm"]["Properties"]
    assert waiting["EvaluationPeriods"] == 3 and waiting["Statistic"] == "Maximum"


def test_an_alarm_email_is_subscribed_only_when_given(
    packaged: Packaged, scheduled: Packaged
) -> None:
    """ALARM_EMAIL at deploy: an email subscription to the topic, under a Condition that is
    false without one (CloudFormation then creates no subscription resource)."""
    for template, email in ((packaged, ""), (scheduled, ALARM_EMAIL)):
        condition = template.template["Conditions"]["HasAlarmEmail"]
        assert condition == {"Fn::Not": [{"Fn::Equals": [email, ""]}]}
        subscription = template.template["Resources"]["AlarmEmail"]
        assert subscription["Condition"] == "HasAlarmEmail"
        assert subscription["Properties"] == {
            "TopicArn": {"Ref": "Alarms"},
            "Protocol": "email",
            "Endpoint": email,
        }


def test_the_topic_lets_only_this_account_s_alarms_and_budgets_publish(packaged: Packaged) -> None:
    """A topic policy replaces SNS's default; AWS Budgets publishes to a topic only when its
    policy allows budgets.amazonaws.com (Billing and Cost Management user guide, "Creating an
    Amazon SNS topic for budget notifications")."""
    policy = packaged.one("AWS::SNS::TopicPolicy")
    assert policy["Topics"] == [{"Ref": "Alarms"}]
    statements = policy["PolicyDocument"]["Statement"]
    assert {s["Principal"]["Service"] for s in statements} == {
        "cloudwatch.amazonaws.com",
        "budgets.amazonaws.com",
    }
    for statement in statements:
        assert statement["Effect"] == "Allow" and statement["Action"] == "sns:Publish"
        assert statement["Resource"] == {"Ref": "Alarms"}
        assert statement["Condition"]["StringEquals"] == {
            "aws:SourceAccount": {"Ref": "AWS::AccountId"}
        }


def test_a_monthly_budget_notifies_the_topic(packaged: Packaged, scheduled: Packaged) -> None:
    """MONTHLY_BUDGET_USD (20 by default); a Budget's subscriber is SNS or EMAIL
    (AWS::Budgets::Budget Subscriber, SubscriptionType)."""
    for template, amount in ((packaged, 20), (scheduled, 35)):
        resource = template.template["Resources"]["MonthlyBudget"]
        assert resource["DependsOn"] == ["AlarmsPolicy"]  # the topic allows Budgets first
        budget = resource["Properties"]["Budget"]
        assert budget["BudgetType"] == "COST" and budget["TimeUnit"] == "MONTHLY"
        assert budget["BudgetLimit"] == {"Amount": amount, "Unit": "USD"}
        notifications = resource["Properties"]["NotificationsWithSubscribers"]
        assert {n["Notification"]["NotificationType"] for n in notifications} == {
            "ACTUAL",
            "FORECASTED",
        }
        for notification in notifications:
            assert notification["Subscribers"] == [
                {"SubscriptionType": "SNS", "Address": {"Ref": "Alarms"}}
            ]


def _dashboard(packaged: Packaged) -> dict[str, Any]:
    body = packaged.one("AWS::CloudWatch::Dashboard")["DashboardBody"]["Fn::Sub"]
    assert isinstance(body, str)
    # Fn::Sub fills these two in; anything else would fail the deploy.
    assert set(re.findall(r"\$\{([^}]+)\}", body)) == {"AWS::Region", "HttpApi"}
    parsed: dict[str, Any] = json.loads(body)
    return parsed


def test_the_dashboard_shows_the_household_s_numbers_and_the_function_s(
    packaged: Packaged,
) -> None:
    lines = [
        line
        for widget in _dashboard(packaged)["widgets"]
        if widget["type"] == "metric"
        for line in widget["properties"]["metrics"]
    ]
    shown: dict[str, set[str]] = {}
    for line in lines:
        names = [part for part in line if isinstance(part, str)]
        namespace, metric, *dims = names
        shown.setdefault(namespace, set()).add(metric)
        dimensions = dict(zip(dims[::2], dims[1::2], strict=True))
        if namespace in {"weekly-shop", "AWS/Lambda"}:
            assert dimensions["FunctionName"] == FUNCTION, line
        if namespace == "AWS/ApiGateway":
            assert dimensions == {"ApiId": "${HttpApi}"}, line
        if "Destination" in dimensions:
            assert dimensions["Destination"] in DESTINATIONS
    assert shown["weekly-shop"] == CONTRACT_METRICS
    assert {"Invocations", "Errors", "Throttles", "Duration", "ConcurrentExecutions"} <= shown[
        "AWS/Lambda"
    ]
    assert {"Count", "4xx", "5xx", "Latency"} <= shown["AWS/ApiGateway"]
    assert {"TargetErrorCount", "InvocationDroppedCount"} <= shown["AWS/Scheduler"]
    by_destination = {
        (line[1], line[5]) for line in lines if len(line) > 5 and line[4] == "Destination"
    }
    assert by_destination == {
        (metric, destination)
        for metric in ("OrdersPlaced", "OrdersFailed", "OrdersUnknown")
        for destination in DESTINATIONS
    }
    p99 = [line for line in lines if line[1] == "Duration"]
    assert p99 and all(line[-1] == {"stat": "p99"} for line in p99)


def test_http_api_access_logs_and_lambda_tracing(packaged: Packaged) -> None:
    stage = packaged.template["Resources"]["HttpApiStage"]
    settings = stage["Properties"]["AccessLogSettings"]
    assert settings["DestinationArn"] == {"Fn::GetAtt": ["HttpApiLogGroup", "Arn"]}
    fields = json.loads(settings["Format"])
    assert {"requestId", "ip", "routeKey", "status", "latency"} <= set(fields)
    assert fields["routeKey"] == "$context.routeKey"  # never the path with its query (OAuth codes)
    assert not [v for v in fields.values() if "path" in v.lower() or "querystring" in v.lower()]
    log_group = packaged.template["Resources"]["HttpApiLogGroup"]["Properties"]
    assert log_group["RetentionInDays"] == 30
    assert packaged.function["TracingConfig"] == {"Mode": "Active"}
    [xray] = [s for s in packaged.statements if s["Action"] == XRAY]
    assert xray["Effect"] == "Allow"


def test_limits_have_household_defaults_and_come_from_the_deploy(
    packaged: Packaged, scheduled: Packaged
) -> None:
    """RESERVED_CONCURRENCY (10), API_BURST_LIMIT (20) and API_RATE_LIMIT (10 a second) on the
    $default stage's default route: every route of the API."""
    for template, (concurrency, burst, rate) in ((packaged, (10, 20, 10)), (scheduled, (5, 8, 4))):
        assert template.function["ReservedConcurrentExecutions"] == concurrency
        route = template.template["Resources"]["HttpApiStage"]["Properties"]
        assert route["StageName"] == "$default"
        assert route["DefaultRouteSettings"]["ThrottlingBurstLimit"] == burst
        assert route["DefaultRouteSettings"]["ThrottlingRateLimit"] == rate


@pytest.mark.parametrize(
    ("env", "said"),
    [
        ({}, "10 20 10 20 30"),
        ({"RESERVED_CONCURRENCY": "ten"}, "RESERVED_CONCURRENCY must be a whole number"),
        ({"RESERVED_CONCURRENCY": "0"}, "RESERVED_CONCURRENCY must be a whole number"),
        ({"API_RATE_LIMIT": "2.5"}, "API_RATE_LIMIT must be a whole number"),
        ({"MONTHLY_BUDGET_USD": "-5"}, "MONTHLY_BUDGET_USD must be a whole number"),
        ({"NONCURRENT_DAYS": " 7 "}, "10 20 10 20 7"),
    ],
)
def test_limits_refuse_what_is_not_a_whole_number_in_range(env: dict[str, str], said: str) -> None:
    """infra/limits.js as serverless.yml reads it: packaging fails naming the variable."""
    script = (
        "const l = require('./infra/limits.js');"
        "try { console.log([l.reservedConcurrency(), l.apiBurstLimit(), l.apiRateLimit(),"
        " l.monthlyBudgetUsd(), l.noncurrentDays()].join(' ')); }"
        "catch (e) { console.log(e.message); }"
    )
    clean = {k: v for k, v in os.environ.items() if k not in CONFIG_VARIABLES}
    done = subprocess.run(
        ["node", "-e", script], cwd=ROOT, env={**clean, **env}, capture_output=True, text=True
    )
    assert said in done.stdout, done.stdout + done.stderr


def test_the_bucket_and_the_key_outlive_the_stack(packaged: Packaged, scheduled: Packaged) -> None:
    """Retain on delete and on replacement; the bucket versioned, old versions expired after
    NONCURRENT_DAYS and the delete markers left alone cleaned up. The session lock's conditional
    writes are unchanged by versioning: "For buckets with versioning enabled, if there's no
    current object version with the same name, or if the current object version is a delete
    marker, the write operation succeeds" (S3 user guide, "How to prevent object overwrites with
    conditional writes"), and conditional deletes "only apply to the current version"."""
    for name in ("CheckpointBucket", "WorkspaceKeysKey", "StageSecretsKey"):
        resource = packaged.template["Resources"][name]
        assert resource["DeletionPolicy"] == "Retain", name
        assert resource["UpdateReplacePolicy"] == "Retain", name
    for name in ("LostLazyRunsQueue", "LostLazyRunsDeadQueue"):  # said, not defaulted
        resource = packaged.template["Resources"][name]
        assert (resource["DeletionPolicy"], resource["UpdateReplacePolicy"]) == ("Delete", "Delete")
    for template, days in ((packaged, 30), (scheduled, 14)):
        bucket = template.template["Resources"]["CheckpointBucket"]["Properties"]
        assert bucket["VersioningConfiguration"] == {"Status": "Enabled"}
        rules = bucket["LifecycleConfiguration"]["Rules"]
        [versions] = [r for r in rules if "NoncurrentVersionExpiration" in r]
        assert versions["Prefix"] == "" and versions["Status"] == "Enabled"  # every prefix
        assert versions["NoncurrentVersionExpiration"] == {"NoncurrentDays": days}
        # CloudFormation refuses ExpiredObjectDeleteMarker beside ExpirationInDays in one rule.
        assert versions["ExpiredObjectDeleteMarker"] is True
        assert "ExpirationInDays" not in versions
        assert sum("NoncurrentVersionExpiration" in r for r in rules) == 1


def test_the_readme_says_the_lease_serverless_yml_deploys() -> None:
    """The lease (LOCK_TTL_SECONDS) outlasts the function's 60 s timeout; infra/README.md says
    the value serverless.yml sets."""
    deployed = re.search(r"LOCK_TTL_SECONDS: '(\d+)'", (ROOT / "serverless.yml").read_text())
    assert deployed and int(deployed.group(1)) > 60
    readme = (ROOT / "infra" / "README.md").read_text()
    said = re.findall(r"`LOCK_TTL_SECONDS` \((\d+)", readme)
    assert said == [deployed.group(1)]


def test_the_readme_lists_what_the_stack_creates(packaged: Packaged) -> None:
    """Every kind of resource in the template has a row in infra/README.md's table."""
    readme = (ROOT / "infra" / "README.md").read_text()
    table = readme.split("What one deploy creates")[1].split("## ")[0]
    for words in (
        "KMS key",
        "Scheduler schedule group",
        "timers' role",
        "SNS topic",
        "alarms",
        "dashboard",
        "budget",
        "access log",
    ):
        assert words in table, words


# --- the checkpoint bucket ---------------------------------------------------------------------


def test_checkpoint_bucket(packaged: Packaged) -> None:
    bucket = packaged.template["Resources"]["CheckpointBucket"]["Properties"]
    assert bucket["PublicAccessBlockConfiguration"] == {
        "BlockPublicAcls": True,
        "BlockPublicPolicy": True,
        "IgnorePublicAcls": True,
        "RestrictPublicBuckets": True,
    }
    [sse] = bucket["BucketEncryption"]["ServerSideEncryptionConfiguration"]
    assert sse["ServerSideEncryptionByDefault"]["SSEAlgorithm"] == "AES256"
    assert bucket["OwnershipControls"]["Rules"] == [{"ObjectOwnership": "BucketOwnerEnforced"}]
    rules = bucket["LifecycleConfiguration"]["Rules"]
    assert all(rule["Status"] == "Enabled" for rule in rules)
    sessions, states, history, orders = [rule for rule in rules if "ExpirationInDays" in rule]
    # Order records are kept as long as the outcomes that link to them, outside the sessions'.
    assert orders["Prefix"] == ORDERS and not ORDERS.startswith(PREFIX)
    assert int(orders["ExpirationInDays"]) == 400
    assert states["Prefix"] == f"{INSTALLS}states/" and int(states["ExpirationInDays"]) == 1
    # The OAuth states' used-markers (bot/slack/oauth_states.py) are what that rule bounds.
    assert f"{INSTALLS}{STATES}{USED}".startswith(states["Prefix"])
    assert sessions["Prefix"] == PREFIX
    assert sessions["ExpirationInDays"] == 30
    # History outlives sessions only outside their prefix: S3 applies the shortest of
    # overlapping expiration rules ("Lifecycle configuration conflicts", S3 user guide).
    assert history["Prefix"] == HISTORY and not HISTORY.startswith(PREFIX)
    assert int(history["ExpirationInDays"]) == 400
    # A workspace's settings expire never: no rule covers their prefix (only its removal).
    assert not SETTINGS.startswith(PREFIX)
    assert not any(SETTINGS.startswith(r["Prefix"]) for r in rules if "ExpirationInDays" in r)
    assert any("AbortIncompleteMultipartUpload" in rule for rule in rules)


# --- the optional schedule ---------------------------------------------------------------------


def test_schedule_disabled_without_shop_schedule(packaged: Packaged) -> None:
    rule = packaged.one("AWS::Events::Rule")
    assert rule["State"] == "DISABLED"
    assert rule["Targets"][0]["Arn"] == {"Fn::GetAtt": ["SlackLambdaFunction", "Arn"]}


def test_schedule_enabled_with_shop_schedule(scheduled: Packaged) -> None:
    rule = scheduled.one("AWS::Events::Rule")
    assert rule["State"] == "ENABLED"
    assert rule["ScheduleExpression"] == SCHEDULE
    assert rule["Targets"][0]["Arn"] == {"Fn::GetAtt": ["SlackLambdaFunction", "Arn"]}


def test_schedule_without_channel_is_refused(
    node_modules: None, packaged: Packaged, tmp_path: Path
) -> None:
    result = _run_package(_service_copy(tmp_path / "svc"), {"SHOP_SCHEDULE": SCHEDULE})
    assert result.returncode != 0
    assert "SHOP_CHANNEL and SHOP_REQUEST are empty" in result.stdout + result.stderr


@pytest.mark.parametrize(
    ("env", "said"),
    [
        ({}, "enabled=false"),
        ({"SHOP_SCHEDULE": SCHEDULE}, "SHOP_CHANNEL and SHOP_REQUEST are empty"),
        ({"SHOP_SCHEDULE": SCHEDULE, "SHOP_CHANNEL": "C0123"}, "SHOP_REQUEST is empty"),
        ({"SHOP_SCHEDULE": SCHEDULE, "SHOP_REQUEST": "tacos"}, "SHOP_CHANNEL is empty"),
        ({"SHOP_SCHEDULE": SCHEDULE, "SHOP_CHANNEL": "C0123", "SHOP_REQUEST": "t"}, "enabled=true"),
    ],
)
def test_the_schedule_is_enabled_only_with_a_channel_and_a_request(
    env: dict[str, str], said: str
) -> None:
    """infra/schedule.js as serverless.yml reads it: it names what is missing."""
    script = (
        "const s = require('./infra/schedule.js');"
        "try { s.rate(); console.log('enabled=' + s.enabled()); }"
        "catch (e) { console.log(e.message); }"
    )
    clean = {k: v for k, v in os.environ.items() if not k.startswith("SHOP_")}
    done = subprocess.run(
        ["node", "-e", script], cwd=ROOT, env={**clean, **env}, capture_output=True, text=True
    )
    assert said in done.stdout, done.stdout + done.stderr


# --- the artifact ------------------------------------------------------------------------------


def test_artifact_holds_the_code_and_arm64_dependencies(packaged: Packaged) -> None:
    with zipfile.ZipFile(packaged.artifact) as artifact:
        names = set(artifact.namelist())
    ours = {
        path.relative_to(ROOT).as_posix()
        for package in ("workflow", "bot")
        for path in (ROOT / package).rglob("*.py")
        if "__pycache__" not in path.parts and not {"sandbox", "dev"} & set(path.parts)
    }
    assert ours <= names
    top = {name.split("/", 1)[0] for name in names}
    assert not top & {"tests", "bench", ".venv", "node_modules", "infra", ".git", ".serverless"}
    # Only what the function runs: no sandbox (fakes, page), no Socket Mode dev run, no aiohttp,
    # no moto, no test code.
    assert not [n for n in names if n.startswith(("bot/sandbox/", "bot/dev/"))]
    assert not top & {"aiohttp", "moto", "pytest", "hypothesis", "playwright", "werkzeug"}
    for package in ("slack_bolt", "slack_sdk", "anthropic", "pydantic", "boto3"):
        assert f"{package}/__init__.py" in names, package
    shared_objects = [name for name in names if name.endswith(".so")]
    assert any(re.match(r"pydantic_core/.*cpython-311-aarch64", n) for n in shared_objects)
    wrong = [n for n in shared_objects if "aarch64" not in n or "x86_64" in n]
    assert not wrong, wrong
    sizes: dict[str, int] = {}
    with zipfile.ZipFile(packaged.artifact) as artifact:
        for info in artifact.infolist():
            name = info.filename.split("/", 1)[0]
            sizes[name] = sizes.get(name, 0) + info.file_size
    largest = ", ".join(
        f"{n} {s / 1e6:.1f}" for n, s in sorted(sizes.items(), key=lambda x: -x[1])[:6]
    )
    print(
        f"\nLambda zip: {packaged.artifact.stat().st_size / 1e6:.1f} MB compressed, "
        f"{sum(sizes.values()) / 1e6:.1f} MB unpacked, {len(names)} files; largest (MB): {largest}"
    )


# --- files that must agree with serverless.yml (no packaging needed) ---------------------------


def test_every_module_ships_bytecode_the_runtime_uses(packaged: Packaged) -> None:
    """infra/bytecode.js: a cpython-311 .pyc beside each .py (the runtime's Python), hash-based
    and unchecked (PEP 552: flags 0b01), so the read-only code directory is never compiled at
    a cold start and a zip's 2-second mtimes cannot make it stale; no other version's .pyc."""
    with zipfile.ZipFile(packaged.artifact) as artifact:
        names = set(artifact.namelist())
        sources = sorted(n for n in names if n.endswith(".py"))
        missing = [
            s
            for s in sources
            if f"{s.rpartition('/')[0]}/__pycache__/{s.rpartition('/')[2][:-3]}.cpython-311.pyc"
            not in names
            and "/" in s
        ]
        flags = {
            int.from_bytes(artifact.read(n)[4:8], "little")
            for n in names
            if n.endswith(".pyc") and n.startswith(("bot/", "workflow/", "slack_bolt/"))
        }
    assert len(sources) > 1000
    assert len(missing) < len(sources) // 100, missing[:20]  # a few are templates, not modules
    assert not [n for n in names if n.endswith(".pyc") and ".cpython-311." not in n]
    assert not [m for m in missing if m.startswith(("bot/", "workflow/"))]
    assert flags == {0b01}
    infos = zipfile.ZipFile(packaged.artifact).infolist()
    assert {i.date_time for i in infos} == {(2020, 1, 1, 0, 0, 0)}  # reproducible


def _lock() -> dict[str, tuple[str, list[str]]]:
    """infra/requirements-lambda.txt: name -> (exact version, hashes)."""
    pins: dict[str, tuple[str, list[str]]] = {}
    current = ""
    for line in (ROOT / "infra" / "requirements-lambda.txt").read_text().splitlines():
        pinned = re.match(r"^([A-Za-z0-9._-]+)==([^ \\]+)", line)
        if pinned:
            current = re.sub(r"[-_.]+", "-", pinned.group(1)).lower()
            pins[current] = (pinned.group(2), [])
        elif "--hash=sha256:" in line:
            pins[current][1].append(line.split("--hash=sha256:", 1)[1].strip(" \\"))
    return pins


def test_the_lambda_lock_pins_everything_pyproject_allows() -> None:
    """Two deploys of one commit ship the same code: every package that ships is pinned to one
    version with its hashes (pip then installs nothing else), and the lock still satisfies
    pyproject.toml's ranges. Drift (a range changed, a dependency added) fails here; `make lock`
    resolves it again."""
    from packaging.requirements import Requirement

    pins = _lock()
    declared = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["dependencies"]
    for spec in map(Requirement, declared):
        name = re.sub(r"[-_.]+", "-", spec.name).lower()
        assert name in pins, f"{name} is in pyproject.toml but not in the lock: make lock"
        assert spec.specifier.contains(pins[name][0]), f"{name} {pins[name][0]} not {spec}"
    assert all(hashes for _, hashes in pins.values())
    assert "aiohttp" not in pins and "moto" not in pins  # the sandbox's, never shipped


def test_the_zip_holds_exactly_the_locked_packages(packaged: Packaged) -> None:
    with zipfile.ZipFile(packaged.artifact) as artifact:
        shipped = {
            re.sub(r"[-_.]+", "-", m.group(1)).lower(): m.group(2)
            for name in artifact.namelist()
            if (m := re.match(r"^([^/]+)-([^-/]+)\.dist-info/METADATA$", name))
        }
    assert shipped == {name: version for name, (version, _) in _lock().items()}


def test_the_manifest_asks_for_the_scopes_add_to_slack_asks_for() -> None:
    """One list of what the bot may do: the manifest's bot scopes are the OAuth flow's
    (``bot.slack.installs.SCOPES``), canvases:write and files:read for the order's list
    included."""
    from bot.slack.installs import SCOPES

    manifest = (ROOT / "infra" / "slack-app-manifest.yml").read_text()
    bot = manifest.split("scopes:")[1].split("bot:")[1].split("settings:")[0]
    assert re.findall(r"^\s*- (\S+)$", bot, flags=re.MULTILINE) == SCOPES
    assert {"canvases:write", "files:read"} <= set(SCOPES)


def test_manifest_urls_point_at_the_route() -> None:
    manifest = (ROOT / "infra" / "slack-app-manifest.yml").read_text()
    # Its header counts the URLs to replace and names the deploy command this repository uses.
    header = manifest.split("_metadata:")[0]
    every = re.findall(r"^\s*(?:url|request_url|- )\s*:?\s*(https://\S+)$", manifest, flags=re.M)
    assert len(every) == 4 and "The four URLs below" in header
    assert "serverless@3" not in header and "npx serverless deploy" in header
    urls = re.findall(r"^\s*(?:url|request_url): (\S+)$", manifest, flags=re.MULTILINE)
    assert len(urls) == 3  # the command, interactivity and the Events API: one route
    assert all(url.startswith("https://") and url.endswith("/slack/events") for url in urls)
    assert re.search(r"^\s*- command: /shop$", manifest, flags=re.MULTILINE)
    assert re.search(r"^\s*should_escape: false$", manifest, flags=re.MULTILINE)
    assert re.search(r"^\s*home_tab_enabled: true$", manifest, flags=re.MULTILINE)
    events = manifest.split("bot_events:")[1].split("interactivity:")[0]
    assert re.findall(r"^\s*- (\S+)$", events, flags=re.MULTILINE) == [
        "app_home_opened",
        "app_uninstalled",
        "tokens_revoked",
    ]
    redirects = manifest.split("redirect_urls:")[1].split("scopes:")[0]
    (redirect,) = re.findall(r"^\s*- (\S+)$", redirects, flags=re.MULTILINE)
    assert redirect.startswith("https://") and redirect.endswith("/slack/oauth_redirect")


@pytest.mark.parametrize("workspaces", ["one", "many"])
def test_put_secrets_writes_the_parameters_the_template_reads(
    packaged: Packaged, scheduled: Packaged, tmp_path: Path, workspaces: str
) -> None:
    """infra/put-secrets.sh against a fake `aws`: the names the template's STAGE_SECRETS reads,
    as SecureString under the stage's key alias, values never on a command line; ``--workspaces
    many`` writes the OAuth credentials the WORKSPACES=many template reads, and (with it here)
    ``--prices kroger`` the Kroger app's the PRICES=kroger template reads. A parameter an older
    script wrote as String (here: the signing secret) is deleted and put again as SecureString
    (the function uses a String one only with a warning)."""
    template = packaged if workspaces == "one" else scheduled
    # One workspace: a first run, the signing key generated. Many: the stage has a signing key
    # from before (a String one), kept, and put again as SecureString under the current key.
    signing_key = "None" if workspaces == "one" else "String"
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    log = tmp_path / "aws.log"
    fake = bin_dir / "aws"
    fake.write_text(
        "#!/usr/bin/env bash\n"
        f'printf "%s\\n" "$*" >> "{log}"\n'
        'for a in "$@"; do [[ $a == file://* ]] && { cat "${a#file://}"; echo; } >> '
        f'"{log}.values"; done\n'
        'case "$1 $2" in "ssm put-parameter") echo 1 ;; "kms describe-key") echo k-1 ;;\n'
        '  "ssm describe-parameters") [[ $* == *slack-signing-secret* ]] && echo String'
        f" || {{ [[ $* == *checkpoint-signing-key* ]] && echo {signing_key} || echo None; }} ;;\n"
        '  "ssm get-parameter") echo kept-signing-key-0f1e2d ;;\n'
        "esac\n"
    )
    fake.chmod(0o755)
    env = {
        "PATH": f"{bin_dir}{os.pathsep}{os.environ['PATH']}",
        "HOME": str(tmp_path),
        **{name: CANARIES[name] for name in ("SLACK_BOT_TOKEN", "SLACK_SIGNING_SECRET")},
        "ANTHROPIC_API_KEY": CANARIES["ANTHROPIC_API_KEY"],
        "SLACK_CLIENT_ID": "1111.2222",
        "SLACK_CLIENT_SECRET": "canary-client-secret-0f1e2d",
        "KROGER_CLIENT_ID": "weekly-shop-prod-0f1e2d",
        "KROGER_CLIENT_SECRET": "canary-kroger-secret-0f1e2d",
    }
    script = [str(ROOT / "infra" / "put-secrets.sh"), "--stage", STAGE, "--region", REGION]
    result = subprocess.run(
        ["bash", *script, "--workspaces", workspaces]
        + (["--prices", "kroger"] if workspaces == "many" else []),
        env=env,
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert result.returncode == 0, result.stdout + result.stderr
    calls = log.read_text()
    written = re.findall(r"put-parameter .*--name (\S+)", calls)
    variables = template.function["Environment"]["Variables"]
    path = variables["STAGE_SECRETS_PATH"]
    assert sorted(written) == sorted(f"{path}/{n}" for n in variables["STAGE_SECRETS"].split(","))
    puts = [line for line in calls.splitlines() if "put-parameter" in line]
    key = f"--key-id alias/weekly-shop-{STAGE}-secrets"
    assert all("--type SecureString" in line and key in line for line in puts)
    deleted = re.findall(r"delete-parameter .*--name (\S+)", calls)
    kept = [f"{path}/checkpoint-signing-key"] if workspaces == "many" else []
    assert deleted == [f"{path}/slack-signing-secret", *kept]
    assert all(f"--region {REGION}" in line for line in calls.splitlines())
    values = (tmp_path / "aws.log.values").read_text().splitlines()
    token = "SLACK_BOT_TOKEN" if workspaces == "one" else "SLACK_SIGNING_SECRET"
    for name in (token, "SLACK_SIGNING_SECRET", "ANTHROPIC_API_KEY"):
        assert CANARIES[name] in values
        assert CANARIES[name] not in calls
        assert CANARIES[name] not in result.stdout + result.stderr
    oauth = {"1111.2222", "canary-client-secret-0f1e2d"} if workspaces == "many" else set()
    oauth |= {"weekly-shop-prod-0f1e2d", "canary-kroger-secret-0f1e2d"} if oauth else set()
    assert oauth <= set(values) and "canary-client-secret-0f1e2d" not in calls
    assert "canary-kroger-secret-0f1e2d" not in calls + result.stdout + result.stderr
    [signing] = [v for v in values if v not in {*CANARIES.values(), *oauth}]
    if workspaces == "one":
        assert re.fullmatch(r"[0-9a-f]{64}", signing)  # generated
    else:
        assert signing == "kept-signing-key-0f1e2d"  # kept, never on a command line or said
        assert signing not in calls.replace("echo kept-signing-key", "") + result.stdout
        assert "get-parameter --region" in calls and "--with-decryption" in calls
