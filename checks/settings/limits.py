"""The ``limits:`` section: what bounds every query (design notes §4, layer 3)."""

from __future__ import annotations

from pydantic import Field

from checks.settings.strict import Strict


class Limits(Strict):
    """Limits applied to every query (design notes §4, layer 3)."""

    query_timeout_s: float = 30.0
    max_rows: int = Field(default=50, ge=1, le=10_000)
    max_cell_chars: int = Field(default=200, ge=10)
    max_result_chars: int = Field(default=20_000, ge=100)
    max_sql_chars: int = Field(default=20_000, ge=100)
    fingerprint_max_rows: int = Field(default=1_000_000, ge=1)
