"""Data in a CI run's output never becomes a GitHub Actions workflow command.

``lookout run --format github`` writes its text reports between
``::stop-commands::TOKEN`` and ``::TOKEN::``; a data value is printed on one
line (``one_line``); no line either console writes starts with ``::``
(``defuse_commands``); a configuration error's names are escaped.
"""

from __future__ import annotations

import io
import re
from pathlib import Path

import duckdb
from junitparser import JUnitXml

from checks.errors import ConfigError
from tests.cli_support import run_lookout
from worker.cli.safe_text import SafeConsole, defuse_commands, one_line

OWNED = "x\n::error file=README.md,line=1::owned by data"


def _config(tmp_path: Path) -> list[str]:
    with duckdb.connect(str(tmp_path / "d.duckdb")) as con:
        con.execute("CREATE TABLE s (seg VARCHAR)")
        con.execute("INSERT INTO s VALUES (?)", [OWNED])
    (tmp_path / "automations").mkdir()
    (tmp_path / "automations" / "s.yaml").write_text(
        "name: s\nsource: d\nchecks:\n"
        "  - name: per seg\n    row_count: {table: s, by: seg}\n    expect: '> 1'\n",
        encoding="utf-8",
    )
    (tmp_path / "lookout.yaml").write_text(
        f"store_url: sqlite:///{tmp_path}/lookout.db\nautomations_dir: automations\n"
        f"sources:\n  d:\n    type: duckdb\n    database: {tmp_path}/d.duckdb\n",
        encoding="utf-8",
    )
    return ["--config", str(tmp_path / "lookout.yaml")]


def test_a_segment_value_cannot_annotate_and_the_reports_are_between_stopped_commands(
    tmp_path: Path,
) -> None:
    config = _config(tmp_path)
    args = [*config, "run", "s", "--format", "github", "--junit", "out.xml"]
    proc = run_lookout(args, {"PATH": "/usr/bin:/bin", "COLUMNS": "100"}, cwd=tmp_path)
    assert proc.returncode == 1, proc.stderr
    lines = proc.stdout.splitlines()
    commands = [line for line in lines if line.lstrip().startswith("::")]
    stop = re.fullmatch(r"::stop-commands::([0-9a-f]{32})", commands[0])
    assert stop is not None and lines[0] == commands[0]
    assert commands[1:] == [
        f"::{stop.group(1)}::",
        "::error file=automations/s.yaml,line=4,title=s%3A per seg::failed: 1 of 1 segment by "
        "seg failed: `x\\x0a::error file=README.md,line=1::owned by data`: 1 row in scope "
        "(expected > 1)",
    ]
    assert lines.index(f"::{stop.group(1)}::") == len(lines) - 2  # the annotation after it
    assert lines[lines.index("  per seg: failing segments by seg") :][:6] == [
        "  per seg: failing segments by seg",
        "      seg                                             measured",
        "      x␊::error file=README.md,line=1::owned by data  1 row in scope",
        "  [C1] 1 row",
        "      rows_in_scope  segment_1",
        "      1              x␊::error file=README.md,line=1::owned by data",
    ]
    assert proc.stderr.splitlines()[-1] == "junit: 1 test suite written to out.xml"
    again = run_lookout([*config, "run", "s"], {"PATH": "/usr/bin:/bin"}, cwd=tmp_path)
    assert "      1              x␊::error file=README.md,line=1::owned by data" in again.stdout
    assert not [line for line in again.stdout.splitlines() if line.lstrip().startswith("::")]


def test_the_junit_line_counts_the_configuration_suite_too(tmp_path: Path) -> None:
    config = _config(tmp_path)
    (tmp_path / "automations" / "bad.yaml").write_text("name: bad\nsource: d\nchecks: 3\n")
    args = [*config, "run", "--all", "--junit", "out.xml"]
    proc = run_lookout(args, {"PATH": "/usr/bin:/bin"}, cwd=tmp_path)
    assert proc.returncode == 2, proc.stderr
    assert [s.name for s in JUnitXml.fromfile(str(tmp_path / "out.xml"))] == ["configuration", "s"]
    assert proc.stderr.splitlines()[-1] == "junit: 2 test suites written to out.xml"


def test_no_line_a_console_writes_is_a_workflow_command() -> None:
    assert defuse_commands("a\n::error::x\n  ::warning::y\r::notice::z") == (
        "a\n∶:error::x\n  ∶:warning::y\r∶:notice::z"
    )
    assert defuse_commands("::stop-commands::t") == "∶:stop-commands::t"
    assert defuse_commands("row ##[error]pwn and a::b ok") == "row ⌗#[error]pwn and a::b ok"
    assert one_line("a\nb\tc\x1bd") == "a␊b␉c␛d"
    file = io.StringIO()
    console = SafeConsole(file=file, width=40)
    console.print("said\n::error::by a string")
    console.print("aaaa bbbb cccc dddd eeee ffff gggg ::error::wrapped", soft_wrap=False)
    assert file.getvalue() == (
        "said\n∶:error::by a string\naaaa bbbb cccc dddd eeee ffff gggg \n∶:error::wrapped\n"
    )


def test_a_name_with_a_newline_in_a_configuration_error_stays_on_its_line(tmp_path: Path) -> None:
    error = ConfigError("no table 'a\n::error::b'", path="a.yaml", line=3, field="t.a\n::error::c")
    assert error.location_message() == "a.yaml:3: t.a\\n::error::c: no table 'a\\n::error::b'"
    (tmp_path / "lookout.yaml").write_text(
        "sources:\n  d:\n    type: duckdb\n    tables:\n"
        '      "a\\n::error file=a::pwn": {path: x.csv, format: nope}\n',
        encoding="utf-8",
    )
    config = ["--config", str(tmp_path / "lookout.yaml")]
    proc = run_lookout([*config, "validate"], {"PATH": "/usr/bin:/bin"}, cwd=tmp_path)
    assert proc.returncode == 2
    assert proc.stderr == (
        f"error: {tmp_path}/lookout.yaml:5:55: sources.d.tables.a\\n::error file=a::pwn.format: "
        "Input should be 'parquet', 'csv', 'json', 'delta' or 'iceberg'\n"
    )


def test_a_warned_checks_warning_is_said_once(tmp_path: Path) -> None:
    config = _config(tmp_path)
    (tmp_path / "automations" / "w.yaml").write_text(
        "name: w\nsource: d\nchecks:\n  - name: blank segs\n"
        "    missing: {table: s, column: seg}\n    warn: '<= 1%'\n    expect: '<= 60%'\n",
        encoding="utf-8",
    )
    with duckdb.connect(str(tmp_path / "d.duckdb")) as con:
        con.execute("INSERT INTO s VALUES (NULL)")
    args = [*config, "run", "w", "--format", "github", "--junit", "out.xml"]
    proc = run_lookout(args, {"PATH": "/usr/bin:/bin"}, cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    warned = (
        "warned: 1 of 2 rows missing (50.00 %); beyond the warning level <= 1% (expected <= 60%)"
    )
    assert proc.stdout.splitlines()[-1] == (
        "::warning file=automations/w.yaml,line=4,title=w%3A blank segs::"
        + warned.replace("%", "%25")
    )
    (suite,) = JUnitXml.fromfile(str(tmp_path / "out.xml"))
    (case,) = suite
    assert case.system_out.splitlines()[:2] == ["automations/w.yaml:4", warned]
