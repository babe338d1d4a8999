"""Suggestion rules: a table's profile → typed checks, each with what was observed.

One rule per kind (checks/kinds/); each check passes on the data profiled
unless it reveals a real problem, which its ``problem`` then says (a foreign
key with orphans, a newest timestamp in the future). Bounds leave the margins
of ``checks.suggest.margins``; volume is judged against its own history
(``expect: anomaly`` over daily buckets), which knows a table's rhythm better
than any fixed bound. A timestamp is *live* when its newest value is at most
``LIVE_AGE_S`` old: only a live one gets freshness and volume checks.
Left out, each with a note saying why: a column whose name has leading or
trailing spaces (the automation loader strips names: its checks would name
another column), the missing check of a column all NULL (``<= 100%`` never
fails), the range of a number column holding NaN or infinity.
"""

from __future__ import annotations

import datetime as dt
import math
import re
from dataclasses import dataclass
from decimal import Decimal
from typing import Any

from checks.kinds.in_words import duration, percent, rows
from checks.suggest.margins import freshness_bound, null_bound, range_bounds, rows_floor
from checks.suggest.profile import ColumnProfile, TableProfile
from checks.suggest.relations import ForeignKey
from checks.suggest.volume import volume

LIVE_AGE_S = 7 * 86400.0
"""A timestamp whose newest value is older than this (a week) is history, not a feed."""
FUTURE_TOLERANCE_S = 300.0
"""``freshness``'s own default tolerance for a newest value ahead of now."""


@dataclass(frozen=True)
class Suggestion:
    """One suggested check.

    Attributes:
        check: the check as its YAML mapping (``name`` first, then its kind's key).
        observed: what the profile saw, for the comment above it, one line.
        problem: why it fails on today's data (a real problem), or None: it passes.
    """

    check: dict[str, Any]
    observed: str
    problem: str | None = None


def check_name(text: str) -> str:
    """``text`` as a valid check name: other characters become ``_``, at most 100."""
    cleaned = re.sub(r"[^A-Za-z0-9 _.-]", "_", text).strip()
    cleaned = re.sub(r"^[^A-Za-z0-9]+", "", cleaned)[:100].rstrip()
    return cleaned or "check"


def _plain(value: Any) -> Any:
    if isinstance(value, Decimal):
        return int(value) if value == value.to_integral_value() else float(value)
    return value


def _aware(value: dt.datetime) -> dt.datetime:
    return value if value.tzinfo else value.replace(tzinfo=dt.UTC)


def suggest(profile: TableProfile, keys: list[ForeignKey]) -> tuple[list[Suggestion], list[str]]:
    """The checks suggested for one profiled table, and notes on what was not suggested.

    ``keys``: the foreign-key candidates found (``relations.foreign_keys``);
    those of this table become ``relationships`` checks.
    """
    on = profile.at.date().isoformat()
    table = profile.name
    out: list[Suggestion] = []
    notes: list[str] = []
    seen = f"{rows(profile.read)}" + ("" if profile.sample.whole else f" ({profile.sample.how})")
    columns = [c for c in profile.columns if c.name == c.name.strip()]
    notes += [
        f"{table}.{c.name!r}: its name has leading or trailing spaces, which the automation"
        " loader strips: no check suggested for it"
        for c in profile.columns
        if c not in columns
    ]
    names_kept = {c.name for c in columns}
    keys = [k for k in keys if k.column == k.column.strip() and k.to_column == k.to_column.strip()]
    live = [c for c in columns if _live(profile, c)]
    out.append(_schema(columns, profile.name, on))
    if profile.rows == 0:  # any other check would be not evaluated, never passed
        return out, [*notes, f"{table}: empty on {on}: only its columns are checked"]
    out.append(_row_count(profile, on))
    for c in columns:
        if profile.read and not c.non_null:  # "<= 100%" could never fail
            notes.append(
                f"{table}.{c.name}: all NULL in {seen} on {on}: no missing check (any share"
                " of NULLs would pass it)"
            )
        else:
            out.append(_missing(profile, c, seen, on))
    out += [_unique(profile, c, on) for c in profile.keys if c.name in names_kept]
    out += [_accepted(profile, c, on) for c in columns if c.values is not None]
    out += [_relationship(fk, on) for fk in keys if fk.table == table]
    for c in columns:
        if _numbers(c) and not all(math.isfinite(float(_plain(v))) for v in (c.low, c.high)):
            notes.append(
                f"{table}.{c.name}: holds NaN or infinity (min {c.low}, max {c.high}):"
                " no range suggested (no bound holds a value that is not a finite number)"
            )
        elif (found := _range(profile, c, seen, on)) is not None:
            out.append(found)
    for c in columns:
        if c in live:
            out += _freshness_and_volume(profile, c, on, notes)
        elif c.family in {"date", "timestamp", "timestamptz"} and c.high is not None:
            notes.append(_stale_note(profile, c))
    names: set[str] = set()
    for s in out:  # names unique in the automation
        base, n = s.check["name"], 2
        while s.check["name"] in names:
            s.check["name"] = f"{base[:95]} {n}"
            n += 1
        names.add(s.check["name"])
    notes += [f"{table}: {skip}" for skip in profile.skipped]
    return out, notes


def _unique(profile: TableProfile, c: ColumnProfile, on: str) -> Suggestion:
    return Suggestion(
        {
            "name": check_name(f"{c.name} unique"),
            "duplicates": {"table": profile.name, "columns": [c.name]},
        },
        f"{c.name}: {profile.rows:,} distinct values in {rows(profile.rows)}, no NULL, on {on}",
    )


def _schema(kept: list[ColumnProfile], table: str, on: str) -> Suggestion:
    columns = {c.name: c.family or c.type for c in kept}
    return Suggestion(
        {"name": "columns and types", "schema": {"table": table, "columns": columns}},
        f"{len(columns)} columns on {on}",
    )


def _row_count(profile: TableProfile, on: str) -> Suggestion:
    floor = rows_floor(profile.rows)
    check = {"name": "rows present", "row_count": {"table": profile.name}, "expect": f">= {floor}"}
    return Suggestion(check, f"{rows(profile.rows)} on {on}")


def _missing(profile: TableProfile, c: ColumnProfile, seen: str, on: str) -> Suggestion:
    nulls = c.nulls(profile.read)
    check: dict[str, Any] = {
        "name": check_name(f"{c.name} present"),
        "missing": {"table": profile.name, "column": c.name},
    }
    if nulls:
        share = 100 * nulls / profile.read
        check["expect"] = f"<= {null_bound(share):g}%"
        observed = f"{percent(nulls, profile.read)} NULL ({nulls:,}) in {seen} on {on}"
    else:
        observed = f"no NULL in {seen} on {on}"
    return Suggestion(check, observed)


def _accepted(profile: TableProfile, c: ColumnProfile, on: str) -> Suggestion:
    assert c.values is not None
    listed = sorted(c.values)
    spec: dict[str, Any] = {"table": profile.name, "column": c.name, "values": listed}
    if c.nulls(profile.read):
        spec["null"] = "allowed"  # its NULLs are the missing check's
    commonest = max(listed, key=lambda v: c.values[v] if c.values else 0)  # ties: the first
    return Suggestion(
        {"name": check_name(f"{c.name} values"), "accepted_values": spec},
        f"{len(listed)} distinct values in {rows(sum(c.values.values()))} on {on};"
        f" the commonest {commonest!r} in {c.values[commonest]:,}",
    )


def _relationship(fk: ForeignKey, on: str) -> Suggestion:
    check = {
        "name": check_name(f"{fk.column} in {fk.to_table}"),
        "relationships": {
            "table": fk.table,
            "column": fk.column,
            "to": f"{fk.to_table}.{fk.to_column}",
        },
    }
    how = {"declared": "declared", "name": "named as the key"}.get(
        fk.by, "its values are the key's"
    )
    target = f"{fk.to_table}.{fk.to_column}"
    observed = f"{fk.keys:,} distinct values, {fk.orphan_keys:,} not in {target} ({how}) on {on}"
    problem = None
    if fk.orphan_keys:
        problem = (
            f"{fk.orphan_keys:,} of {fk.keys:,} values of {fk.table}.{fk.column}"
            f" ({rows(fk.orphan_rows)}) have no row in {target}: rows point at nothing"
        )
    return Suggestion(check, observed, problem)


def _numbers(c: ColumnProfile) -> bool:
    """A number column with a min and max seen."""
    return c.family in {"integer", "decimal", "float"} and c.low is not None and c.high is not None


def _range(profile: TableProfile, c: ColumnProfile, seen: str, on: str) -> Suggestion | None:
    if not _numbers(c) or c.distinct < 2 or c.unique:
        return None
    low, high = _plain(c.low), _plain(c.high)
    lower, upper = range_bounds(float(low), float(high), whole=c.family == "integer")
    return Suggestion(
        {
            "name": check_name(f"{c.name} range"),
            "range": {"table": profile.name, "column": c.name, "min": lower, "max": upper},
        },
        f"{c.name} from {low} to {high} ({c.non_null:,} values in {seen}) on {on}",
    )


def _age_s(profile: TableProfile, c: ColumnProfile) -> float:
    high = c.high
    if isinstance(high, dt.datetime):
        newest = _aware(high)
    else:
        newest = dt.datetime.combine(high, dt.time(), dt.UTC)
    return (profile.at - newest).total_seconds()


def _live(profile: TableProfile, c: ColumnProfile) -> bool:
    if c.family not in {"date", "timestamp", "timestamptz"} or c.high is None:
        return False
    return _age_s(profile, c) <= LIVE_AGE_S


def _freshness_and_volume(
    profile: TableProfile, c: ColumnProfile, on: str, notes: list[str]
) -> list[Suggestion]:
    age = _age_s(profile, c)
    problem = None
    if age < -FUTURE_TOLERANCE_S:
        problem = (
            f"{profile.name}.{c.name}'s newest value {c.high} is {duration(-age)} in the future"
        )
    bound = freshness_bound(max(age, 0.0))
    found = [
        Suggestion(
            {
                "name": check_name(f"{c.name} fresh"),
                "freshness": {
                    "table": profile.name,
                    "column": c.name,
                    "max_age": f"{int(bound // 3600)}h",
                },
            },
            f"newest {c.name} {c.high} ({duration(age)} old) on {profile.at:%Y-%m-%d %H:%M} UTC",
            problem,
        )
    ]
    daily = volume(profile, c)
    if daily is not None:
        name = {"name": check_name(f"daily volume by {c.name}")}
        found.append(Suggestion({**name, **daily.spec}, daily.observed, daily.problem))
        notes += [daily.note] if daily.note else []
    return found


def _stale_note(profile: TableProfile, c: ColumnProfile) -> str:
    age = _age_s(profile, c)
    return (
        f"{profile.name}.{c.name}: newest value {c.high} is {duration(age)} old"
        " (more than a week): history, or loading stopped; no freshness or volume check suggested"
    )
