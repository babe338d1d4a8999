"""A result's fingerprint and row hashes, read as the rows stream in (``collect``).

Every source streams its result through ``collect``: the first ``max_rows``
rows are kept, up to ``Limits.fingerprint_max_rows`` are hashed
(``row_digest``, summed into an order-insensitive fingerprint, and kept as
8-byte row hashes, ``checks.sources.row_set``), and one row more is read to
know whether the result goes on (then its row count is a lower bound).
"""

from __future__ import annotations

import datetime as dt
import decimal
import hashlib
import time
import uuid
from collections.abc import Callable, Sequence
from typing import Any

from checks.errors import QueryTimeout
from checks.sources.budget import check_width, shown_names
from checks.sources.cells import Oversized
from checks.sources.result import QueryResult, ResultBudget
from checks.sources.row_set import RowSet, pack, row_hash

Fetch = Callable[[int], Sequence[Sequence[Any]]]
"""A driver's ``fetchmany``: up to that many rows, none once the result is read."""
Finish = Callable[[Fetch, list[str]], QueryResult]
"""Streams a result's rows (``fetch``) with its column names into a ``QueryResult``."""

FETCH_BATCH_ROWS = 2_000
"""Rows fetched from the driver per round trip while streaming a result."""

_REPR_TYPES = (int, float, str, bool)


_MOD = 2**256


def _fingerprint(columns: Sequence[str], row_sum: int, rows: int) -> str:
    """sha256 hex of the full column names, the row count and the sum of row hashes."""
    head = "\x1f".join(map(repr, columns))
    return hashlib.sha256(f"{head}\n{rows}\n{row_sum:064x}".encode()).hexdigest()


def row_digest(row: Sequence[Any]) -> int:
    r"""Return one row's hash in fingerprints: sha256 of its canonical text, as an integer.

    The canonical text is each value's ``_canonical`` text joined by U+001F:
    ``repr`` for int, float, str and bool, ``\N`` for NULL, ISO 8601 for
    dates and times, ``x'…'`` hex for bytes, ``str`` for decimals, intervals and
    UUIDs. Equal rows (on any engine) have equal digests.
    """
    text = "\x1f".join([_CANONICAL.get(type(value), _canonical)(value) for value in row])
    return int.from_bytes(hashlib.sha256(text.encode()).digest(), "big")


def _canonical(value: Any) -> str:
    """Canonical text of one value for fingerprints: same value, same text, every run."""
    if value is None:
        return "\\N"
    if type(value) in _REPR_TYPES:
        return repr(value)
    if isinstance(value, (dt.date, dt.time)):
        return value.isoformat()
    if isinstance(value, (bytes, bytearray, memoryview)):
        return "x'" + bytes(value).hex() + "'"
    if isinstance(value, (list, tuple)):
        return "[" + ",".join(_canonical(item) for item in value) + "]"
    if isinstance(value, dict):
        return "{" + ",".join(f"{_canonical(k)}:{_canonical(v)}" for k, v in value.items()) + "}"
    if isinstance(value, (decimal.Decimal, dt.timedelta, uuid.UUID)):
        return str(value)
    if isinstance(value, Oversized):
        return f"oversized:{value.type}:{value.size}:{value.digest}"
    return f"{type(value).__name__}:{value}"


_CANONICAL: dict[type, Callable[[Any], str]] = {
    int: repr,
    float: repr,
    str: repr,
    bool: repr,
    type(None): lambda _: "\\N",
}
"""The common types' canonical text without the checks of ``_canonical`` (same text)."""


def collect(
    fetchmany: Callable[[int], Sequence[Sequence[Any]]],
    *,
    sql: str,
    columns: list[str],
    max_rows: int,
    scan_rows: int,
    started: float,
    timeout_s: float,
    limits: ResultBudget | None = None,
) -> QueryResult:
    """Stream a result in batches: hash up to ``scan_rows`` rows, keep the first ``max_rows``.

    The hashed rows' row hashes come back as the result's ``row_set`` (8 bytes
    a row: at most ``8 × scan_rows`` bytes held). Reads at most
    ``max(scan_rows, max_rows) + 1`` rows, so a result longer than the scan cap
    is known to be longer (``scan_capped``) without reading it all.
    The fingerprint covers the full column names; the result holds them as
    shown (``shown_names`` with ``limits``, default ``Limits()``).

    Raises:
        QueryFailed: the column names cannot fit the result budget even cut
            short (``check_width``); nothing is fetched.
        QueryTimeout: ``timeout_s`` seconds passed since ``started`` (a
            ``time.monotonic()`` value) before the scan ended.

    """
    if limits is None:
        from checks.settings.limits import Limits

        limits = Limits()
    shown = shown_names(
        columns, max_cell_chars=limits.max_cell_chars, max_result_chars=limits.max_result_chars
    )
    check_width(shown, max_result_chars=limits.max_result_chars)
    # Order-insensitive: the sum of per-row hashes (a multiset hash), so rows that tie
    # under ORDER BY and come back in another order do not look like changed data.
    row_sum = 0  # taken modulo 2**256 at the end: Python integers do not overflow
    kept: list[tuple[Any, ...]] = []
    hashes: list[int] = []
    seen = 0
    limit = max(scan_rows, max_rows) + 1
    while seen < limit:
        if time.monotonic() - started > timeout_s:
            raise QueryTimeout(f"the query ran past its time limit of {timeout_s:g} s")
        batch = fetchmany(min(FETCH_BATCH_ROWS, limit - seen))
        if not batch:
            break
        if seen < max_rows:
            kept.extend(tuple(row) for row in batch[: max_rows - seen])
        digests = list(map(row_digest, batch[: max(0, scan_rows - seen)]))
        row_sum += sum(digests)
        hashes.extend([row_hash(d) for d in digests])
        seen += len(batch)
    row_sum %= _MOD
    capped = seen > scan_rows
    sample = hashes[: len(kept)] + [row_hash(row_digest(r)) for r in kept[len(hashes) :]]
    return QueryResult(
        sql=sql,
        columns=shown,
        rows=kept,
        row_count=seen,
        truncated=len(kept) < seen,
        fingerprint=_fingerprint(columns, row_sum, min(seen, scan_rows)),
        elapsed_ms=(time.monotonic() - started) * 1000,
        scan_capped=capped,
        row_set=RowSet(pack(hashes, sort=True), pack(sample, sort=False), capped),
    )
