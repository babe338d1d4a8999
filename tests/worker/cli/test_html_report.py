"""``lookout show RUN --html FILE``: one self-contained file, every untrusted value escaped."""

from __future__ import annotations

import datetime as dt
import re
import shutil
from dataclasses import replace
from html.parser import HTMLParser
from pathlib import Path

import pytest

from checks.report import CheckOutcome, CheckResult, Evidence, Finding, RunReport, Status
from checks.settings.config import Settings
from tests.cli_support import run_lookout
from tests.paths import ROOT
from tests.shipped import shipped_files
from worker.cli.html_report import html_report, more_rows, opinion_words
from worker.review.history import CheckHistory, HistoryPoint

SLOT = dt.datetime(2026, 3, 2, 6, 0, tzinfo=dt.UTC)
SCRIPT = "<script>alert(1)</script>"


class Page(HTMLParser):
    """Every tag and attribute of a page, and its text."""

    def __init__(self) -> None:
        super().__init__()
        self.tags: list[str] = []
        self.attributes: list[tuple[str, str, str]] = []
        self.text: list[str] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.tags.append(tag)
        self.attributes += [(tag, name, value or "") for name, value in attrs]

    def handle_data(self, data: str) -> None:
        if data.strip():
            self.text.append(data.strip())


def parsed(document: str) -> Page:
    page = Page()
    page.feed(document)
    return page


def _evidence(rows: int, *, exact: bool = True) -> Evidence:
    return Evidence(
        id="S1",
        sql=f"SELECT * FROM t WHERE name = '{SCRIPT}'",
        columns=["id", "<i>name</i>"],
        rows=[[i, f"<b>row {i}</b>" if i else None] for i in range(rows)],
        row_count=30,
        truncated=True,
        fingerprint="f" * 64,
        row_count_exact=exact,
    )


def _report() -> RunReport:
    check = CheckResult(
        name=SCRIPT,
        sql="SELECT count(*) FROM t",
        expect="== 0",
        value=3,
        outcome=CheckOutcome.FAILED,
        kind="sql",
        evidence_id="C1",
        sample_id="S1",
    )
    return RunReport(
        automation="orders",
        scheduled_for=SLOT,
        status=Status.COMPLETED,
        run_id=12,
        finding=Finding.NEEDS_ATTENTION,
        summary=(
            f"**Needs attention** — {SCRIPT} [C1] <img src=x onerror=alert(2)> "
            "[see](https://evil.example/a) ![px](http://evil.example/p.png) <https://evil.example/b>"
        ),
        checks=[check],
        evidence=[_evidence(25)],
        started_at=SLOT,
        finished_at=SLOT + dt.timedelta(seconds=2),
        definition={"source": "shop", "owner": '"><b>x</b>', "tags": ["<u>t</u>"]},
    )


def _history() -> CheckHistory:
    points = [
        HistoryPoint(10 + i, SLOT + dt.timedelta(days=i), v, None, 0.0, o, current=i == 2)
        for i, (v, o) in enumerate([(0.0, "passed"), (None, "error"), (3.0, "failed")])
    ]
    return CheckHistory(SCRIPT, points, total=3)


def test_the_file_escapes_every_untrusted_value_and_loads_nothing_from_outside() -> None:
    document = html_report(_report(), [_history()], made_at=SLOT)
    page = parsed(document)
    assert "script" not in page.tags and "img" not in page.tags and "i" not in page.tags
    assert not [a for a in page.attributes if a[1].startswith("on")]
    links = [(tag, name, value) for tag, name, value in page.attributes if name in ("src", "href")]
    assert links == [
        ("a", "href", "#evidence-C1"),  # the summary's citation
        ("a", "href", "#evidence-C1"),  # the check's evidence
        ("a", "href", "#evidence-S1"),
    ]
    assert not re.search(r"(?:src|href)\s*=\s*[\"']?\s*(?:https?:)?//", document)
    assert re.search(r"url\(|@import", document) is None
    assert page.tags.count("svg") == 1
    csp = next(v for t, n, v in page.attributes if n == "content" and "default-src" in v)
    assert csp == "default-src 'none'; style-src 'unsafe-inline'; img-src data:"
    # the check, the summary, the chart caption and title, the evidence SQL
    assert document.count("&lt;script&gt;alert(1)&lt;/script&gt;") == 5
    assert "&lt;img src=x onerror=alert(2)&gt;" in document
    assert "see (https://evil.example/a)" in " ".join(page.text)
    assert "[image: px] (http://evil.example/p.png)" in " ".join(page.text)
    assert "&lt;b&gt;row 1&lt;/b&gt;" in document and "&lt;i&gt;name&lt;/i&gt;" in document
    assert "&#34;&gt;&lt;b&gt;x&lt;/b&gt;" in document and "&lt;u&gt;t&lt;/u&gt;" in document


def test_the_evidence_shows_its_first_rows_and_counts_the_rest() -> None:
    page = parsed(html_report(_report(), made_at=SLOT))
    assert page.tags.count("tr") == 1 + 1 + 1 + 20  # the checks' head and row, rows' head, 20 rows
    assert "and 10 more rows" in page.text
    assert "NULL" in page.text  # row 0's None
    assert more_rows(_evidence(25, exact=False), 20) == "and at least 10 more rows"
    assert more_rows(_evidence(25), 30) == ""
    assert "This file made 2026-03-02 06:00 UTC." not in page.text  # lower-case, mid-sentence
    assert "Lookout · run 12 of orders · this file made 2026-03-02 06:00 UTC." in page.text


@pytest.mark.slow
def test_lookout_show_html_writes_the_run_with_its_history_and_evidence(
    tmp_path: Path, flights_settings: Settings
) -> None:
    folder = tmp_path / "automations"
    folder.mkdir()
    for path in shipped_files():
        if path.name == "flights-arrival-completeness.yaml":
            shutil.copy(path, folder / path.name)
    env = {
        "PATH": "/usr/bin:/bin",
        "LOOKOUT_STORE_URL": f"sqlite:///{tmp_path}/lookout.db",
        "LOOKOUT_CACHE_DIR": flights_settings.cache_dir,
        "LOOKOUT_AUTOMATIONS_DIR": str(folder),
    }
    config = ["--config", str(ROOT / "config" / "lookout.yaml")]
    for _ in range(2):
        ran = run_lookout([*config, "run", "flights-arrival-completeness"], env, cwd=tmp_path)
        assert ran.returncode == 1, ran.stderr
    shown = run_lookout([*config, "show", "2", "--html", "run.html"], env, cwd=tmp_path)
    assert shown.returncode == 0, shown.stderr
    assert shown.stdout == "" and shown.stderr == "html: run 2 written to run.html\n"
    document = (tmp_path / "run.html").read_text(encoding="utf-8")
    page = parsed(document)
    assert page.text[0] == "flights-arrival-completeness · run 2 · Needs attention"
    assert page.tags.count("svg") == 3  # a chart per check
    charts = re.findall(r'data-points="(\d+)" data-total="(\d+)"', document)
    assert charts == [("2", "2"), ("2", "2"), ("2", "2")]
    # S1: 717 rows; S3, the failing carriers' rows: 158
    assert [t for t in page.text if t.startswith("and ")] == [
        "and 697 more rows",
        "and 138 more rows",
    ]
    assert "717 of 328,063 rows missing (0.22 %)" in page.text
    assert not re.search(r"(?:src|href)\s*=\s*[\"']?\s*(?:https?:)?//", document)
    missing = run_lookout([*config, "show", "9", "--html", "x.html"], env, cwd=tmp_path)
    assert (missing.returncode, missing.stderr) == (
        2,
        "error: no run with id 9 (see 'lookout reports')\n",
    )
    assert not (tmp_path / "x.html").exists()


@pytest.mark.browser
def test_the_file_opens_in_chromium_without_a_single_request(tmp_path: Path) -> None:
    from tests.worker.web.test_browser import ARGS, CHROMIUM

    if not Path(CHROMIUM).exists():
        pytest.skip(f"{CHROMIUM} is missing")
    from playwright.sync_api import sync_playwright

    path = tmp_path / "run.html"
    path.write_text(html_report(_report(), [_history()], made_at=SLOT), encoding="utf-8")
    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=CHROMIUM, args=ARGS)
        page = browser.new_page()
        requests: list[str] = []
        page.on("request", lambda request: requests.append(request.url))
        dialogs: list[str] = []
        page.on("dialog", lambda dialog: (dialogs.append(dialog.message), dialog.dismiss()))
        page.goto(path.as_uri())
        assert page.locator("svg.chart").count() == 1
        assert page.locator("table.checks td").first.inner_text() == SCRIPT
        browser.close()
    assert requests == [path.as_uri()] and dialogs == []


def test_the_second_opinion_is_one_line() -> None:
    opinion = {"urgency": "act_soon", "flags": ["double_check_disagrees"], "goal_met": 0.123}
    assert (
        opinion_words(opinion) == "urgency act soon · flags: double check disagrees · goal met 12 %"
    )
    assert opinion_words({"error": "timed out", "goal_met": None}) == "none — timed out"
    unset = {"error": "no second opinion: no decision model is configured", "goal_met": None}
    assert opinion_words(unset) == "none — no decision model is configured"
    assert opinion_words(None) == ""
    page = parsed(html_report(replace(_report(), second_opinion=opinion), made_at=SLOT))
    assert "urgency act soon · flags: double check disagrees · goal met 12 %" in page.text


def test_html_is_a_file_of_its_own(tmp_path: Path) -> None:
    env = {"PATH": "/usr/bin:/bin", "LOOKOUT_STORE_URL": f"sqlite:///{tmp_path}/lookout.db"}
    proc = run_lookout(["show", "1", "--html", "x.html", "--json"], env, cwd=tmp_path)
    assert (proc.returncode, proc.stdout) == (2, "")
    assert proc.stderr == "error: --html writes the run as a file: leave out --json and --trace\n"


def test_a_checks_result_shows_its_code_spans_as_code_never_as_backticks() -> None:
    check = CheckResult(
        name="late by carrier",
        sql="SELECT 1",
        expect="== 0",
        value=71,
        outcome=CheckOutcome.FAILED,
        kind="sql",
        reason="worst `9E` & `<i>x</i>` [C1] *not em*",
    )
    document = html_report(replace(_report(), checks=[check]), made_at=SLOT)
    (cell,) = re.findall(r'<td class="value">(.*?)</td>', document, re.S)
    assert cell == (
        "71; worst <code>9E</code> &amp; <code>&lt;i&gt;x&lt;/i&gt;</code> "
        '<a href="#evidence-C1" class="cite" rel="nofollow noopener noreferrer">[C1]</a> '
        "<em>not em</em>"
    )
