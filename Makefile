# Every target sets itself up: a fresh machine needs python3 (>= 3.11; `make test` and `make lint`
# need 3.11 itself: packaging compiles the zip's bytecode for the Lambda runtime's Python, 3.11,
# infra/bytecode.py), make, Node.js with npm (for the offline serverless package: its test, and
# the template linters in make lint) and apt (Chromium for the browser test).
PYTHON ?= python3
VENV   ?= .venv
BIN    := $(VENV)/bin

CHROMIUM ?= /usr/bin/chromium
SUDO     := $(shell [ "$$(id -u)" = 0 ] || echo sudo)

.PHONY: run dev console test lint bench load lock clean

$(BIN)/.installed: pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(BIN)/pip install --quiet --upgrade pip
	$(BIN)/pip install --quiet -e '.[dev,sandbox]'
	touch $@

## run: the sandbox: the real bot with Slack, Lambda and S3 played on 127.0.0.1 (PORT=8080;
## ARGS='--workspaces many' for two workspaces, each added with Add to Slack; ARGS='--model stand-in'
## for a stand-in of Claude's API that streams its baskets, no key needed)
run: $(BIN)/.installed
	$(BIN)/weekly-shop sandbox --port $(or $(PORT),8080) $(ARGS)

## dev: the real bot on your own Slack workspace over Socket Mode, no public URL, no AWS account
## (tokens in .env: README, "On your own Slack"; ARGS='--store s3://bucket/prefix' for real S3)
dev: $(BIN)/.installed
	$(BIN)/weekly-shop dev $(ARGS)

## console: the weekly shop in this terminal
console: $(BIN)/.installed
	$(BIN)/weekly-shop $(ARGS)

# The browser test drives Debian's Chromium (no browser download).
$(CHROMIUM):
	$(SUDO) apt-get update -qq
	$(SUDO) apt-get install -y -qq chromium

# The template linters, in their own venv: checkov pins boto3 and packaging below the project's.
$(VENV)/iac/bin/.installed: infra/requirements-iac.txt $(BIN)/.installed
	$(PYTHON) -m venv $(VENV)/iac
	$(VENV)/iac/bin/pip install --quiet --upgrade pip
	$(VENV)/iac/bin/pip install --quiet -r infra/requirements-iac.txt
	touch $@

# The Serverless Framework (osls) and its plugin, as package-lock.json pins them.
node_modules/osls/package.json:
	npm ci --no-audit --no-fund

## lint: ruff, mypy (strict), the import contracts (lint-imports: which way imports point), the
## Slack app manifests (as infra/manifest.py writes them, valid against Slack's schema, true to
## the code's calls and listeners), then cfn-lint (serverless rules) and checkov over the
## template `serverless package` writes, offline
## (infra/lint_template.py; what they find that is noise, and why: infra/lint-noise.toml)
lint: $(BIN)/.installed $(VENV)/iac/bin/.installed node_modules/osls/package.json
	$(BIN)/ruff check .
	$(BIN)/ruff format --check .
	$(BIN)/mypy
	$(BIN)/lint-imports
	$(BIN)/python infra/manifest.py --check
	$(BIN)/python infra/lint_template.py

## test: lint, then the whole test suite (browser test included)
test: lint $(CHROMIUM)
	$(BIN)/pytest

## bench: ack latency, cold start, fresh-process resume, S3 requests, checkpoint bytes, double
## answers: one table, each figure against a baseline from the same run
bench: $(BIN)/.installed
	$(BIN)/python -m bench

## load: 50 concurrent clicks on one basket, then 200 concurrent sessions; PASS/FAIL table
load: $(BIN)/.installed
	$(BIN)/python -m bench.load

## lock: infra/requirements-lambda.txt, exact versions and hashes of what ships to Lambda,
## resolved from pyproject.toml for the runtime (CPython 3.11 on arm64)
lock: $(BIN)/.installed
	$(BIN)/uv pip compile pyproject.toml --python-version 3.11 \
	  --python-platform aarch64-manylinux2014 --generate-hashes --quiet \
	  --custom-compile-command "make lock" -o infra/requirements-lambda.txt
	sed -i '1i # What ships to Lambda (CPython 3.11, arm64): every package pinned, with hashes.' \
	  infra/requirements-lambda.txt

clean:
	rm -rf $(VENV) .pytest_cache .mypy_cache .ruff_cache .import_linter_cache
