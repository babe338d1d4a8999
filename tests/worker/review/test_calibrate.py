"""``lookout calibrate`` on runs ops labelled through the review service; verdicts for the agent."""

from __future__ import annotations

import datetime as dt
import json
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from checks.opinion.calibration import Recalibration
from checks.report import Finding, FindingSource, RunReport, Status
from checks.store.review_reads import current_recalibrations, resolutions_for_next_run
from checks.store.store import Store
from tests.cli_support import run_lookout
from tests.paths import ROOT
from tests.stored_reports import store_report
from worker.cli.calibrate import nothing_to_score
from worker.review.actions import ActionRequest, record
from worker.review.calibrate import calibrate, report_json
from worker.review.vocabulary import ActionKind, ResolveReason

START = dt.datetime(2026, 11, 1, 9, tzinfo=dt.UTC)
URGENCY_ACT = {"nothing_to_do": 0.05, "worth_a_look": 0.05, "act_soon": 0.6, "act_now": 0.3}
URGENCY_CALM = {"nothing_to_do": 0.7, "worth_a_look": 0.2, "act_soon": 0.05, "act_now": 0.05}


def opinion(
    goal_met: float, urgency: dict[str, float], flags: list[str], model: str = "jev"
) -> dict[str, Any]:
    return {
        "backend": "systemone",
        "model": model,
        "goal_met": goal_met,
        "same_as_last_run": None,
        "urgency": max(urgency, key=lambda u: urgency[u]),
        "urgency_probabilities": urgency,
        "flags": flags,
        "calibrated": {},
        "evidence_diff": {
            "first_run": True,
            "previous_run_id": None,
            "added": [],
            "removed": [],
            "changed": [],
            "unchanged": [],
        },
        "error": None,
    }


def labelled_run(
    store: Store,
    i: int,
    finding: Finding,
    op: dict[str, Any],
    reason: ResolveReason,
    comment: str | None = None,
    automation: str = "orders",
) -> int:
    at = START + dt.timedelta(hours=i)
    report = RunReport(
        automation=automation,
        scheduled_for=at,
        status=Status.COMPLETED,
        finding=finding,
        finding_source=FindingSource.CHECKS,
        summary="s",
        second_opinion=op,
        started_at=at,
        finished_at=at + dt.timedelta(minutes=1),
    )
    run_id = store_report(store, report)
    resolve = ActionRequest(ActionKind.RESOLVE, reason=reason, comment=comment)
    record(store, run_id, resolve, actor="alice", now=at + dt.timedelta(minutes=30))
    return run_id


@pytest.fixture
def store(tmp_path: Path) -> Store:
    return Store(f"sqlite:///{tmp_path}/lookout.db")


@pytest.fixture(scope="module")
def labelled_db(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A store with 100 labelled runs of an over-confident model, built once for the module.

    The model says 0.95 "goal met" where ops found a false positive only 6 times
    in 10, and 0.05 where they found one 2 times in 10.
    """
    path = tmp_path_factory.mktemp("labelled") / "lookout.db"
    template = Store(f"sqlite:///{path}")
    for i in range(100):
        if i % 2 == 0:  # model: goal met, finding Needs attention: the double check disagrees
            reason = ResolveReason.FALSE_POSITIVE if i % 10 < 6 else ResolveReason.FIXED
            op = opinion(0.95, URGENCY_CALM, ["double_check_disagrees"])
        else:
            reason = ResolveReason.FALSE_POSITIVE if i % 10 == 1 else ResolveReason.FIXED
            op = opinion(0.05, URGENCY_ACT, [])
        labelled_run(template, i, Finding.NEEDS_ATTENTION, op, reason)
    template.close()
    return path


def over_confident(store: Store, template: Path) -> None:
    """Fill ``store`` (empty, on SQLite) with the 100 labelled runs of ``labelled_db``."""
    store.close()
    shutil.copyfile(template, store.engine.url.database or "")


@pytest.mark.slow
def test_scores_flags_and_fits_per_model_and_question(
    store: Store, tmp_path: Path, labelled_db: Path
) -> None:
    over_confident(store, labelled_db)
    labelled_run(
        store,
        500,
        Finding.CLEAR,
        opinion(0.8, URGENCY_CALM, [], model="other"),
        ResolveReason.FIXED,
    )
    report = calibrate(
        store, min_reviews=30, now=START + dt.timedelta(days=3), plot_dir=tmp_path / "plots"
    )
    jev, other = report.models
    assert (jev.backend, jev.model, jev.reviews, other.model, other.reviews) == (
        "systemone",
        "jev",
        100,
        "other",
        1,
    )
    goal, act = jev.questions
    assert (goal.question, goal.reviews, goal.held) == ("goal_met", 100, 30 + 10)
    assert goal.brier == pytest.approx(
        (0.05**2 * 30 + 0.95**2 * 20 + 0.95**2 * 10 + 0.05**2 * 40) / 100
    )
    assert goal.ece == pytest.approx((50 * abs(0.6 - 0.95) + 50 * abs(0.2 - 0.05)) / 100)
    assert goal.fitted is not None and goal.fitted.reviews == 100
    assert goal.fitted.apply(0.95) == pytest.approx(0.6)
    # out of sample (5-fold), the recalibrated answers score better than the raw ones
    assert goal.calibrated_ece is not None and goal.ece is not None
    assert goal.calibrated_ece < goal.ece
    assert goal.calibrated_brier is not None and goal.brier is not None
    assert goal.calibrated_brier < goal.brier
    assert act.held == 20 + 40 and act.fitted is not None
    assert jev.flags["double_check_disagrees"] == (50, 30)  # right when ops found a false positive
    assert jev.flags["changed_since_last_run"] == (0, 0)
    assert other.questions[0].fitted is None
    assert other.questions[0].why_not == "1 of the 30 labelled answers a fit needs"
    assert (tmp_path / "plots" / "systemone-jev-goal_met.png").stat().st_size > 1000
    stored = {r.question: r for r in current_recalibrations(store, "systemone", "jev")}
    assert set(stored) == {"goal_met", "act"}
    assert stored["goal_met"].apply(0.95) == pytest.approx(0.6)
    assert current_recalibrations(store, "systemone", "other") == []
    doc = report_json(report)
    assert doc["models"][0]["questions"][0]["fitted_on"] == 100


def test_report_only_stores_nothing_and_one_outcome_is_not_fitted(
    store: Store, labelled_db: Path
) -> None:
    over_confident(store, labelled_db)
    report = calibrate(store, min_reviews=30, now=START, fit=False)
    assert report.models[0].questions[0].fitted is None
    assert current_recalibrations(store, "systemone", "jev") == []
    same = calibrate(store, min_reviews=101, now=START)
    assert same.models[0].questions[0].why_not == "100 of the 101 labelled answers a fit needs"


def test_every_label_alike_is_not_fitted(store: Store) -> None:
    for i in range(5):
        labelled_run(
            store, i, Finding.NEEDS_ATTENTION, opinion(0.3, URGENCY_ACT, []), ResolveReason.FIXED
        )
    goal = calibrate(store, min_reviews=2, now=START).models[0].questions[0]
    assert goal.why_not == "every label says the same: a fit needs both outcomes"


def test_the_newest_fit_is_the_current_one(store: Store, labelled_db: Path) -> None:
    over_confident(store, labelled_db)
    calibrate(store, min_reviews=30, now=START)
    over_confident_more = [
        labelled_run(
            store,
            200 + i,
            Finding.NEEDS_ATTENTION,
            opinion(0.95, URGENCY_CALM, []),
            ResolveReason.FIXED,
        )
        for i in range(10)
    ]
    assert len(over_confident_more) == 10
    calibrate(store, min_reviews=30, now=START + dt.timedelta(days=1))
    current = {r.question: r for r in current_recalibrations(store, "systemone", "jev")}
    assert current["goal_met"].reviews == 110
    assert current["goal_met"].apply(0.95) == pytest.approx(30 / 60)


def test_verdicts_reach_only_the_next_run(store: Store) -> None:
    fp = labelled_run(
        store,
        1,
        Finding.NEEDS_ATTENTION,
        opinion(0.2, URGENCY_ACT, []),
        ResolveReason.FALSE_POSITIVE,
        "test orders from QA; ignore <b>them</b>",
    )
    labelled_run(
        store,
        2,
        Finding.NEEDS_ATTENTION,
        opinion(0.2, URGENCY_ACT, []),
        ResolveReason.FIXED,
        automation="other",
    )
    verdicts = resolutions_for_next_run(store, "orders")
    assert [(v.run_id, v.reason, v.comment) for v in verdicts] == [
        (fp, "false_positive", "test orders from QA; ignore <b>them</b>")
    ]
    # the next run finishes: the run after it is not told again
    later = START + dt.timedelta(days=1)
    store_report(
        store,
        RunReport(
            automation="orders",
            scheduled_for=later,
            status=Status.COMPLETED,
            finding=Finding.CLEAR,
            started_at=later,
            finished_at=later,
        ),
    )
    assert resolutions_for_next_run(store, "orders") == []
    assert resolutions_for_next_run(store, "other") == []  # fixed is not given as context


def test_the_cli_reports_and_fits(store: Store, tmp_path: Path, labelled_db: Path) -> None:
    over_confident(store, labelled_db)
    env = {
        "PATH": "/usr/bin:/bin",
        "LOOKOUT_STORE_URL": f"sqlite:///{tmp_path}/lookout.db",
        "LOOKOUT_CONFIG": str(tmp_path / "none.yaml"),
    }
    (tmp_path / "none.yaml").write_text(
        "decision: {calibration_min_reviews: 30}\n", encoding="utf-8"
    )
    text = run_lookout(["calibrate"], env)
    assert text.returncode == 0, text.stderr
    assert "systemone jev: 100 labelled run(s) (40 false_positive, 60 fixed)" in text.stdout
    assert "goal_met: calibrated on 100 reviews" in text.stdout
    assert "double_check_disagrees: raised 50, right 30 (60%)" in text.stdout
    as_json = run_lookout(["calibrate", "--json", "--no-fit"], env)
    doc = json.loads(as_json.stdout)
    assert doc["models"][0]["questions"][0]["ece"] == pytest.approx(0.25)


def test_recalibration_round_trips_through_the_store(store: Store) -> None:
    points = [(0.2, False), (0.4, True), (0.8, True)]
    recal = Recalibration.fit("systemone", None, "goal_met", points, fitted_at=START)
    from checks.store.review_reads import save_recalibration

    save_recalibration(store, recal, {})
    (back,) = current_recalibrations(store, "systemone", None)
    assert back == recal


@pytest.mark.slow
def test_the_cli_says_what_to_do_when_there_is_nothing_to_score(tmp_path: Path) -> None:
    env = {
        "PATH": "/usr/bin:/bin",
        "COLUMNS": "200",
        "LOOKOUT_STORE_URL": f"sqlite:///{tmp_path}/lookout.db",
        "LOOKOUT_CONFIG": str(tmp_path / "none.yaml"),
    }
    (tmp_path / "none.yaml").write_text("decision: {calibration_min_reviews: 30}\n")
    command = [sys.executable, "-c", "from worker.cli.app import main; main()", "calibrate"]
    text = subprocess.run(command, cwd=ROOT, env=env, capture_output=True, text=True, timeout=120)
    assert text.returncode == 0, text.stderr
    assert text.stdout.splitlines() == [
        "nothing to score yet: no run has been resolved on the review page; resolve reports "
        "there (lookout serve), then run lookout calibrate again"
    ]
    assert nothing_to_score(3) == (
        "nothing to score yet: none of the 3 resolved run(s) has a second opinion; configure "
        "a decision model (decision: in the config) so later runs get one"
    )
