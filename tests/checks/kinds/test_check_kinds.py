"""Typed checks as written in YAML: their keys, defaults, and errors at the line they are on."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import pytest

from checks.automation.check import Check
from checks.automation.loader import load_automations
from checks.automation.model import Automation
from checks.fields.yaml_places import Place, place
from checks.fields.yaml_tree import YamlTree

BASE = "name: a\nsource: flights\ngoal: g\nchecks:\n"


def load(tmp_path: Path, checks: str) -> tuple[list[str], object]:
    path = tmp_path / "a.yaml"
    path.write_text(BASE + checks)
    result = load_automations(path, known_sources=["flights"])
    return [str(e).replace(f"{path}:", "") for e in result.errors], result


def test_every_kind_loads_with_its_default_expectation(tmp_path: Path) -> None:
    errors, result = load(
        tmp_path,
        """\
  - {name: rows, row_count: {table: orders}}
  - {name: emails, missing: {table: customers, column: email}}
  - {name: ids, duplicates: {table: orders, columns: [order_id]}}
  - {name: statuses, accepted_values: {table: orders, column: status, values: [paid, refunded]}}
  - {name: customers, relationships: {table: orders, column: customer_id, to: customers.id}}
  - {name: fresh, freshness: {table: loads, column: loaded_at, max_age: 3h}}
  - {name: amounts, range: {table: orders, column: amount, min: 0, max: 100000}}
  - {name: columns, schema: {table: orders, columns: {order_id: integer, amount: decimal}}}
  - {name: raw, sql: SELECT 1, expect: == 1, allow_empty: true}
""",
    )
    assert errors == []
    checks = result.automations[0].checks  # type: ignore[attr-defined]
    assert [(c.kind, c.expectation.text) for c in checks] == [
        ("row_count", "> 0"),
        ("missing", "== 0"),
        ("duplicates", "== 0"),
        ("accepted_values", "== 0"),
        ("relationships", "== 0"),
        ("freshness", "<= 3h"),
        ("range", "== 0"),
        ("schema", "== 0"),
        ("sql", "== 1"),
    ]
    assert checks[3].spec.null == "violation" and checks[2].spec.nulls == "distinct"
    assert (checks[4].spec.to_table, checks[4].spec.to_column) == ("customers", "id")
    assert [c.allow_empty for c in checks] == [False] * 8 + [True]
    definition = result.automations[0].definition()  # type: ignore[attr-defined]
    assert definition["checks"][1] == {
        "name": "emails",
        "expect": "== 0",
        "missing": {"table": "customers", "filter": None, "column": "email", "missing_values": []},
    }


def test_null_is_an_option_name_not_yaml_null(tmp_path: Path) -> None:
    errors, result = load(
        tmp_path,
        "  - name: s\n    accepted_values: {table: o, column: s, values: [a], null: allowed}\n"
        "  - name: r\n    range: {table: o, column: a, min: 0, null: violation}\n",
    )
    assert errors == []
    first, second = result.automations[0].checks  # type: ignore[attr-defined]
    assert (first.spec.null, second.spec.null) == ("allowed", "violation")


@dataclass(frozen=True)
class Bad:
    name: str
    checks: str
    errors: tuple[str, ...]


BAD = [
    Bad(
        "no kind",
        "  - {name: c, expect: == 0}\n",
        (
            "5:5: checks.0: a check needs 'sql:' or one of the typed kinds: row_count, missing, "
            "duplicates, accepted_values, relationships, freshness, range, validity, aggregate, "
            "schema, compare",
        ),
    ),
    Bad(
        "two kinds",
        "  - name: c\n    sql: SELECT 1\n    missing: {table: t, column: c}\n",
        (
            "7:14: checks.0.missing: a check is one of sql, row_count, missing, duplicates, "
            "accepted_values, relationships, freshness, range, validity, aggregate, schema, "
            "compare; this one has sql and missing",
        ),
    ),
    Bad(
        "compare mode misspelt",
        "  - {name: c, compare: {table: a, with: {source: b}, key: [id], mode: row}}\n",
        (
            "5:71: checks.0.compare.mode: mode is one of counts, aggregates, rows; got 'row' "
            "(did you mean 'rows'?)",
        ),
    ),
    Bad(
        "compare rows without a key",
        "  - {name: c, compare: {table: a, with: {source: b}}}\n",
        (
            "5:24: checks.0.compare: mode rows needs 'key': the columns that identify a row "
            "on both sides",
        ),
    ),
    Bad(
        "compare with an unknown key",
        "  - {name: c, compare: {table: a, with: {source: b, tabel: c}, key: [id]}}\n",
        ("5:53: checks.0.compare.with.tabel: unknown field 'tabel'",),
    ),
    Bad(
        "compare with itself",
        "  - {name: c, compare: {table: a, with: {table: a}, key: [id]}}\n",
        (
            "5:24: checks.0.compare: 'with' names the same table on the same source: nothing "
            "to compare",
        ),
    ),
    Bad(
        "percent on a row count",
        "  - name: c\n    row_count: {table: t}\n    expect: <= 1%\n",
        (
            "7:13: checks.0.expect: row_count is compared with a number ('== 0'), "
            "'empty' / 'not empty' or 'anomaly'; '<= 1%' compares a percent",
        ),
    ),
    Bad(
        "duration on missing",
        "  - name: c\n    missing: {table: t, column: c}\n    expect: < 3h\n",
        (
            "7:13: checks.0.expect: missing is compared with a number ('== 0'), a percent "
            "('<= 1%'), 'empty' / 'not empty' or 'anomaly'; '< 3h' compares a duration",
        ),
    ),
    Bad(
        "freshness without a limit",
        "  - name: c\n    freshness: {table: t, column: c}\n",
        ("6:16: checks.0.freshness: freshness needs max_age (or an expect such as '< 3h')",),
    ),
    Bad(
        "freshness with two limits",
        "  - name: c\n    freshness: {table: t, column: c, max_age: 1h}\n    expect: < 2h\n",
        (
            "7:13: checks.0.expect: give max_age or expect, not both: max_age is the same as "
            "expect '<= max_age'",
        ),
    ),
    Bad(
        "filter beside the kind",
        "  - name: c\n    missing: {table: t, column: c}\n    filter: a > 1\n",
        (
            "7:5: checks.0.filter: unknown field 'filter': it goes inside the kind's mapping, "
            "e.g. missing: {table: orders, column: email, filter: \"status = 'paid'\"}",
        ),
    ),
    Bad(
        "misspelt kind key",
        "  - name: c\n    missing: {table: t, colum: c}\n",
        (
            "6:14: checks.0.missing.column: required field is missing",
            "6:25: checks.0.missing.colum: unknown field 'colum' (did you mean 'column'?)",
        ),
    ),
    Bad(
        "bad relationship target",
        "  - name: c\n    relationships: {table: t, column: c, to: customers}\n",
        (
            "6:46: checks.0.relationships.to: 'to' is the parent table and column as "
            "table.column (got 'customers')",
        ),
    ),
    Bad(
        "range without bounds",
        "  - name: c\n    range: {table: t, column: c}\n",
        ("6:12: checks.0.range: range needs min, max or both",),
    ),
    Bad(
        "range bounds of two kinds",
        "  - name: c\n    range: {table: t, column: c, min: 0, max: 2024-01-01}\n",
        ("6:12: checks.0.range: min and max must both be numbers, dates or timestamps",),
    ),
    Bad(
        "duplicate key column",
        "  - name: c\n    duplicates: {table: t, columns: [a, A]}\n",
        ("6:37: checks.0.duplicates.columns: a column is listed twice",),
    ),
    Bad(
        "not a type",
        "  - name: c\n    schema: {table: t, columns: {a: 'int; drop'}}\n",
        (
            "6:37: checks.0.schema.columns.a: column a: 'int; drop' is not a type; use one of any, "
            "integer, decimal, float, number, text, boolean, date, timestamp, timestamptz, time, "
            "interval, json, uuid, binary or a SQL type such as decimal(10,2)",
        ),
    ),
    Bad(
        "a percent between two units",
        "  - name: c\n    missing: {table: t, column: c}\n    expect: between 1% and 5\n",
        ("7:13: checks.0.expect: between 1% and 5: both bounds need the same unit",),
    ),
    # Values YAML read as something else are shown as YAML writes them, never as Python reprs.
    Bad(
        "a date where text is expected",
        "  - name: c\n    sql: SELECT 1\n    expect: 2024-01-01\n",
        ("7:13: checks.0.expect: expect must be text such as '== 0' (got the date 2024-01-01)",),
    ),
    Bad(
        "a boolean duration",
        "  - name: c\n    freshness: {table: t, column: c, max_age: true}\n",
        (
            "6:47: checks.0.freshness.max_age: expected a duration: seconds as a number, or a "
            "string like '90s', '30m', '1h', '2d' (got true)",
        ),
    ),
    Bad(
        "a timestamp as a table",
        "  - name: c\n    row_count: {table: 2024-01-01 10:00:00}\n",
        (
            "6:24: checks.0.row_count.table: input should be a valid string "
            "(got the timestamp 2024-01-01 10:00:00)",
        ),
    ),
    Bad(
        "a date among accepted values",
        "  - name: c\n    accepted_values: {table: t, column: c, values: [a, 2024-01-01]}\n",
        (
            "6:56: checks.0.accepted_values.values.1: a listed value is text, a number or a "
            "boolean (got the date 2024-01-01); quote it to list it as text",
        ),
    ),
    Bad(
        "a NULL among accepted values",
        "  - name: c\n    accepted_values: {table: t, column: c, values: [a, null]}\n",
        (
            "6:56: checks.0.accepted_values.values.1: a listed value is text, a number or a "
            "boolean (got null); NULL is never listed: accepted_values takes null: allowed, "
            "missing counts it",
        ),
    ),
    Bad(
        "an infinite bound",
        "  - name: c\n    range: {table: t, column: c, min: -.inf}\n",
        ("6:39: checks.0.range.min: expected a finite number, a date or a timestamp (got -.inf)",),
    ),
    Bad(
        "a bound with a control character",
        '  - name: c\n    range: {table: t, column: c, min: "1\\t2"}\n',
        ('6:39: checks.0.range.min: expected a number, a date or a timestamp (got "1\\t2")',),
    ),
    Bad(
        "an unknown format",
        "  - {name: c, validity: {table: t, column: c, format: zipcode}}\n",
        (
            "5:55: checks.0.validity.format: input should be 'email', 'uuid', 'url', 'ipv4', "
            "'ipv6', 'e164_phone', 'iso_date', 'iso_datetime', 'iso_country' or 'iso_currency' "
            "(got 'zipcode')",
        ),
    ),
    Bad(
        "a misspelt format",
        "  - {name: c, validity: {table: t, column: c, format: emial}}\n",
        (
            "5:55: checks.0.validity.format: input should be 'email', 'uuid', 'url', 'ipv4', "
            "'ipv6', 'e164_phone', 'iso_date', 'iso_datetime', 'iso_country' or 'iso_currency' "
            "(got 'emial') (did you mean 'email'?)",
        ),
    ),
    Bad(
        "validity without a rule",
        "  - {name: c, validity: {table: t, column: c}}\n",
        ("5:25: checks.0.validity: validity needs format, regex, min_length or max_length",),
    ),
    Bad(
        "a regex that does not compile",
        "  - name: c\n    validity: {table: t, column: c, regex: '[a-z'}\n",
        (
            "6:44: checks.0.validity.regex: the regex is not a valid regular expression: "
            "unterminated character set at character 1",
        ),
    ),
    Bad(
        "a regex some engines read otherwise",
        "  - name: c\n    validity: {table: t, column: c, regex: '[0-9]+-\\d+'}\n",
        (
            "6:44: checks.0.validity.regex: the regex uses \\d at character 8, which not every "
            "engine reads alike: write [0-9] for \\d",
        ),
    ),
    Bad(
        "a regex with a flag group",
        "  - name: c\n    validity: {table: t, column: c, regex: '(?i)abc'}\n",
        (
            "6:44: checks.0.validity.regex: the regex uses a (?…) group at character 1: POSIX "
            "regular expressions (PostgreSQL, Redshift, Snowflake) have no non-capturing, "
            "lookaround, named or flag groups; write a plain group (…)",
        ),
    ),
    Bad(
        "lengths the wrong way round",
        "  - name: c\n    validity: {table: t, column: c, min_length: 5, max_length: 2}\n",
        ("6:49: checks.0.validity.min_length: min_length (5) is above max_length (2)",),
    ),
    Bad(
        "columns beside mode counts",
        "  - name: c\n    compare: {table: t, with: {table: u}, mode: counts, columns: [amount]}\n",
        (
            "6:66: checks.0.compare.columns: mode counts compares row counts only: leave "
            "'columns' out, or use mode aggregates or rows to compare columns",
        ),
    ),
    Bad(
        "the key among the columns",
        "  - name: c\n    compare: {table: t, with: {table: u}, key: [id], columns: [amount, id]}"
        "\n",
        (
            "6:72: checks.0.compare.columns.1: column 'id' is in key: a key column is matched, "
            "never compared; leave it out of columns",
        ),
    ),
    Bad(
        "no columns",
        "  - name: c\n    compare: {table: t, with: {table: u}, key: [id], columns: []}\n",
        (
            "6:63: checks.0.compare.columns: columns is empty: leave it out to compare every "
            "column but the key, or name the columns to compare",
        ),
    ),
    Bad(
        "an aggregate without expect",
        "  - name: c\n    aggregate: {table: t, column: c, function: avg}\n",
        (
            "6:16: checks.0.aggregate: aggregate needs an expect, e.g. 'between 10 and 20' (no "
            "bound fits every column)",
        ),
    ),
    Bad(
        "a percentile of 1.5",
        "  - name: c\n    aggregate: {table: t, column: c, function: percentile, percentile: 1.5}"
        "\n    expect: '> 0'\n",
        (
            "6:72: checks.0.aggregate.percentile: percentile is a fraction strictly between 0 "
            "and 1 (got 1.5); 0.95 is the 95th percentile, and min or max are the ends",
        ),
    ),
    Bad(
        "a percentile without its level",
        "  - name: c\n    aggregate: {table: t, column: c, function: percentile}\n"
        "    expect: '> 0'\n",
        ("6:16: checks.0.aggregate: function: percentile needs percentile: (0.95 is the 95th)",),
    ),
    Bad(
        "a level beside avg",
        "  - name: c\n    aggregate: {table: t, column: c, function: avg, percentile: 0.5}\n"
        "    expect: '> 0'\n",
        (
            "6:65: checks.0.aggregate.percentile: percentile: is for function: percentile, not "
            "avg; leave it out",
        ),
    ),
    Bad(
        "a percent expect on an aggregate",
        "  - name: c\n    aggregate: {table: t, column: c, function: avg}\n    expect: '<= 5%'\n",
        (
            "7:13: checks.0.expect: aggregate is compared with a number ('== 0') or 'anomaly'; "
            "'<= 5%' compares a percent",
        ),
    ),
    Bad(
        "an aggregate over buckets",
        "  - name: c\n    aggregate: {table: t, column: c, function: avg}\n    expect: '> 0'\n"
        "    over: {column: d, bucket: day, lookback: 7d}\n",
        (
            "8:11: checks.0.over: over: is for the count kinds (row_count, missing, "
            "accepted_values, relationships, range, validity), not aggregate",
        ),
    ),
]


@pytest.mark.parametrize("case", BAD, ids=lambda c: c.name)
def test_bad_typed_checks(case: Bad, tmp_path: Path) -> None:
    errors, result = load(tmp_path, case.checks)
    assert errors == list(case.errors)
    assert result.automations == []  # type: ignore[attr-defined]


def test_places_point_inside_a_block_a_flow_and_a_plain_value() -> None:
    text = (
        "checks:\n"
        "  - sql: |\n"
        "      SELECT count(*)\n"
        "        FROM t WHERE x IS NULL\n"
        '  - {sql: "SELECT x FROM t"}\n'
        "  - sql: SELECT x FROM t\n"
        "  - sql: >\n"
        "      SELECT x\n"
        "      FROM t\n"
    )
    tree = YamlTree.parse(text.encode())
    nodes = [tree.values[("checks", i, "sql")] for i in range(4)]
    block, flow, plain, folded = (place(node, tree.lines) for node in nodes)
    assert block == Place(2, 10, "|", 6, single_line=False)
    assert block.inside(2, 16) == (4, 22)  # x in "  FROM t WHERE x IS NULL"
    assert flow is not None and flow.inside(1, 8) == (5, 19)
    assert plain is not None and plain.inside(1, 8) == (6, 17)
    assert folded is not None and folded.inside(2, 3) == (7, 10)  # folded: where it starts
    assert block.inside(None, None) == (2, 10)


def test_a_validated_check_is_kept_as_it_is_in_an_automation() -> None:
    # Validated again, a freshness check's filled-in default expect was taken for a written
    # one: "give max_age or expect, not both". The loader now shares validated checks.
    check = Check.model_validate(
        {"name": "fresh", "freshness": {"table": "loads", "column": "loaded_at", "max_age": "3h"}}
    )
    automation = Automation(
        name="a", source="flights", goal="g", path="a.yaml", line=1, checks=[check]
    )
    assert automation.checks[0] is check
    assert automation.checks[0].expectation.text == "<= 3h"
