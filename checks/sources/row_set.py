"""The row-level record of one result: which rows it held, as 8-byte hashes.

Every row a source reads and hashes for the fingerprint (at most
``limits.fingerprint_max_rows``; ``checks.sources.fingerprint.collect``) also gives a
row hash: the first 8 bytes of its ``row_digest`` (sha256 of the row's
canonical text), so equal rows have equal hashes on every engine. A
``RowSet`` keeps them sorted as one blob of big-endian unsigned 64-bit
integers — 8 bytes a row, at most ``8 × fingerprint_max_rows`` (800 kB at the
default 100,000) — and, separately, the hashes of the rows kept as the sample
in the result's order, so a row that appeared or vanished can be shown.

Two row sets are compared as multisets (``checks.opinion.row_diff``). With
100,000 rows the chance that two different rows share a hash is about
``n² / 2⁶⁵``: 3 × 10⁻¹⁰.
"""

from __future__ import annotations

import sys
from array import array
from collections.abc import Iterable
from dataclasses import dataclass

HASH_BYTES = 8
"""Bytes of one row hash."""


def row_hash(digest: int) -> int:
    """Return the row hash of a 256-bit ``row_digest``: its top 64 bits."""
    return digest >> 192


def pack(hashes: Iterable[int], *, sort: bool) -> bytes:
    """Return row hashes as big-endian unsigned 64-bit integers, sorted when ``sort``."""
    values = array("Q", sorted(hashes) if sort else hashes)
    if sys.byteorder == "little":
        values.byteswap()
    return values.tobytes()


def unpack(blob: bytes) -> array[int]:
    """Return the row hashes of a blob written by ``pack``.

    Raises:
        ValueError: the blob's length is not a multiple of 8.
    """
    if len(blob) % HASH_BYTES:
        raise ValueError(f"a row-hash blob of {len(blob)} bytes is not a multiple of 8")
    values = array("Q")
    values.frombytes(blob)
    if sys.byteorder == "little":
        values.byteswap()
    return values


@dataclass(frozen=True)
class RowSet:
    """The rows of one result, as hashes (see the module docstring).

    Attributes:
        hashes: the hashed rows' hashes, sorted, ``pack``ed (8 bytes a row).
        sample: the hashes of the result's first rows (its sample), in the
            result's order, ``pack``ed; the stored evidence keeps as many as it
            keeps rows.
        capped: the result had more rows than were hashed (the scan stopped at
            ``limits.fingerprint_max_rows``).
    """

    hashes: bytes
    sample: bytes
    capped: bool = False

    @property
    def hashed(self) -> int:
        """Rows hashed (the number of hashes)."""
        return len(self.hashes) // HASH_BYTES

    def with_sample(self, rows: int) -> RowSet:
        """Return this row set with the sample's hashes cut to its first ``rows`` rows."""
        return RowSet(self.hashes, self.sample[: rows * HASH_BYTES], self.capped)
