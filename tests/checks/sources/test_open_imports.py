"""Opening a DuckDB source starts its query process before SQLAlchemy or sqlglot is imported.

``lookout run`` opens the chosen automations' sources first so that the query
process starts up on the other core while this one imports the run path; that
only overlaps if opening imports neither (a fresh interpreter's ``sys.modules``).
"""

import os
import subprocess
import sys

import pytest

from tests.paths import ROOT

PROBE = """
import sys
from checks.settings.config import load_settings
from checks.sources import open_source

settings = load_settings("config/lookout.yaml")
source = open_source("flights", settings.sources["flights"], settings)
print("MODULES=" + ",".join(sorted({m.split(".")[0] for m in sys.modules})))
print("TABLES=" + ",".join(sorted(d.name for d in source.catalog())))
source.close()
"""


@pytest.mark.slow
def test_opening_a_duckdb_source_imports_neither_sqlalchemy_nor_sqlglot() -> None:
    env = {k: v for k, v in os.environ.items() if not k.startswith("LOOKOUT_")}
    env["LOOKOUT_CACHE_DIR"] = str(ROOT / ".lookout" / "cache")
    out = subprocess.run(
        [sys.executable, "-c", PROBE], cwd=ROOT, capture_output=True, text=True, env=env
    )
    assert out.returncode == 0, out.stderr
    lines = dict(line.split("=", 1) for line in out.stdout.splitlines() if "=" in line)
    modules = set(lines["MODULES"].split(","))
    assert modules & {"sqlalchemy", "sqlglot"} == set()
    # the source did open: its query process read the catalog
    assert lines["TABLES"] == "airlines,airports,flights,planes,weather"
