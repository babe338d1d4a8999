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
.PHONY: all help demo install dev test test-fast browser lint format typecheck bench clean

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

lint: dev ## ruff check and format check
	$(BIN)/ruff check .
	$(BIN)/ruff format --check .

format: dev ## apply ruff's formatting and fixes
	$(BIN)/ruff format .
	$(BIN)/ruff check --fix .

typecheck: dev ## mypy over the packages
	$(BIN)/mypy checks worker

clean: ## remove the venv and local state
	rm -rf $(VENV) .lookout .pytest_cache .ruff_cache .mypy_cache
