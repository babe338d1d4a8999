"""Failing segments, run and stored: listed by ``lookout show`` and the report page, escaped.

Segment values are data: a tag, a Markdown link and backticks in them come out as text in
the summary (Markdown code spans), on the page (HTML-escaped) and in the terminal.
"""

from __future__ import annotations

import html
import io
import re
from pathlib import Path

import duckdb
import pytest
from fastapi.testclient import TestClient

from checks.automation.model import Automation
from checks.report import CheckOutcome, Finding
from checks.run import SourcePool
from checks.run_lifecycle import run_and_store
from checks.settings.sources import DuckDBSource
from tests.worker.web.web_support import World, app_for, login
from worker.cli.render import print_report
from worker.cli.safe_text import SafeConsole

TAG = "<script>alert(1)</script>"
LINK = "[x](http://evil.example)"
TICKS = "a``b"


@pytest.mark.slow
def test_failing_segments_are_listed_and_escaped(web_world: World, tmp_path: Path) -> None:
    path = tmp_path / "hostile.duckdb"
    with duckdb.connect(str(path)) as conn:
        conn.execute("CREATE TABLE notes (region VARCHAR, v INTEGER)")
        conn.execute(
            "INSERT INTO notes VALUES (?, NULL), (?, NULL), (?, 1), ('ok', 1), (NULL, NULL)",
            [TAG, LINK, TICKS],
        )
    sources = {
        **web_world.settings.sources,
        "hostile": DuckDBSource(type="duckdb", database=str(path)),
    }
    settings = web_world.settings.model_copy(update={"sources": sources})
    auto = Automation.model_validate(
        {
            "name": "hostile-segments",
            "source": "hostile",
            "checks": [
                {
                    "name": "v per region",
                    "missing": {"table": "notes", "column": "v", "by": ["region"]},
                }
            ],
            "path": "h.yaml",
            "line": 1,
        }
    )
    with SourcePool(settings) as pool:
        report = run_and_store(auto, settings, pool, web_world.store)
    assert report.finding == Finding.NEEDS_ATTENTION
    check = report.checks[0]
    assert check.outcome is CheckOutcome.FAILED
    assert check.segments is not None
    assert [s.name for s in check.segments.failed] == [TAG, LINK, "NULL"]
    assert (
        "3 of 5 segments by region failed: `<script>alert(1)</script>`: 1 of 1 row missing"
        " (100.00 %); `[x](http://evil.example)`: 1 of 1 row missing (100.00 %); `NULL`: 1 of 1"
        " row missing (100.00 %) (expected == 0)"
    ) in report.summary
    client = TestClient(app_for(web_world))
    login(client)
    page = client.get(f"/runs/{report.run_id}").text
    assert TAG not in page  # never a live tag
    assert 'href="http://evil.example"' not in page  # never a live link
    row = re.search(r'<tr class="sub segments"><td colspan="5">(.*?)</td></tr>', page, re.S)
    assert row is not None
    assert html.unescape(row.group(1)) == (
        "3 failing segments by region: <code><script>alert(1)</script></code> 1 of 1 row missing"
        " (100.00 %) · <code>[x](http://evil.example)</code> 1 of 1 row missing (100.00 %) · "
        "<code>NULL</code> 1 of 1 row missing (100.00 %)"
    )
    assert '<td class="value">3 of 5 segments failed</td>' in page
    stored = web_world.store.get_run(report.run_id or 0)
    assert stored is not None
    buffer = io.StringIO()
    print_report(SafeConsole(file=buffer, width=100, highlight=False), stored, full=True)
    lines = buffer.getvalue().splitlines()
    at = lines.index("  v per region: failing segments by region")
    assert [line.rstrip() for line in lines[at + 1 : at + 5]] == [
        "      region                     measured",
        "      <script>alert(1)</script>  1 of 1 row missing (100.00 %)",
        "      [x](http://evil.example)   1 of 1 row missing (100.00 %)",
        "      NULL                       1 of 1 row missing (100.00 %)",
    ]
