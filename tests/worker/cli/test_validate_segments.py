"""``lookout validate`` on ``by:``: an unknown column (with the closest name), kinds without by."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml

from worker.cli.app import app

SEGMENTED = """\
name: segments
source: shop
goal: The shop's data holds per status.
checks:
  - name: per status
    missing: {table: orders, column: created_at, by: [stauts]}
  - name: per name and status
    missing:
      table: orders
      column: created_at
      by: [name, Status]
  - name: columns per status
    schema: {table: orders, columns: {order_id: integer}, by: [status]}
  - name: twice
    row_count: {table: orders, by: [name, NAME]}
  - name: mean per status
    aggregate: {table: orders, column: order_id, function: avg, by: [status]}
"""


def test_validate_names_an_unknown_by_column_and_a_kind_without_by(
    tmp_path: Path, shop_duckdb_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    config = {
        "store_url": f"sqlite:///{tmp_path}/lookout.db",
        "cache_dir": str(tmp_path / "cache"),
        "sources": {"shop": {"type": "duckdb", "database": str(shop_duckdb_path)}},
    }
    (tmp_path / "lookout.yaml").write_text(yaml.safe_dump(config))
    path = tmp_path / "segments.yaml"
    path.write_text(SEGMENTED)
    code = app(
        ["--config", str(tmp_path / "lookout.yaml"), "validate", str(path)], standalone_mode=False
    )
    out = capsys.readouterr().out.splitlines()
    assert code == 2
    assert out == [
        f"error: {path}:13:63: checks.2.schema.by: schema does not take by: it is about the table"
        " as a whole, not its rows",
        f"error: {path}:15:36: checks.3.row_count.by: by: lists a column twice",
        f"error: {path}:17:69: checks.4.aggregate.by: aggregate does not take by: it is not"
        " supported yet for aggregate",
        "0 automations valid in 0 files; 3 errors, 0 warnings",
    ]
    path.write_text(SEGMENTED.split("  - name: columns per status")[0])
    code = app(
        ["--config", str(tmp_path / "lookout.yaml"), "validate", str(path)], standalone_mode=False
    )
    out = capsys.readouterr().out.splitlines()
    assert code == 2
    assert out == [
        f"error: {path}:6:55: checks.0.missing.by.0: no column 'stauts' in orders (did you mean"
        " 'status'?)",
        "0 automations valid in 0 files; 1 error, 0 warnings",
    ]
