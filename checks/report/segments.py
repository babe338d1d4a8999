"""A segmented check's segments (``by:``): each segment's values, count, value and outcome.

Built by ``checks.declared.segments``; carried by ``CheckResult.segments``,
printed by ``--json`` (``segments`` and ``failed_segments``) and stored with
the check's result (``checks.store.report_rows``).
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass, field
from typing import Any

from checks.report.check_result import Anomaly
from checks.report.evidence import json_value
from checks.report.vocabulary import CheckOutcome

SERIES_PREFIX = "segment:"
"""The start of every segment's series metric (``Segment.series_metric``)."""

MAX_STORED_BYTES = 32
"""A binary segment value up to this long is kept whole (hex); a longer one by its digest."""


def segment_value(value: Any) -> Any:
    """A segment value, JSON-safe and distinct per distinct value (``Segment.values``' shape).

    As ``json_value``, except bytes: ``{"bytes": "<hex>"}``, or past ``MAX_STORED_BYTES``
    ``{"length": n, "sha256": "<hex>"}`` (``json_value``'s ``"<n bytes>"`` would make
    two values of one length the same segment).
    """
    if isinstance(value, bytes | bytearray | memoryview):
        data = bytes(value)
        if len(data) <= MAX_STORED_BYTES:
            return {"bytes": data.hex()}
        return {"length": len(data), "sha256": hashlib.sha256(data).hexdigest()}
    return json_value(value)


@dataclass
class Segment:
    """One segment of a check: the rows sharing one value of each ``by:`` column.

    Attributes:
        name: the values in words: ``AA``; ``EU / web`` for two columns; ``NULL``
            for a NULL (its own segment). Untrusted data: renderers escape it.
        values: each ``by:`` column's value as the driver returned it (None for NULL);
            JSON-safe once stored (``segment_value``).
        outcome: the segment's own outcome, judged as the check alone would be.
        value: the value compared (JSON-safe), or None.
        rows_in_scope: the segment's rows in scope (in the tested bucket with ``over:``).
        metrics: the segment's metrics, as a check's (``CheckResult.metrics``).
        reason: why it was not evaluated, its warning level, or a note; None.
        error: why it could not be judged; None.
        anomaly: its anomaly computation (``expect: anomaly``); None otherwise.
    """

    name: str
    values: dict[str, Any]
    outcome: CheckOutcome
    value: Any = None
    rows_in_scope: int = 0
    metrics: dict[str, Any] = field(default_factory=dict)
    reason: str | None = None
    error: str | None = None
    anomaly: Anomaly | None = None

    def __post_init__(self) -> None:
        self.outcome = CheckOutcome(self.outcome)

    @property
    def series_metric(self) -> str:
        """The series metric of this segment's value (``checks.store.series``), run to run.

        ``segment:`` and 16 hex digits of the SHA-256 of its values' JSON (sorted
        keys, ``segment_value``): fits the store's 64-character metric, and tells
        ``NULL`` from ``'NULL'`` and one binary value from another.
        """
        values = {k: segment_value(v) for k, v in self.values.items()}
        data = json.dumps(values, sort_keys=True)
        return SERIES_PREFIX + hashlib.sha256(data.encode()).hexdigest()[:16]

    def to_dict(self) -> dict[str, Any]:
        """The JSON shape (``--json``, the store)."""
        return {
            "name": self.name,
            "values": {k: segment_value(v) for k, v in self.values.items()},
            "outcome": str(self.outcome),
            "value": json_value(self.value),
            "rows_in_scope": self.rows_in_scope,
            "metrics": {k: json_value(v) for k, v in self.metrics.items()},
            "reason": self.reason,
            "error": self.error,
            "anomaly": self.anomaly.to_dict() if self.anomaly else None,
        }

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> Segment:
        """Rebuild one stored by ``to_dict``."""
        found = data.get("anomaly")
        return cls(
            name=str(data.get("name", "")),
            values=dict(data.get("values") or {}),
            outcome=CheckOutcome(data.get("outcome", "not_evaluated")),
            value=data.get("value"),
            rows_in_scope=int(data.get("rows_in_scope") or 0),
            metrics=dict(data.get("metrics") or {}),
            reason=data.get("reason"),
            error=data.get("error"),
            anomaly=Anomaly.from_dict(found) if isinstance(found, dict) else None,
        )


@dataclass
class Segments:
    """Every segment of one run of a segmented check, in order (values ascending, NULL last).

    Attributes:
        by: the ``by:`` columns, as the catalog names them.
        items: every segment (at most ``limits.max_segments``).
    """

    by: list[str]
    items: list[Segment] = field(default_factory=list)

    @property
    def failed(self) -> list[Segment]:
        """The segments that failed."""
        return [s for s in self.items if s.outcome is CheckOutcome.FAILED]

    def having(self, outcome: CheckOutcome) -> list[Segment]:
        """The segments with ``outcome``."""
        return [s for s in self.items if s.outcome is outcome]

    def to_dict(self) -> dict[str, Any]:
        """The JSON shape: ``by``, ``count`` and every segment (``items``)."""
        return {
            "by": list(self.by),
            "count": len(self.items),
            "items": [s.to_dict() for s in self.items],
        }

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> Segments:
        """Rebuild one stored by ``to_dict``."""
        items = [Segment.from_dict(s) for s in data.get("items") or [] if isinstance(s, dict)]
        return cls(by=[str(b) for b in data.get("by") or []], items=items)
