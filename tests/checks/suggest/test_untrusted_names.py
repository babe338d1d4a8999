"""Names and values from the data, however written: a file that loads as written and runs Clear."""

from __future__ import annotations

import datetime as dt
from pathlib import Path

import duckdb
import yaml

from checks.automation.loader import load_automations
from checks.report import Finding
from checks.run import SourcePool, run_automation
from checks.settings.config import Settings
from checks.settings.sources import DuckDBSource
from checks.suggest.source_pass import suggest_source
from checks.suggest.yaml_writer import file_name, render

VALUES = ["'; DROP TABLE x; --", "#x\nnew: y", "yes", "null", "- [a]"]


def test_odd_names_and_values_are_quoted_and_their_checks_pass(tmp_path: Path) -> None:
    path = tmp_path / "odd.duckdb"
    with duckdb.connect(str(path)) as db:
        db.execute('CREATE TABLE "order items # 1" ("a""b # c\nd" VARCHAR, "n: 1" INTEGER)')
        db.executemany(
            'INSERT INTO "order items # 1" VALUES (?, ?)',
            [(VALUES[i % 5], i) for i in range(50)],
        )
    settings = Settings(
        cache_dir=str(tmp_path / "cache"),
        sources={"odd": DuckDBSource(type="duckdb", database=str(path))},
    )
    folder = tmp_path / "automations"
    folder.mkdir()
    with SourcePool(settings) as pool:
        (table,) = suggest_source(pool.get("odd"), now=dt.datetime.now(dt.UTC)).tables
        text = render("odd", table.profile.name, table.suggestions, ["odd\nheader"])
        (folder / file_name("odd", table.profile.name)).write_text(text, encoding="utf-8")
        assert file_name("odd", table.profile.name) == "odd-order-items-1-suggested.yaml"
        comments = [line for line in text.splitlines() if line.lstrip().startswith("#")]
        assert "# odd header" in comments
        assert '  # a"b # c d: 50 distinct values in 50 rows, no NULL, on' not in comments
        data = yaml.safe_load(text)
        accepted = next(c for c in data["checks"] if "accepted_values" in c)
        assert accepted == {
            "name": "a_b _ c_d values",
            "accepted_values": {
                "table": "order items # 1",
                "column": 'a"b # c\nd',
                "values": sorted(VALUES),
            },
        }
        loaded = load_automations(folder, known_sources={"odd"})
        assert loaded.errors == []
        (automation,) = loaded.automations
        report = run_automation(automation, settings, pool)
    assert [(c.name, str(c.outcome)) for c in report.checks] == [
        ("columns and types", "passed"),
        ("rows present", "passed"),
        ("a_b _ c_d present", "passed"),
        ("n_ 1 present", "passed"),
        ("n_ 1 unique", "passed"),
        ("a_b _ c_d values", "passed"),
    ]
    assert report.finding == Finding.CLEAR
