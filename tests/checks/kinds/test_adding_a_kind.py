"""A kind is one module and one registration: a ``not_blank`` kind, defined here, end to end.

The kind below touches no other module: registered, it loads from YAML (with
its keys' errors at their line and column), compiles, runs on real DuckDB, is
judged, worded, validated against the catalog, and its definition loads back
as the same automation.
"""

from __future__ import annotations

import re
import time
from collections.abc import Iterator
from pathlib import Path
from typing import ClassVar

import duckdb
import pytest
from sqlglot import exp

from checks.automation.loader import load_automations
from checks.automation.model import Automation
from checks.declared.check import run_checks
from checks.declared.validation import validate_checks
from checks.declared.wording import describe_value
from checks.kinds.base import Compiled, Counts, Judged, Kind, Loc, OneColumn, Scope, missing_parts
from checks.kinds.in_words import metric, rows
from checks.kinds.registry import KINDS, register
from checks.kinds.row_count import in_scope
from checks.kinds.sql_terms import count_when
from checks.report import CheckOutcome, CheckResult
from checks.settings.limits import Limits
from checks.sources import DuckDBQuerySource
from tests.checks.declared.shop import CLOCK
from tests.paths import ROOT


class NotBlank(OneColumn):
    """``not_blank``: rows whose text column is empty or only spaces.

    NULL rule: a NULL is not blank (``missing`` counts it).
    """

    KIND: ClassVar[str] = "not_blank"
    COMPARED: ClassVar[str] = "blank"

    def sql(self, scope: Scope) -> Compiled:
        column = scope.column(self.column)
        ref = scope.col(column.name)
        blank = exp.EQ(this=exp.Trim(this=ref.copy()), expression=exp.Literal.string(""))
        counts = scope.scoped(in_scope(), exp.alias_(count_when(blank), "blank"))
        return scope.done(counts, scope.row_sample(blank, column.name), column)

    def judged(self, counts: Counts) -> Judged:
        return counts.judge_compared(self, sample_rows=counts.count("blank"))

    @classmethod
    def words(cls, result: CheckResult) -> str:
        return f"{metric(result, 'blank'):,} blank in {rows(metric(result, 'rows_in_scope'))}"

    def column_problems(self, column_type: str, have: str) -> list[tuple[Loc, str]]:
        if have == "text":
            return []
        return [(("column",), f"{self.column} is {column_type}: not_blank needs a text column")]


@pytest.fixture
def not_blank() -> Iterator[type[Kind]]:
    """``not_blank`` registered for one test."""
    register(NotBlank)
    yield NotBlank
    del KINDS["not_blank"]


@pytest.fixture
def people(tmp_path: Path) -> DuckDBQuerySource:
    path = tmp_path / "people.duckdb"
    with duckdb.connect(str(path)) as conn:
        conn.execute("CREATE TABLE people (id INTEGER, name VARCHAR, age INTEGER)")
        conn.execute(
            "INSERT INTO people VALUES (1, 'Ann', 30), (2, '', 41), (3, '  ', 25),"
            " (4, NULL, 52), (5, 'Bo', 19)"
        )
    return DuckDBQuerySource("people", path, Limits())


YAML = """\
name: people
source: people
goal: Every name is written.
checks:
  - name: names
    not_blank: {table: people, column: name}
"""


def test_a_bad_key_of_the_new_kind_is_an_error_at_its_line_and_column(
    tmp_path: Path, not_blank: type[Kind]
) -> None:
    path = tmp_path / "a.yaml"
    path.write_text(YAML.replace("column: name}", "column: name, colour: red}"))
    errors = [str(e).replace(f"{path}:", "") for e in load_automations(path).errors]
    assert errors == [
        "6:46: checks.0.not_blank.colour: unknown field 'colour' (did you mean 'column'?)"
    ]


def test_an_unregistered_kind_is_an_unknown_field(tmp_path: Path) -> None:
    path = tmp_path / "a.yaml"
    path.write_text(YAML)
    errors = [str(e).replace(f"{path}:", "") for e in load_automations(path).errors]
    assert errors == ["6:5: checks.0.not_blank: unknown field 'not_blank'"]


def test_the_new_kind_runs_is_judged_worded_and_validated(
    tmp_path: Path, not_blank: type[Kind], people: DuckDBQuerySource
) -> None:
    path = tmp_path / "a.yaml"
    path.write_text(YAML)
    loaded = load_automations(path, known_sources=["people"])
    assert loaded.errors == []
    (automation,) = loaded.automations
    assert (automation.checks[0].kind, automation.checks[0].expectation.text) == (
        "not_blank",
        "== 0",
    )
    results, evidence = run_checks(
        automation, people, people.limits, deadline=time.monotonic() + 60, clock=lambda: CLOCK
    )
    (result,) = results
    assert (result.outcome, result.value) == (CheckOutcome.FAILED, 2)
    assert result.metrics == {"rows_in_scope": 5, "blank": 2, "compared": "blank"}
    sample = {e.id: e for e in evidence}[result.sample_id or ""]
    assert sample.rows == [[2, "", 41], [3, "  ", 25]]  # ordered by the column first
    assert describe_value(result) == "2 blank in 5 rows"
    found = validate_checks(automation, loaded, source=people, dialect="duckdb")
    assert (found.errors, found.warnings) == ([], [])


def test_the_new_kind_validates_its_column_and_names(
    tmp_path: Path, not_blank: type[Kind], people: DuckDBQuerySource
) -> None:
    path = tmp_path / "a.yaml"
    path.write_text(
        YAML.replace("column: name}", "column: age}")
        + "  - name: typo\n    not_blank: {table: people, column: nme}\n"
    )
    loaded = load_automations(path, known_sources=["people"])
    found = validate_checks(loaded.automations[0], loaded, source=people, dialect="duckdb")
    assert [(e.line, e.column, e.field, e.message) for e in found.errors] == [
        (6, 40, "checks.0.not_blank.column", "age is INTEGER: not_blank needs a text column"),
        (
            8,
            40,
            "checks.1.not_blank.column",
            "no column 'nme' in people (did you mean 'name'?)",
        ),
    ]


def test_its_definition_loads_back_as_the_same_automation(
    tmp_path: Path, not_blank: type[Kind]
) -> None:
    path = tmp_path / "a.yaml"
    path.write_text(YAML.replace("column: name}", 'column: name, filter: "id > 1"}'))
    (automation,) = load_automations(path).automations
    definition = automation.definition()
    assert definition["checks"] == [
        {
            "name": "names",
            "expect": "== 0",
            "not_blank": {"table": "people", "filter": "id > 1", "column": "name"},
        }
    ]
    again = Automation.model_validate({**definition, "path": automation.path, "line": 1})
    assert again == automation


def test_every_registered_kind_implements_every_part() -> None:
    assert {key: missing_parts(kind) for key, kind in KINDS.items()} == {key: [] for key in KINDS}


def test_a_kind_that_leaves_a_part_out_is_found() -> None:
    class Wordless(OneColumn):
        KIND: ClassVar[str] = "wordless"

        def sql(self, scope: Scope) -> Compiled:
            raise NotImplementedError

        def judged(self, counts: Counts) -> Judged:
            raise NotImplementedError

        def column_problems(self, column_type: str, have: str) -> list[tuple[Loc, str]]:
            return []

    assert missing_parts(Wordless) == ["words"]


def test_every_registered_kind_has_its_row_in_the_readme_or_docs() -> None:
    guide = ROOT / "docs" / "adding-a-check-kind.md"  # its example row is not a kind's row
    pages = [ROOT / "README.md", *(p for p in sorted((ROOT / "docs").glob("*.md")) if p != guide)]
    text = "\n".join(page.read_text(encoding="utf-8") for page in pages)
    assert [key for key in KINDS if f"\n| `{key}` |" not in text] == []


def test_the_guide_shows_the_missing_kind_and_its_registration_as_they_are() -> None:
    guide = (ROOT / "docs" / "adding-a-check-kind.md").read_text(encoding="utf-8")
    module = (ROOT / "checks" / "kinds" / "missing.py").read_text(encoding="utf-8")
    registry = (ROOT / "checks" / "kinds" / "registry.py").read_text(encoding="utf-8")
    without_imports = re.sub(r"from __future__.*?\n(?=class )", "", module, flags=re.S)
    shown, registration = re.findall(r"```python\n(.*?)```", guide, re.S)
    one_blank_line = re.compile(r"\n{3,}")
    assert one_blank_line.sub("\n\n", shown) == one_blank_line.sub("\n\n", without_imports)
    assert registration in registry
