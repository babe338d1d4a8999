"""Which rows of one query appeared and vanished since its previous completed run.

A query is the same query in two runs when its SQL has the same normal form
(``checks.sql.normal_form``), whatever its id. Its two row sets
(``checks.sources.row_set``: 8-byte hashes of up to ``limits.fingerprint_max_rows``
rows) are compared as multisets: a row that is there twice now and once
before appeared once. The counts are exact over the rows compared; the rows
shown are the first few of each side's sample (the first ``limits.max_rows``
rows of the result) whose hashes appeared or vanished — a row outside the
sample is counted but cannot be shown ("5 new rows since the last run (none of
them in the sample kept)").

When a result had more rows than were hashed, only the first rows hashed (in
the order the database returned them) were compared, and the line says so:
"compared the first 100,000 rows of 10,000,000". Such a comparison is only
meaningful for a query with an ``ORDER BY``.

The line every surface shows (report page, ``lookout show``, the alert, the
second opinion's state) is ``RowChange.line``:
"3 new rows since the last run (N724MQ, N725MQ, …); 1 gone". ``lookout show``,
where nothing beside the line says which run it compares with, names it
instead: "3 new rows since run 33 (…)". A row is named by
its first column's value, cut to ``LABEL_CHARS``. Rows and names are data:
untrusted text, escaped by each renderer.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from checks.sources.row_set import RowSet, unpack

SHOWN_ROWS = 5
"""Rows kept of each side (appeared, vanished) in a ``RowChange``."""

LINE_ROWS = 2
"""Rows named in the one-line summary of each side."""

LABEL_CHARS = 40
"""Characters of a row's name (its first value) in the line."""


@dataclass(frozen=True)
class PreviousRows:
    """A query's row record in its previous completed run (``checks.store.store``).

    Attributes:
        run_id: the run.
        evidence_id: the query's evidence id in that run (``C1``, ``Q3``…).
        row_set: its row hashes and its sample's.
        rows: its sample as stored (JSON-safe), aligned with ``row_set.sample``.
        row_count: rows in its full result (a lower bound when not ``row_count_exact``).
        row_count_exact: whether ``row_count`` is exact.
    """

    run_id: int
    evidence_id: str
    row_set: RowSet
    rows: list[list[Any]]
    row_count: int
    row_count_exact: bool = True


@dataclass(frozen=True)
class Compared:
    """What one side of a comparison covered: rows hashed out of the result's rows."""

    hashed: int
    rows: int
    exact: bool = True

    @property
    def partial(self) -> bool:
        """Whether fewer rows were compared than the result held."""
        return self.hashed < self.rows or not self.exact

    def words(self) -> str:
        """Say it: "the first 100,000 rows of 10,000,000" (or "of at least 100,001")."""
        total = f"{self.rows:,}" if self.exact else f"at least {self.rows:,}"
        return f"the first {self.hashed:,} rows of {total}"

    def to_dict(self) -> dict[str, Any]:
        """Return ``{hashed, rows, exact}``."""
        return {"hashed": self.hashed, "rows": self.rows, "exact": self.exact}


@dataclass(frozen=True)
class RowChange:
    """One query's rows against its previous completed run.

    Attributes:
        id: the query's evidence id in this run.
        previous_run_id: the run compared against.
        previous_id: the query's evidence id in that run.
        appeared: rows now that were not there (a multiset difference).
        vanished: rows then that are not there now.
        columns: this run's column names (untrusted).
        appeared_rows: up to ``SHOWN_ROWS`` of the appeared rows from this
            run's sample (JSON-safe values; untrusted).
        vanished_rows: up to ``SHOWN_ROWS`` of the vanished rows from the
            previous run's sample.
        now: what this run's side covered.
        before: what the previous run's side covered.
    """

    id: str
    previous_run_id: int
    previous_id: str
    appeared: int
    vanished: int
    columns: list[str] = field(default_factory=list)
    appeared_rows: list[list[Any]] = field(default_factory=list)
    vanished_rows: list[list[Any]] = field(default_factory=list)
    now: Compared = Compared(0, 0)
    before: Compared = Compared(0, 0)

    @property
    def changed(self) -> bool:
        """Whether any row appeared or vanished."""
        return bool(self.appeared or self.vanished)

    def line(self, *, name_run: bool = False) -> str:
        """The change in one line (see the module docstring); names are untrusted text.

        The earlier run is "the last run", or with ``name_run`` its id, once:
        "3 new rows since run 33 (N724MQ, N725MQ, …); 1 gone (N100AA)"
        (``lookout show``, where nothing else on the line names it).
        """
        earlier = f"run {self.previous_run_id}" if name_run else "the last run"
        if not self.changed and not self.now.hashed:
            text = f"no rows, as in {earlier}"
        elif not self.changed:
            text = f"the same {_rows(self.now.hashed)} as {earlier}"
        else:
            new = f"{self.appeared:,} new {_noun(self.appeared)}" if self.appeared else ""
            new = new or "no new rows"
            text = f"{new} since {earlier}{_names(self.appeared, self.appeared_rows)}"
            if self.vanished:
                text += f"; {self.vanished:,} gone{_names(self.vanished, self.vanished_rows)}"
        if self.now.partial or self.before.partial:
            text += f"; compared {self.now.words()}"
            if self.before.partial and self.before != self.now:
                text += f" ({earlier}: {self.before.words()})"
        return text

    def to_dict(self) -> dict[str, Any]:
        """Return the ``rows`` entry of ``evidence_diff`` in ``--json`` (``line`` included)."""
        return {
            "id": self.id,
            "previous_run_id": self.previous_run_id,
            "previous_id": self.previous_id,
            "appeared": self.appeared,
            "vanished": self.vanished,
            "columns": list(self.columns),
            "appeared_rows": self.appeared_rows,
            "vanished_rows": self.vanished_rows,
            "now": self.now.to_dict(),
            "before": self.before.to_dict(),
            "line": self.line(),
        }

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> RowChange:
        """Read a stored ``to_dict``.

        Raises:
            KeyError, TypeError, ValueError: the data is not of that shape.
        """

        def side(value: Any) -> Compared:
            return Compared(int(value["hashed"]), int(value["rows"]), bool(value["exact"]))

        return cls(
            id=str(data["id"]),
            previous_run_id=int(data["previous_run_id"]),
            previous_id=str(data["previous_id"]),
            appeared=int(data["appeared"]),
            vanished=int(data["vanished"]),
            columns=[str(c) for c in data.get("columns") or []],
            appeared_rows=list(data.get("appeared_rows") or []),
            vanished_rows=list(data.get("vanished_rows") or []),
            now=side(data["now"]),
            before=side(data["before"]),
        )


def _noun(count: int) -> str:
    return "row" if count == 1 else "rows"


def _rows(count: int) -> str:
    return f"{count:,} {_noun(count)}"


def row_label(row: list[Any]) -> str:
    """A row's name in the line: its first value as text, cut to ``LABEL_CHARS`` (untrusted)."""
    if not row:
        return "()"
    value = row[0]
    text = "NULL" if value is None else str(value)
    text = " ".join(text.split())  # one line, whatever the value holds
    return text if len(text) <= LABEL_CHARS else text[: LABEL_CHARS - 1] + "…"


def _names(count: int, rows: list[list[Any]]) -> str:
    if not rows:
        return " (none of them in the sample kept)" if count else ""
    names = [row_label(r) for r in rows[:LINE_ROWS]]
    if count > len(names):
        names.append("…")
    return f" ({', '.join(names)})"


def _pick(
    rows: list[list[Any]], sample: bytes, wanted: Counter[int], limit: int
) -> list[list[Any]]:
    """The first sample rows whose hashes are in ``wanted`` (each hash as often as counted)."""
    left = Counter(wanted)
    picked: list[list[Any]] = []
    for row, digest in zip(rows, unpack(sample), strict=False):
        if len(picked) >= limit:
            break
        if left[digest] > 0:
            left[digest] -= 1
            picked.append(row)
    return picked


def _differences(now_blob: bytes, before_blob: bytes) -> tuple[Counter[int], Counter[int]]:
    """The multiset differences (now − before, before − now) of two ``pack``ed row sets."""
    if now_blob == before_blob:
        return Counter(), Counter()
    now, before = unpack(now_blob), unpack(before_blob)
    now_set, before_set = set(now), set(before)
    if len(now_set) == len(now) and len(before_set) == len(before):  # no repeated row
        return Counter(now_set - before_set), Counter(before_set - now_set)
    counted_now, counted_before = Counter(now), Counter(before)
    return counted_now - counted_before, counted_before - counted_now


def diff_rows(
    evidence_id: str,
    columns: list[str],
    rows: list[list[Any]],
    row_set: RowSet,
    row_count: int,
    row_count_exact: bool,
    previous: PreviousRows,
) -> RowChange:
    """Compare one query's rows now with its previous completed run's.

    Args:
        evidence_id: the query's id in this run.
        columns: this run's column names.
        rows: this run's sample as stored (aligned with ``row_set.sample``).
        row_set: this run's row hashes.
        row_count: rows in this run's full result.
        row_count_exact: whether ``row_count`` is exact.
        previous: the previous completed run's record of the same query.

    Memory: at most two sets (or, with repeated rows, two ``Counter``) of
    ``fingerprint_max_rows`` hashes each; equal blobs (the same rows, in any
    order: they are sorted) are compared as bytes.
    """
    appeared, vanished = _differences(row_set.hashes, previous.row_set.hashes)
    return RowChange(
        id=evidence_id,
        previous_run_id=previous.run_id,
        previous_id=previous.evidence_id,
        appeared=appeared.total(),
        vanished=vanished.total(),
        columns=list(columns),
        appeared_rows=_pick(rows, row_set.sample, appeared, SHOWN_ROWS),
        vanished_rows=_pick(previous.rows, previous.row_set.sample, vanished, SHOWN_ROWS),
        now=Compared(row_set.hashed, max(row_count, row_set.hashed), row_count_exact),
        before=Compared(
            previous.row_set.hashed,
            max(previous.row_count, previous.row_set.hashed),
            previous.row_count_exact,
        ),
    )


def stored_row_changes(second_opinion: Any) -> list[RowChange]:
    """Read the row changes of a stored ``second_opinion`` (``evidence_diff.rows``), leniently.

    Entries of another shape (older runs have none) are left out.
    """
    diff = second_opinion.get("evidence_diff") if isinstance(second_opinion, dict) else None
    items = diff.get("rows") if isinstance(diff, dict) else None
    changes: list[RowChange] = []
    for item in items if isinstance(items, list) else []:
        try:
            changes.append(RowChange.from_dict(item))
        except (KeyError, TypeError, ValueError, AttributeError):
            continue
    return changes


def change_lines(
    second_opinion: Any, *, changed_only: bool = True, name_run: bool = False
) -> list[str]:
    """``C1: 3 new rows since the last run (N724MQ, N725MQ, …); 1 gone``, one per query.

    Only queries whose rows changed, unless ``changed_only`` is False. With
    ``name_run`` the earlier run is named by its id ("since run 33", see
    ``RowChange.line``). The text holds data values: untrusted.
    """
    return [
        f"{c.id}: {c.line(name_run=name_run)}"
        for c in stored_row_changes(second_opinion)
        if c.changed or not changed_only
    ]
