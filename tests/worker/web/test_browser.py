"""End to end in headless Chromium: Debian's ``chromium`` driven by Playwright, a real uvicorn.

Never a downloaded browser: Playwright launches ``/usr/bin/chromium``
(``executable_path``). Without it these tests fail under ``CI=true`` (run
``.ci/browser``) and are skipped with the reason elsewhere. Screenshots of
the list and a report go to ``$LOOKOUT_SCREENSHOTS`` when set, else to the
test's temporary folder.
"""

from __future__ import annotations

import datetime as dt
import os
import re
import shutil
from collections.abc import Iterator
from pathlib import Path
from zoneinfo import ZoneInfo

import duckdb
import pytest
from playwright.sync_api import Browser, Page, expect, sync_playwright
from sqlalchemy import select

from checks.automation.loader import load_automations
from checks.automation.model import Automation
from checks.report import CheckResult, Finding, FindingSource, RunReport, Status, outcome_of
from checks.run import SourcePool
from checks.run_lifecycle import run_and_store
from checks.settings.config import Settings
from checks.store.run_tables import CheckRow
from checks.store.store import Store
from tests.stored_reports import store_report
from tests.worker.web.web_support import (
    PASSWORD,
    PROBLEM_ROWS,
    LiveServer,
    World,
    app_for,
    build_problem_world,
    world_settings,
)

CHROMIUM = "/usr/bin/chromium"
ARGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
]


@pytest.fixture(scope="module")
def browser() -> Iterator[Browser]:
    if not (os.path.exists(CHROMIUM) and shutil.which(CHROMIUM)):
        if os.environ.get("CI") == "true":
            pytest.fail(f"{CHROMIUM} is missing: CI must install it (.ci/browser)")
        pytest.skip(f"{CHROMIUM} is missing: apt-get install chromium (or run .ci/browser)")
    with sync_playwright() as playwright:
        launched = playwright.chromium.launch(executable_path=CHROMIUM, args=ARGS)
        yield launched
        launched.close()


@pytest.fixture
def site(web_world: World) -> Iterator[str]:
    with LiveServer(app_for(web_world)) as server:
        yield server.url


@pytest.fixture
def page(browser: Browser) -> Iterator[Page]:
    context = browser.new_context(viewport={"width": 1400, "height": 900})
    opened = context.new_page()
    opened.set_default_timeout(10_000)
    yield opened
    context.close()


def shots_dir(tmp_path: Path) -> Path:
    folder = Path(os.environ.get("LOOKOUT_SCREENSHOTS") or tmp_path)
    folder.mkdir(parents=True, exist_ok=True)
    return folder


def log_in(page: Page, site: str, path: str = "/") -> None:
    page.goto(site + path)
    expect(page.get_by_role("heading", name="Log in")).to_be_visible()
    page.get_by_label("User name").fill("alice")
    page.get_by_label("Password").fill(PASSWORD)
    page.get_by_role("button", name="Log in").click()


def board_rows(page: Page) -> list[str]:
    rows = page.locator("#board tr.row")
    return [rows.nth(i).get_attribute("data-automation") or "" for i in range(rows.count())]


def test_log_in_filter_open_acknowledge_resolve_and_leave_needs_me(
    page: Page, site: str, web_world: World, tmp_path: Path
) -> None:
    log_in(page, site)
    expect(page.get_by_role("heading", name="Reports")).to_be_visible()
    expect(page.locator("#board tr.row")).to_have_count(4)
    page.screenshot(path=str(shots_dir(tmp_path) / "list.png"), full_page=True)

    page.locator('nav.quick a[data-filter="disagreements"]').click()
    expect(page).to_have_url(site + "/?f=disagreements")
    expect(page.locator("#board tr.row")).to_have_count(1)
    page.get_by_role("link", name="planes-registry").click()
    run = web_world.latest("planes-registry")
    expect(page).to_have_url(f"{site}/runs/{run}")
    expect(page.locator("#second-opinion")).to_contain_text("disagrees")
    page.screenshot(path=str(shots_dir(tmp_path) / "report.png"), full_page=True)

    page.get_by_role("button", name="Acknowledge").click()
    expect(page.locator("#review")).to_contain_text("Ack'd by alice")
    page.get_by_label("Reason").select_option("false_positive")
    page.get_by_label("Resolve note").fill("fleet numbers, not tail numbers")
    page.get_by_role("button", name="Resolve").click()
    expect(page.locator("#review")).to_contain_text("Resolved: False positive")
    expect(page.locator("#timeline")).to_contain_text("alice resolved: False positive")

    page.get_by_role("link", name="← Reports").click()
    page.locator('nav.quick a[data-filter="needs_me"]').click()
    expect(page).to_have_url(site + "/?f=needs_me")
    expect(page.locator("#board tr.row")).to_have_count(2)
    assert board_rows(page) == ["hot-weather", "broken-check"]


def test_hostile_report_content_stays_harmless(page: Page, site: str, web_world: World) -> None:
    run = web_world.latest("hot-weather")
    log_in(page, site, f"/runs/{run}")
    expect(page).to_have_url(f"{site}/runs/{run}")
    summary = page.locator(".summary")
    expect(summary).to_contain_text("<script>window.__pwned = 1</script>")
    expect(summary).to_contain_text('<img src="x" onerror="window.__pwned = 2">')
    assert page.evaluate("typeof window.__pwned") == "undefined"
    assert page.locator(".summary script").count() == 0
    assert page.locator("img").count() == 0
    assert page.locator("[onerror], [onclick], [onload]").count() == 0
    link = summary.get_by_role("link", name="runbook")
    assert link.get_attribute("href") == "https://example.com/runbook"
    assert link.get_attribute("target") == "_blank"
    assert set((link.get_attribute("rel") or "").split()) >= {"nofollow", "noopener"}
    tracker = summary.get_by_role("link", name="[image: tracker]")
    assert tracker.get_attribute("href") == "https://evil.example/t.png"  # a link, never loaded
    summary.get_by_role("link", name="[Q1]").click()
    expect(page).to_have_url(f"{site}/runs/{run}#evidence-Q1")
    assert page.evaluate("typeof window.__pwned") == "undefined"


def test_without_login_the_browser_gets_the_login_page_and_the_api_401(
    page: Page, site: str, web_world: World
) -> None:
    run = web_world.latest("broken-check")
    page.goto(f"{site}/runs/{run}")
    expect(page).to_have_url(f"{site}/login?next=%2Fruns%2F{run}")
    expect(page.get_by_role("heading", name="Log in")).to_be_visible()
    api = page.request.get(f"{site}/api/runs/{run}")
    assert api.status == 401
    page.get_by_label("User name").fill("alice")
    page.get_by_label("Password").fill(PASSWORD)
    page.get_by_role("button", name="Log in").click()
    expect(page).to_have_url(f"{site}/runs/{run}")
    expect(page.locator(".finding")).to_contain_text("Error")
    assert page.request.get(f"{site}/api/runs/{run}").status == 200  # the session now


def test_typing_in_the_search_filters_the_list_in_place(page: Page, site: str) -> None:
    log_in(page, site)
    expect(page.locator("#board tr.row")).to_have_count(4)
    page.get_by_label("Search").fill("registry")
    expect(page.locator("#board tr.row")).to_have_count(1)
    expect(page).to_have_url(site + "/?q=registry")
    assert board_rows(page) == ["planes-registry"]
    page.get_by_label("Owner").select_option("fleet-data")
    expect(page).to_have_url(site + "/?owner=fleet-data&q=registry")
    page.locator('nav.quick a[data-filter="needs_me"]').click()  # the chips keep the search
    expect(page).to_have_url(site + "/?f=needs_me&owner=fleet-data&q=registry")
    assert board_rows(page) == ["planes-registry"]


CSP_WATCH = """
window.__csp = [];
document.addEventListener("securitypolicyviolation", (e) => {
  window.__csp.push(`${e.violatedDirective} ${e.blockedURI} ${e.sample}`);
});
"""


def earlier_runs(world: World, automation: str, check: str, count: int) -> list[float | None]:
    """Store ``count`` finished runs of one check before the world's own, a day apart.

    Every fifth value is ``0.02``-ish; run 20 is above the ``< 0.03`` band and
    run 25 has no value (an error). Returns the values, oldest first.
    """
    first = world.store.get_run(world.runs[automation][0])
    assert first is not None
    values: list[float | None] = []
    for i in range(count):
        value = None if i == 25 else 0.045 if i == 20 else 0.02 + (i % 5) / 1000
        slot = first.scheduled_for - dt.timedelta(days=count - i)
        passed = None if value is None else value < 0.03
        store_report(
            world.store,
            RunReport(
                automation=automation,
                scheduled_for=slot,
                status=Status.ERROR if value is None else Status.COMPLETED,
                finding=None
                if value is None
                else Finding.CLEAR
                if passed
                else Finding.NEEDS_ATTENTION,
                finding_source=FindingSource.CHECKS,
                checks=[
                    CheckResult(
                        check,
                        "SELECT …",
                        "< 0.03",
                        value,
                        outcome_of(passed, "connection reset" if value is None else None),
                        "connection reset" if value is None else None,
                        "C1",
                    )
                ],
                started_at=slot,
                finished_at=slot,
            ),
        )
        values.append(value)
    return values


def test_the_report_charts_each_checks_stored_values_inside_the_csp(
    page: Page, site: str, web_world: World, tmp_path: Path
) -> None:
    earlier_runs(web_world, "cancellation-rate", "cancelled share", 33)
    run = web_world.latest("cancellation-rate")
    stored = web_world.store.series("cancellation-rate", "cancelled share", completed_only=False)
    assert len(stored) == 30 and stored[-1].run_id == run
    console: list[str] = []
    page.on("console", lambda m: console.append(m.text) if m.type == "error" else None)
    page.add_init_script(CSP_WATCH)
    log_in(page, site, f"/runs/{run}")
    expect(page).to_have_url(f"{site}/runs/{run}")

    figure = page.locator("#history figure.history")
    expect(figure).to_have_count(1)
    expect(figure.locator("figcaption")).to_have_text(
        "cancelled share the last 30 of 35 runs · 1 failed"
    )
    chart = page.get_by_role(
        "img",
        name=re.compile(r"^cancelled share over the last 30 of 35 runs, 1 failed\. Oldest first: "),
    )
    expect(chart).to_be_visible()
    points = chart.locator("g.point")
    expect(points).to_have_count(30)
    drawn = points.evaluate_all(
        "gs => gs.map(g => [Number(g.dataset.run), g.dataset.value, g.dataset.high,"
        " g.dataset.outcome])"
    )
    assert drawn == [
        [p.run_id, "" if p.value is None else repr(p.value), repr(p.high), p.outcome]
        for p in stored
    ]
    assert [p.outcome for p in stored].count("failed") == 1  # run 20 of the earlier ones
    failed = chart.locator("g.point.failed")
    expect(failed).to_have_count(1)
    assert failed.get_attribute("class") == "point failed above"
    assert failed.locator("path.marker").count() == 1  # a triangle, not a circle
    expect(failed.locator("title")).to_have_text(
        re.compile(r"^run \d+ · .* · 0\.045 · band up to 0\.03 · failed, above the band$")
    )
    expect(chart.locator("g.point.missing")).to_have_count(1)
    current = chart.locator("g.point.current")
    assert current.get_attribute("data-run") == str(run)
    expect(current.locator("title")).to_have_text(re.compile(rf"^this run {run} · "))
    box = chart.bounding_box()
    assert box is not None and box["width"] > 500 and box["height"] > 100
    band = chart.locator("rect.band")
    assert band.count() == 1 and band.evaluate("r => getComputedStyle(r).fill") != "none"
    page.screenshot(path=str(shots_dir(tmp_path) / "report-chart.png"), full_page=True)

    assert page.evaluate("window.__csp") == []
    assert console == []
    # the watch itself works: an inline style attribute is what the policy refuses
    page.evaluate("document.body.setAttribute('style', 'color: red')")
    page.wait_for_function("window.__csp.length > 0")
    assert page.evaluate("window.__csp")[0].startswith("style-src")


def test_a_goal_only_report_has_no_chart_and_an_error_is_a_cross(
    page: Page, site: str, web_world: World
) -> None:
    log_in(page, site, f"/runs/{web_world.latest('hot-weather')}")
    expect(page.locator(".finding")).to_contain_text("Needs attention")
    assert page.locator("#history").count() == 0
    page.goto(f"{site}/runs/{web_world.latest('broken-check')}")
    chart = page.locator("#history svg.chart")
    expect(chart).to_have_count(1)
    expect(chart.locator("g.point.missing.current title")).to_have_text(
        re.compile(r"· no value · band from 0 · error: no value$")
    )


def test_the_report_says_which_rows_are_new_and_gone(
    page: Page, tmp_path: Path, flights_settings: Settings
) -> None:
    db = tmp_path / "fleet.duckdb"
    url = f"sqlite:///{tmp_path / 'lookout.db'}"
    settings = world_settings(
        flights_settings,
        url,
        tmp_path / "automations",
        sources={"fleet": {"type": "duckdb", "database": str(db)}},
    )
    automation = Automation.model_validate(
        {
            "name": "small-planes",
            "source": "fleet",
            "goal": "Every plane seats more than 100.",
            "checks": [
                {
                    "name": "small planes",
                    "sql": "SELECT tail, seats FROM planes WHERE seats <= 100 ORDER BY tail",
                    "expect": "empty",
                }
            ],
            "path": "inline.yaml",
            "line": 1,
        }
    )
    hostile = "<img src=x onerror=window.__pwned=3>"  # 36 characters: named whole
    world = World(settings, Store(url))
    runs = []
    for rows in (
        [("N100AA", 50), ("N200AA", 60)],
        [(hostile, 40), ("N200AA", 60), ("N724MQ", 70), ("N725MQ", 80)],
    ):
        with duckdb.connect(str(db)) as conn:
            conn.execute("CREATE OR REPLACE TABLE planes (tail VARCHAR, seats INTEGER)")
            conn.executemany("INSERT INTO planes VALUES (?, ?)", rows)
        with SourcePool(settings) as pool:
            runs.append(run_and_store(automation, settings, pool, world.store).run_id)
    line = f"3 new rows since the last run ({hostile}, N724MQ, …); 1 gone (N100AA)"
    try:
        with LiveServer(app_for(world)) as server:
            log_in(page, server.url, f"/runs/{runs[1]}")
            expect(page).to_have_url(f"{server.url}/runs/{runs[1]}")
            expect(page.locator("#second-opinion .row-change")).to_have_text(
                f"C1: {line} vs run {runs[0]}"
            )
            expect(page.locator("#diff ul.diff li.changed")).to_contain_text(f"C1 changed: {line}")
            diff = page.locator("#diff .row-diff")
            expect(diff.locator("p")).to_have_text(
                f"C1 row by row: {line} (against C1 of run {runs[0]})"
            )
            expect(diff.locator("tr.added")).to_have_count(3)
            expect(diff.locator("tr.added").first).to_have_text(f"+{hostile}40")
            expect(diff.locator("tr.removed")).to_have_text("−N100AA50")
            page.screenshot(path=str(shots_dir(tmp_path) / "row-changes.png"), full_page=True)
            assert page.evaluate("typeof window.__pwned") == "undefined"
            assert page.locator("#diff img").count() == 0
    finally:
        world.store.close()


@pytest.fixture(scope="module")
def problem_site(
    tmp_path_factory: pytest.TempPathFactory, flights_settings: Settings
) -> Iterator[tuple[str, World]]:
    world = build_problem_world(tmp_path_factory.mktemp("problems"), flights_settings)
    with LiveServer(app_for(world)) as server:
        yield server.url, world
    world.store.close()


def test_each_row_says_what_is_wrong_and_severity_orders_when_no_decision_model_ranks(
    page: Page, problem_site: tuple[str, World], tmp_path: Path
) -> None:
    site, world = problem_site
    log_in(page, site)
    expect(page.locator("#board tr.row")).to_have_count(6)
    page.screenshot(path=str(shots_dir(tmp_path) / "list-what-is-wrong.png"), full_page=True)
    rows = page.locator("#board tr.row")
    shown = [
        (
            rows.nth(i).get_attribute("data-automation"),
            rows.nth(i).locator("td.severity").inner_text(),
            rows.nth(i).locator("td.wrong").inner_text(),
        )
        for i in range(rows.count())
    ]
    assert shown == PROBLEM_ROWS
    assert page.evaluate("typeof window.__pwned") == "undefined"  # the hostile value is text
    assert page.locator("#board td.wrong script").count() == 0
    assert all(t == "—" for t in page.locator("#board tr.row td:first-child").all_inner_texts())
    page.get_by_role("link", name="cancelled-medium").click()  # the full report: one click
    expect(page).to_have_url(f"{site}/runs/{world.latest('cancelled-medium')}")
    expect(page.locator("body")).to_contain_text("cancelled share")


SLOT = dt.datetime(2026, 11, 30, 15, 0, tzinfo=dt.UTC)  # Monday 10:00 in New York
DAILY = [100, 104, 98, 101, 0, 99, 103, 97, 102, 100, 96, 105, 99, 101]
"""Orders on the 14 New York days before the tested one (the fifth had none: no row)."""


@pytest.fixture
def shop_site(tmp_path: Path, flights_settings: Settings) -> Iterator[tuple[str, Store, int]]:
    """A real ``over:`` anomaly run on DuckDB: 14 baseline days, a spike, the day filling."""
    import duckdb
    import yaml

    database = tmp_path / "shop.duckdb"
    new_york = ZoneInfo("America/New_York")
    rows: list[tuple[int, dt.datetime]] = []
    days = [dt.date(2026, 11, 15) + dt.timedelta(days=i) for i in range(15)]
    for day, count in zip(days, [*DAILY, 180], strict=True):  # 29 November: a spike
        # around both of its midnights: a day cut in UTC would move half of them
        for i in range(count):
            local = dt.datetime.combine(day, dt.time(0, 30) if i % 2 else dt.time(23, 30))
            rows.append((len(rows), local.replace(tzinfo=new_york)))
    rows += [(90_000 + i, dt.datetime(2026, 11, 30, 8, i, tzinfo=new_york)) for i in range(40)]
    with duckdb.connect(str(database)) as conn:
        conn.execute("CREATE TABLE orders (id INTEGER, created_at TIMESTAMPTZ)")
        conn.executemany("INSERT INTO orders VALUES (?, ?)", rows)
    folder = tmp_path / "automations"
    folder.mkdir()
    automation = {
        "name": "shop-volume",
        "source": "shop",
        "timezone": "America/New_York",
        "goal": "Daily orders look like the previous two weeks.",
        "checks": [
            {
                "name": "daily orders",
                "row_count": {"table": "orders"},
                "over": {"column": "created_at", "bucket": "day", "lookback": "14d"},
                "expect": "anomaly",
            }
        ],
    }
    (folder / "shop.yaml").write_text(yaml.safe_dump(automation), "utf-8")
    base = flights_settings.model_dump(mode="json", by_alias=True)
    base["sources"] = {**base["sources"], "shop": {"type": "duckdb", "database": str(database)}}
    url = f"sqlite:///{tmp_path / 'lookout.db'}"
    settings = world_settings(Settings.model_validate(base), url, folder)
    store = Store(url)
    loaded = load_automations(folder, known_sources={"shop"})
    assert loaded.errors == [], loaded.errors
    with SourcePool(settings) as pool:
        report = run_and_store(
            loaded.by_name("shop-volume"), settings, pool, store, scheduled_for=SLOT
        )
    assert report.run_id is not None and report.checks[0].outcome == "failed", report.summary
    with LiveServer(app_for(World(settings, store))) as server:
        yield server.url, store, report.run_id
    store.close()


def test_an_anomaly_over_daily_buckets_is_charted_per_bucket(
    page: Page, shop_site: tuple[str, Store, int], tmp_path: Path
) -> None:
    site, store, run = shop_site
    with store.session() as session:
        (check,) = session.scalars(select(CheckRow).where(CheckRow.run_id == run)).all()
        anomaly, buckets = check.anomaly, check.buckets
    assert anomaly is not None and buckets is not None
    assert [v for _, v in anomaly["baseline"]] == DAILY  # the day with no row counts 0
    page.add_init_script(CSP_WATCH)
    log_in(page, site, f"/runs/{run}")
    expect(page).to_have_url(f"{site}/runs/{run}")
    figure = page.locator("#history figure.history")
    expect(figure.locator("figcaption")).to_have_text(
        "daily orders per day: 14 baseline days, the tested day and the day still filling"
        " · 1 failed"
    )
    chart = figure.get_by_role("img", name=re.compile(r"^daily orders per day over 14 baseline"))
    points = chart.locator("g.point")
    expect(points).to_have_count(16)
    drawn = points.evaluate_all(
        "gs => gs.map(g => [g.getAttribute('class'), g.dataset.value, g.dataset.low,"
        " g.dataset.high])"
    )
    low, high = repr(anomaly["low"]), repr(anomaly["high"])
    assert drawn == [
        *[["point baseline", repr(float(v)), low, high] for v in DAILY],
        ["point failed above current", "180.0", low, high],
        ["point filling", repr(float(buckets["filling_value"])), "", ""],
    ]
    assert buckets["filling_value"] == 40
    titles = points.locator("title").evaluate_all("ts => ts.map(t => t.textContent)")
    assert titles[0] == "day from 2026-11-15 00:00 EST · 100 · baseline"
    assert titles[-2].startswith("day from 2026-11-29 00:00 EST · 180 · band ")
    assert titles[-2].endswith(" · tested: failed, above the band")
    assert titles[-1] == "day from 2026-11-30 00:00 EST · 40 · still filling, not tested"
    expect(page.locator("#history .legend")).to_contain_text("◌ a bucket still filling")
    page.screenshot(path=str(shots_dir(tmp_path) / "report-buckets.png"), full_page=True)
    assert page.evaluate("window.__csp") == []
