# RareIndex front door. `make help` lists the targets.
# Only Python 3.11+ and make are needed: the virtualenv is created on first use.

PYTHON ?= python3
VENV   ?= .venv
BIN    := $(VENV)/bin
TEST_WORKERS ?= 3
# make test: the suite's files run on TEST_WORKERS processes (most of their time is spent waiting
# on servers and subprocesses), slowest files first (tests/conftest.py's SLOW_FILES_FIRST, kept in
# that order by --no-loadscope-reorder), then the tests marked `serial` (gaps and speeds measured
# at the host) run alone, so a busy neighbour cannot shorten a gap they measure.
# The SDK, its parsing kits (adapters) and the fake web are distributions of their own beside the
# root (rareindex + workers); the stamp is the checksum of all four pyproject files, so editing any of them reinstalls.
PYPROJECTS := pyproject.toml packages/connectors/pyproject.toml packages/adapters/pyproject.toml \
  packages/fakeweb/pyproject.toml
STAMP  := $(VENV)/.installed-$(shell cat $(PYPROJECTS) | cksum | cut -d' ' -f1)

.DEFAULT_GOAL := help
.PHONY: help demo test bench golden lint typecheck unit integration services install clean

help: ## List the targets
	@grep -E '^[a-z-]+:.*## ' $(MAKEFILE_LIST) | awk -F':.*## ' '{printf "  make %-12s %s\n", $$1, $$2}'

install: $(STAMP) ## Create .venv; install RareIndex, the SDK, its adapters and the fake web (editable) and dev tools

$(STAMP): $(PYPROJECTS)
	@$(PYTHON) -c 'import sys; sys.exit(0 if sys.version_info >= (3, 11) else 1)' || \
	  { echo "error: RareIndex needs Python 3.11+ ($(PYTHON) is $$($(PYTHON) --version 2>&1)); run make PYTHON=python3.11"; exit 1; }
	@test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --disable-pip-version-check --upgrade pip
	$(BIN)/python -m pip install --quiet --disable-pip-version-check \
	  -e packages/connectors -e packages/adapters -e packages/fakeweb -e '.[dev]'
	@rm -f $(VENV)/.installed-* && touch $@

demo: $(STAMP) ## Set up, then run the demo end to end on embedded SQLite and print what it holds
	$(BIN)/rareindex demo

# Bytecode caches are written even where the environment turns them off (PYTHONDONTWRITEBYTECODE):
# without them every pytest process rewrites the asserts of all test modules again and every CLI
# subprocess compiles the index from source (about 13 CPU-seconds a pytest process on 2 vCPUs).
test: $(STAMP) services lint typecheck ## Set up, start PostgreSQL/Redis if down, lint, type-check, run every test
	env -u PYTHONDONTWRITEBYTECODE $(BIN)/python -m pytest -n $(TEST_WORKERS) --dist loadfile --no-loadscope-reorder \
	  -m "not serial" --durations=15
	env -u PYTHONDONTWRITEBYTECODE $(BIN)/python -m pytest -m serial --durations=5

services: $(STAMP) ## Start PostgreSQL and Redis when down, install Debian's chromium when missing (root)
	$(BIN)/python scripts/services.py

lint: $(STAMP) ## ruff lint and format check
	$(BIN)/ruff check .
	$(BIN)/ruff format --check .

typecheck: $(STAMP) ## mypy: strict on the SDK and the fake web, checked elsewhere
	$(BIN)/mypy packages/connectors/rareindex_connectors packages/adapters/rareindex_adapters \
	  packages/fakeweb/rareindex_fakeweb \
	  packages/rareindex/rareindex workers

bench: $(STAMP) ## Every benchmark against its peer (not part of make test), ratios from one run; QUICK=1: ~1 min each
	$(BIN)/python -m pip install --quiet --disable-pip-version-check -e '.[bench]'
	$(BIN)/python -m bench $(if $(QUICK),--quick)

golden: $(STAMP) ## Re-record each connector's fixtures and golden output from the fake web
	$(BIN)/python -m tests.contract.recording

unit: $(STAMP) ## Only the tests that need no services
	$(BIN)/python -m pytest tests/unit

integration: $(STAMP) services ## Only the tests against real PostgreSQL and Redis
	$(BIN)/python -m pytest tests/integration

clean: ## Remove the virtualenv, the demo database and caches
	rm -rf $(VENV) rareindex.db rareindex.db-* data .mypy_cache .pytest_cache .ruff_cache
