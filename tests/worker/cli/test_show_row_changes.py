"""``lookout show`` says which rows are new and gone since the last run, as plain text."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import duckdb
import pytest
import yaml

from tests.cli_support import run_lookout

AUTOMATION = """\
name: small-planes
source: fleet
goal: Every plane seats more than 100.
checks:
  - name: small planes
    sql: SELECT tail, seats FROM planes WHERE seats <= 100 ORDER BY tail
    expect: empty
"""


def lookout(config: Path, *args: str) -> subprocess.CompletedProcess[str]:
    """``lookout --config CONFIG ARGS`` in this process, as a child with only these variables."""
    return run_lookout(
        ["--config", str(config), *args], {"COLUMNS": "200", "PATH": "/usr/bin:/bin"}
    )


@pytest.mark.slow
def test_show_prints_the_row_change_line(tmp_path: Path) -> None:
    db = tmp_path / "fleet.duckdb"
    (tmp_path / "automations").mkdir()
    (tmp_path / "automations" / "small.yaml").write_text(AUTOMATION, encoding="utf-8")
    config = tmp_path / "lookout.yaml"
    config.write_text(
        yaml.safe_dump(
            {
                "store_url": f"sqlite:///{tmp_path / 'lookout.db'}",
                "cache_dir": str(tmp_path / "cache"),
                "automations_dir": str(tmp_path / "automations"),
                "sources": {"fleet": {"type": "duckdb", "database": str(db)}},
            }
        ),
        encoding="utf-8",
    )
    ids = []
    for rows in (
        [("N100AA", 50), ("N200AA", 60)],
        [("N200AA", 60), ("N724MQ", 70), ("[red]N725MQ[/red]", 80)],
    ):
        with duckdb.connect(str(db)) as conn:
            conn.execute("CREATE OR REPLACE TABLE planes (tail VARCHAR, seats INTEGER)")
            conn.executemany("INSERT INTO planes VALUES (?, ?)", rows)
        ran = lookout(config, "run", "small-planes", "--json")
        assert ran.returncode == 1, ran.stdout + ran.stderr  # needs attention
        ids.append(json.loads(ran.stdout)["run_id"])
    shown = lookout(config, "show", str(ids[1]))
    assert shown.returncode == 0, shown.stdout + shown.stderr
    line = f"C1: 2 new rows since run {ids[0]} (N724MQ, [red]N725MQ[/red]); 1 gone (N100AA)"
    assert line in shown.stdout.splitlines()
    first = lookout(config, "show", str(ids[0]))
    assert "since run" not in first.stdout  # a first run has nothing to compare with
    # --json keeps evidence_diff's shape and its own line ("the last run": the run is a field)
    as_json = lookout(config, "show", str(ids[1]), "--json")
    assert as_json.returncode == 0, as_json.stderr
    [change] = json.loads(as_json.stdout)["second_opinion"]["evidence_diff"]["rows"]
    assert sorted(change) == [
        "appeared",
        "appeared_rows",
        "before",
        "columns",
        "id",
        "line",
        "now",
        "previous_id",
        "previous_run_id",
        "vanished",
        "vanished_rows",
    ]
    assert (change["previous_run_id"], change["line"]) == (
        ids[0],
        "2 new rows since the last run (N724MQ, [red]N725MQ[/red]); 1 gone (N100AA)",
    )
