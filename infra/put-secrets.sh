#!/usr/bin/env bash
# Put weekly-shop's secrets into SSM Parameter Store for one stage, as SecureString parameters
# under /weekly-shop/<stage>/, where the function reads them at each cold start
# (bot/stage_secrets.py). Run it after the stage's first deploy, which makes their key.
#
#   infra/put-secrets.sh --stage prod [--region eu-west-1] [--workspaces one|many]
#                        [--prices none|kroger] [--rotate-signing-key]
#
# Values come from the environment: SLACK_BOT_TOKEN (one workspace) or SLACK_CLIENT_ID and
# SLACK_CLIENT_SECRET (many), SLACK_SIGNING_SECRET, ANTHROPIC_API_KEY, KROGER_CLIENT_ID and
# KROGER_CLIENT_SECRET (--prices kroger), optionally CHECKPOINT_SIGNING_KEY. One that is unset
# is asked for (without echo) when standard input is a terminal; otherwise the script stops.
# CHECKPOINT_SIGNING_KEY, when not given, is kept if the stage already has one (a new key would
# make every waiting checkpoint unreadable; it is put again under the current key) or generated
# with `openssl rand -hex 32`; --rotate-signing-key generates a new one anyway.
#
# They are encrypted with the stack's StageSecretsKey (alias/weekly-shop-<stage>-secrets); a
# String parameter an older version of this script wrote is deleted and put again as SecureString
# (the function refuses a String one). Secret values are never printed and never put on a
# command line (they go to the AWS CLI through a private temp file). After changing secrets of
# a running stage, deploy again with a new SECRETS_REVISION (see infra/README.md): warm
# instances read the secrets once, at their cold start.
set -euo pipefail

usage() {
  sed -n '2,15p' "$0" | sed 's/^# \{0,1\}//'
}

stage="dev"
region="eu-west-1"
rotate_signing_key=false
workspaces="one"
prices="none"

while (($# > 0)); do
  case "$1" in
    --stage)
      stage="${2:?--stage needs a value}"
      shift 2
      ;;
    --stage=*)
      stage="${1#*=}"
      shift
      ;;
    --region)
      region="${2:?--region needs a value}"
      shift 2
      ;;
    --region=*)
      region="${1#*=}"
      shift
      ;;
    --workspaces)
      workspaces="${2:?--workspaces needs one or many}"
      shift 2
      ;;
    --workspaces=*)
      workspaces="${1#*=}"
      shift
      ;;
    --prices)
      prices="${2:?--prices needs none or kroger}"
      shift 2
      ;;
    --prices=*)
      prices="${1#*=}"
      shift
      ;;
    --rotate-signing-key)
      rotate_signing_key=true
      shift
      ;;
    -h | --help)
      usage
      exit 0
      ;;
    *)
      echo "put-secrets: unknown argument: $1" >&2
      usage >&2
      exit 2
      ;;
  esac
done

if [[ "$prices" != none && "$prices" != kroger ]]; then
  echo "put-secrets: --prices is none or kroger; got '$prices'" >&2
  exit 2
fi

if [[ "$workspaces" != one && "$workspaces" != many ]]; then
  echo "put-secrets: --workspaces is one or many; got '$workspaces'" >&2
  exit 2
fi

if [[ ! "$stage" =~ ^[A-Za-z0-9-]+$ ]]; then
  echo "put-secrets: --stage must be letters, digits and dashes; got '$stage'" >&2
  exit 2
fi

command -v aws >/dev/null || {
  echo "put-secrets: the AWS CLI (aws) is not installed" >&2
  exit 1
}

prefix="/weekly-shop/${stage}"
key="alias/weekly-shop-${stage}-secrets"

aws kms describe-key --region "$region" --key-id "$key" --query KeyMetadata.KeyId \
  --output text >/dev/null || {
  echo "put-secrets: no key ${key} in ${region}: deploy the stage first" \
    "(npx serverless deploy --stage ${stage}); its stack makes the key" >&2
  exit 1
}

# Fill the named variable from the environment, or from a silent prompt on a terminal.
require_secret() {
  local name="$1" value
  value="${!name:-}"
  if [[ -z "$value" ]]; then
    if [[ -t 0 ]]; then
      read -r -s -p "${name}: " value
      echo >&2
    fi
    if [[ -z "$value" ]]; then
      echo "put-secrets: ${name} is not set (export it, or run on a terminal to be asked)" >&2
      exit 1
    fi
  fi
  printf -v "$name" '%s' "$value"
}

if [[ "$prices" == kroger ]]; then
  require_secret KROGER_CLIENT_ID
  require_secret KROGER_CLIENT_SECRET
fi
if [[ "$workspaces" == one ]]; then
  require_secret SLACK_BOT_TOKEN
else
  require_secret SLACK_CLIENT_ID
  require_secret SLACK_CLIENT_SECRET
fi
require_secret SLACK_SIGNING_SECRET
require_secret ANTHROPIC_API_KEY

workdir="$(mktemp -d)"
trap 'rm -rf "$workdir"' EXIT
chmod 700 "$workdir"

put_parameter() {
  local name="$1" value="$2" file version
  if [[ "$(parameter_type "$name")" == String ]]; then
    aws ssm delete-parameter --region "$region" --name "${prefix}/${name}"
    echo "put-secrets: ${prefix}/${name} was a String parameter: deleted, put as SecureString"
  fi
  file="${workdir}/value"
  (umask 077 && printf '%s' "$value" >"$file")
  version="$(aws ssm put-parameter \
    --region "$region" \
    --name "${prefix}/${name}" \
    --type SecureString \
    --key-id "$key" \
    --overwrite \
    --value "file://${file}" \
    --query Version \
    --output text)"
  rm -f "$file"
  echo "put-secrets: ${prefix}/${name} (version ${version})"
}

# The parameter's type (String, SecureString), or None when there is none.
parameter_type() {
  aws ssm describe-parameters \
    --region "$region" \
    --parameter-filters "Key=Name,Option=Equals,Values=${prefix}/$1" \
    --query 'Parameters[0].Type' \
    --output text
}

parameter_exists() {
  [[ "$(parameter_type "$1")" != None ]]
}

if [[ "$workspaces" == one ]]; then
  put_parameter slack-bot-token "$SLACK_BOT_TOKEN"
else
  put_parameter slack-client-id "$SLACK_CLIENT_ID"
  put_parameter slack-client-secret "$SLACK_CLIENT_SECRET"
fi
put_parameter slack-signing-secret "$SLACK_SIGNING_SECRET"
put_parameter anthropic-api-key "$ANTHROPIC_API_KEY"
if [[ "$prices" == kroger ]]; then
  put_parameter kroger-client-id "$KROGER_CLIENT_ID"
  put_parameter kroger-client-secret "$KROGER_CLIENT_SECRET"
fi

if [[ -n "${CHECKPOINT_SIGNING_KEY:-}" ]]; then
  put_parameter checkpoint-signing-key "$CHECKPOINT_SIGNING_KEY"
elif [[ "$rotate_signing_key" == false ]] && parameter_exists checkpoint-signing-key; then
  # Kept, and put again as it is: a String one (an older version of this script) becomes
  # SecureString, and one encrypted under a key the stage no longer has (a stack removed and
  # deployed again makes a new key) is encrypted under the current one.
  kept="$(aws ssm get-parameter --region "$region" --name "${prefix}/checkpoint-signing-key" \
    --with-decryption --query Parameter.Value --output text)"
  put_parameter checkpoint-signing-key "$kept"
  echo "put-secrets: ${prefix}/checkpoint-signing-key kept (--rotate-signing-key to replace it;" \
    "waiting checkpoints signed with the old key are then refused)"
else
  put_parameter checkpoint-signing-key "$(openssl rand -hex 32)"
fi

echo "put-secrets: done for stage '${stage}' in ${region}"
