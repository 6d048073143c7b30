"""The deploy's secrets, read from SSM Parameter Store once per cold start, never from the
function's environment.

In a deploy, ``STAGE_SECRETS_PATH`` names the stage's path (``/weekly-shop/<stage>``) and
``STAGE_SECRETS`` the parameters under it this deploy needs (``serverless.yml`` picks them: the
bot token with one workspace, the OAuth client with many, Kroger's app with prices).
``infra/put-secrets.sh`` wrote them as SecureString parameters under the stack's
``StageSecretsKey``. One ``GetParameters`` call (decrypted) reads them all before the first
request is verified (the signing secret is one of them); the values go into the frozen
``Settings`` as :class:`bot.settings.Secret` and nowhere else: not ``os.environ`` (a child process
would inherit it), not the Lambda configuration (anyone who may read the function's
configuration would read them). A new value is read by the next cold start: after
``put-secrets.sh``, a deploy with a new ``SECRETS_REVISION`` replaces the warm ones
(``infra/README.md``).

What comes back is checked, as anything read across a trust boundary: every listed parameter
must be there, and its value is checked as the variable's (``bot.settings_env``); a variable may
come from the environment or from SSM, never both (an old value left in the environment would
silently win or lose). Anything wrong is a :class:`SettingsError` naming the parameter, at the
cold start, as a missing variable is. A plain ``String`` parameter (as ``put-secrets.sh`` wrote
them before) is used, with a WARNING naming it at each cold start: a stage upgraded by a deploy
keeps answering until ``put-secrets.sh`` (which needs the key that deploy makes) converts them,
rather than refusing every request in between.

Without ``STAGE_SECRETS_PATH`` (the sandbox, the tests, the console), secrets come from the
environment as before, and nothing here imports boto3.
"""

from __future__ import annotations

import logging
from collections.abc import Mapping
from typing import Any

from bot.settings import SettingsError

log = logging.getLogger(__name__)

PATH_VARIABLE = "STAGE_SECRETS_PATH"
NAMES_VARIABLE = "STAGE_SECRETS"
# Parameter name under the path -> the variable it stands for (bot.settings_env.ENV_NAMES).
PARAMETERS = {
    "slack-bot-token": "SLACK_BOT_TOKEN",
    "slack-client-id": "SLACK_CLIENT_ID",
    "slack-client-secret": "SLACK_CLIENT_SECRET",
    "slack-signing-secret": "SLACK_SIGNING_SECRET",
    "anthropic-api-key": "ANTHROPIC_API_KEY",
    "checkpoint-signing-key": "CHECKPOINT_SIGNING_KEY",
    "kroger-client-id": "KROGER_CLIENT_ID",
    "kroger-client-secret": "KROGER_CLIENT_SECRET",
}
# GetParameters takes at most 10 names; PARAMETERS has fewer, so one call always reads them all.
MAX_NAMES = 10
PUT_THEM = "put them with infra/put-secrets.sh"


def with_stage_secrets(environ: Mapping[str, str], ssm: Any = None) -> Mapping[str, str]:
    """``environ`` with the stage's secrets added, read from SSM when ``STAGE_SECRETS_PATH`` is
    set (``ssm``: a client to use instead of a new one); ``environ`` itself otherwise."""
    path = environ.get(PATH_VARIABLE, "")
    if not path:
        return environ
    names = wanted(path, environ.get(NAMES_VARIABLE, ""))
    for name in names:
        if environ.get(PARAMETERS[name]):
            raise SettingsError(
                f"{PARAMETERS[name]} is set in the environment and in SSM ({path}/{name}): "
                "a deploy reads it from SSM only"
            )
    found = read(ssm or _client(), path, names)
    return {**environ, **{PARAMETERS[name]: value for name, value in found.items()}}


def wanted(path: str, listed: str) -> list[str]:
    """The parameter names ``STAGE_SECRETS`` lists (comma-separated), checked."""
    if not path.startswith("/") or path.endswith("/") or any(c.isspace() for c in path):
        raise SettingsError(f"{PATH_VARIABLE} is invalid: must be a path like /weekly-shop/dev")
    names = [name.strip() for name in listed.split(",") if name.strip()]
    if not names:
        raise SettingsError(f"{NAMES_VARIABLE} is not set: {PATH_VARIABLE} needs it")
    unknown = sorted(set(names) - PARAMETERS.keys())
    if unknown:
        raise SettingsError(
            f"{NAMES_VARIABLE} is invalid: {', '.join(unknown)} is not one of the stage's secrets"
        )
    return list(dict.fromkeys(names))


def read(ssm: Any, path: str, names: list[str]) -> dict[str, str]:
    """Each of ``names`` under ``path``, decrypted, in one GetParameters call; every one must be
    there (a String one is used, and logged at WARNING)."""
    from botocore.exceptions import BotoCoreError, ClientError

    full = {f"{path}/{name}": name for name in names}
    try:
        answer = ssm.get_parameters(Names=list(full)[:MAX_NAMES], WithDecryption=True)
    except (BotoCoreError, ClientError) as exc:
        raise SettingsError(f"the stage's secrets under {path} could not be read: {exc}") from None
    missing = [full[n] for n in answer.get("InvalidParameters", []) if n in full]
    if missing:
        raise SettingsError(
            f"{', '.join(f'{path}/{m}' for m in sorted(missing))} not found in SSM: {PUT_THEM}"
        )
    found: dict[str, str] = {}
    plain = []
    for parameter in answer.get("Parameters", []):
        name = full.get(str(parameter.get("Name", "")))
        if name is None:
            continue
        if parameter.get("Type") != "SecureString":
            plain.append(f"{path}/{name}")
        found[name] = str(parameter.get("Value", ""))
    if plain:  # a stage upgraded from String parameters: it keeps working, and says so
        log.warning(
            "%s: String parameters, readable without the stack's key: %s again, which "
            "writes SecureString",
            ", ".join(sorted(plain)),
            PUT_THEM,
        )
    lost = sorted(set(names) - found.keys())
    if lost:
        raise SettingsError(f"SSM did not return {', '.join(lost)} under {path}: {PUT_THEM}")
    return found


def _client() -> Any:
    """An SSM client for the cold start: short timeouts and two tries, so a stuck SSM fails the
    cold start within seconds (the next request starts another) rather than the function's 60."""
    import boto3
    from botocore.config import Config

    config = Config(
        connect_timeout=1, read_timeout=2, retries={"mode": "standard", "max_attempts": 2}
    )
    return boto3.client("ssm", config=config)
