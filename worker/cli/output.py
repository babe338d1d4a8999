"""Where the commands print: the two consoles, and one report as JSON or as text."""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import TYPE_CHECKING

from worker.cli import render
from worker.cli.render import SafeConsole

if TYPE_CHECKING:
    from checks.report import RunReport
    from checks.settings.config import Settings
    from worker.review.history import CheckHistory

out = SafeConsole(highlight=False)
"""Standard output: reports and tables, untrusted text never read as markup."""
err = SafeConsole(stderr=True, highlight=False)
"""Standard error: problems and progress."""


def print_report(
    report: RunReport,
    as_json: bool,
    settings: Settings,
    *,
    full: bool = False,
    histories: Sequence[CheckHistory] = (),
) -> None:
    """Print one report: as one JSON line (redacted), or as text (``render.print_report``)."""
    from checks.settings.config import redact

    if as_json:
        out.print(redact(json.dumps(report.to_dict()), settings.secrets()), soft_wrap=True)
    else:
        decider = None if full else render.usual_decider(settings)
        render.print_report(out, report, full=full, usual_decider=decider, histories=histories)
