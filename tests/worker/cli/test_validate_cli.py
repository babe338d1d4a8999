"""``lookout validate`` reports broken SQL with its line and column before anything runs.

A folder of automations over the shop on DuckDB and on PostgreSQL: a DELETE, a
misspelt table, a misspelt column, a NOT IN trap, a typed check naming a
column that does not exist; every problem points into the YAML.
"""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml

from worker.cli.app import app

BROKEN = """\
name: {name}
source: {source}
goal: The shop's data holds.
timezone: America/New_York
checks:
  - name: deletes
    sql: DELETE FROM orders
    expect: == 0
  - name: misspelt table
    sql: |
      SELECT count(*)
      FROM order
    expect: == 0
  - name: misspelt column
    sql: |
      SELECT count(*) FROM orders
      WHERE amout < 0
    expect: == 0
  - name: not in
    sql: |
      SELECT count(*) FROM orders
      WHERE customer_id NOT IN (SELECT id FROM customers)
    expect: == 0
  - name: emails
    missing: {{table: customers, column: emial}}
  - name: diana
    missing:
      table: orders
      column: status
      filter: nmae = 'Diana'
  - name: fresh
    freshness: {{table: orders, column: amount, max_age: 1d}}
  - name: today
    sql: "SELECT count(*) FROM orders WHERE created_at > current_date"
    expect: == 0
  - name: pairs
    duplicates: {{table: pairs, columns: [a, bb]}}
"""


def lines_for(path: str) -> list[str]:
    shown_order = '"order"' if "duck" in path else "order"  # as each dialect writes it
    return [
        f"error: {path}:7:10: checks.0.sql: rejected (write): DELETE is not allowed in a "
        "read-only query",
        f"error: {path}:12:12: checks.1.sql: rejected (unknown-table): "
        f"{shown_order} is not a data set of this source (did you mean 'orders'?)",
        f"error: {path}:17:13: checks.2.sql: unknown column 'amout': not in orders (did you "
        "mean 'amount'?)",
        f"error: {path}:25:41: checks.4.missing.column: no column 'emial' in customers (did you "
        "mean 'email'?)",
        f"error: {path}:30:15: checks.5.missing.filter: unknown column 'nmae': not in orders "
        "(did you mean 'name'?)",
        f"error: {path}:32:40: checks.6.freshness.column: amount is DECIMAL(10,2), not a date or "
        "timestamp: freshness needs one"
        if "duck" in path
        else f"error: {path}:32:40: checks.6.freshness.column: amount is NUMERIC(10, 2), not a "
        "date or timestamp: freshness needs one",
        f"error: {path}:37:45: checks.8.duplicates.columns.1: no column 'bb' in pairs (did you "
        "mean 'b'?)",
    ]


def warnings_for(path: str) -> list[str]:
    return [
        f"warning: {path}:22:13: checks.3.sql: customer_id NOT IN (SELECT id FROM customers ...): "
        "id can be NULL, and while the subquery returns a NULL, NOT IN is true for no row and "
        "nothing is found; use NOT EXISTS (SELECT 1 FROM customers WHERE id = customer_id)",
        f"warning: {path}:34:10: checks.7.sql: CURRENT_DATE is read in UTC (sessions run in "
        "UTC), not in America/New_York, this automation's time zone; for its local time write "
        "(now() AT TIME ZONE 'America/New_York'), and ::date for its local date",
    ]


@pytest.fixture
def folder(tmp_path: Path, shop_duckdb_path: Path, shop_pg: str) -> Path:
    config = {
        "store_url": f"sqlite:///{tmp_path}/lookout.db",
        "cache_dir": str(tmp_path / "cache"),
        "sources": {
            "shop": {"type": "duckdb", "database": str(shop_duckdb_path)},
            "shop_pg": {"type": "sqlalchemy", "url": shop_pg},
            "gone": {"type": "sqlalchemy", "url": "postgresql://nobody@127.0.0.1:1/none"},
        },
    }
    (tmp_path / "lookout.yaml").write_text(yaml.safe_dump(config))
    autos = tmp_path / "automations"
    autos.mkdir()
    (autos / "duck.yaml").write_text(BROKEN.format(name="duck", source="shop"))
    (autos / "pg.yaml").write_text(BROKEN.format(name="pg", source="shop_pg"))
    return tmp_path


def validate(folder: Path, capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, list[str]]:
    code = app(
        ["--config", str(folder / "lookout.yaml"), "validate", str(folder / "automations"), *args],
        standalone_mode=False,
    )
    return code, capsys.readouterr().out.splitlines()


def test_validate_reports_every_query_problem_with_line_and_column(
    folder: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code, out = validate(folder, capsys)
    assert code == 2
    duck, pg = str(folder / "automations" / "duck.yaml"), str(folder / "automations" / "pg.yaml")
    assert out == [
        *lines_for(duck),
        *lines_for(pg),
        *warnings_for(duck),
        *warnings_for(pg),
        "0 automations valid in 0 files; 14 errors, 4 warnings",
    ]


def test_no_sources_checks_what_needs_no_catalog(
    folder: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code, out = validate(folder, capsys, "--no-sources")
    assert code == 2
    duck = str(folder / "automations" / "duck.yaml")
    assert out[0] == lines_for(duck)[0]  # the guard needs no source
    assert [line for line in out if line.startswith("error:")] == [
        lines_for(duck)[0],
        lines_for(str(folder / "automations" / "pg.yaml"))[0],
    ]
    # Without the catalog every column can be NULL: the NOT IN still warns.
    assert sum("NOT IN (SELECT id FROM customers" in line for line in out) == 2
    assert out[-1] == "0 automations valid in 0 files; 2 errors, 4 warnings"


def test_an_unreachable_source_is_one_error_at_its_field(
    folder: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    autos = folder / "automations"
    for file in autos.iterdir():
        file.unlink()
    (autos / "gone.yaml").write_text(
        "name: gone\nsource: gone\ngoal: g\n"
        "checks:\n  - {name: c, sql: SELECT count(*) FROM t, expect: == 1}\n"
    )
    code, out = validate(folder, capsys)
    assert code == 2
    assert len(out) == 2 and out[0].startswith(f"error: {autos / 'gone.yaml'}:2:9: source: ")
    assert out[0].endswith("; its checks were not checked against it (--no-sources skips this)")
    code, lines = validate(folder, capsys, "--no-sources")
    assert (code, lines) == (0, ["1 automation valid in 1 file; 0 errors, 0 warnings"])
