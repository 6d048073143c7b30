# Every target sets itself up: a fresh machine needs only python3 (>= 3.11) and make.
PYTHON ?= python3
VENV   ?= .venv
BIN    := $(VENV)/bin

.PHONY: run test lint bench clean

$(BIN)/.installed: pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(BIN)/pip install --quiet --upgrade pip
	$(BIN)/pip install --quiet -e '.[dev]'
	touch $@

## run: the weekly shop in this terminal (offline shopper unless ANTHROPIC_API_KEY is set)
run: $(BIN)/.installed
	$(BIN)/weekly-shop $(ARGS)

## lint: ruff and mypy (strict on workflow/)
lint: $(BIN)/.installed
	$(BIN)/ruff check .
	$(BIN)/ruff format --check .
	$(BIN)/mypy

## test: lint, then the whole test suite
test: lint
	$(BIN)/pytest

## bench: S3 requests, checkpoint bytes and resume time, against baselines in the same run
bench: $(BIN)/.installed
	$(BIN)/python -m bench.resume

clean:
	rm -rf $(VENV) .pytest_cache .mypy_cache .ruff_cache
