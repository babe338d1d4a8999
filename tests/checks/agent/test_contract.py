"""The report contract: parsing, citations, verification and the override of a Clear."""

from __future__ import annotations

import json
from dataclasses import dataclass

import pytest

from checks.agent.contract import (
    SubmittedReport,
    cited_ids,
    read_report,
    repair_request,
    verify,
)
from checks.report import Finding

KNOWN = {"C1", "Q1", "Q2"}


def args(**overrides: object) -> str:
    payload: dict[str, object] = {
        "finding": "clear",
        "summary": "All good [Q1].",
        "evidence": ["Q1"],
        "confidence": "high",
    }
    payload.update(overrides)
    return json.dumps(payload)


def test_a_valid_report() -> None:
    report, problems = read_report(args())
    assert problems == []
    assert report == SubmittedReport(Finding.CLEAR, "All good [Q1].", ["Q1"], "high")
    assert verify(report, KNOWN) == []


@dataclass(frozen=True)
class Bad:
    raw: str
    problem: str


PAYLOAD_CASES = [
    Bad("not json", "arguments are not valid JSON"),
    Bad("[1]", "arguments must be a JSON object"),
    Bad(args(finding="fine"), "argument 'finding' must be one of clear, needs_attention"),
    Bad(args(confidence="total"), "argument 'confidence' must be one of low, medium, high"),
    Bad(args(evidence="Q1"), "argument 'evidence' must be array"),
    Bad(args(evidence=[1]), "argument 'evidence[]' must be string"),
    Bad(json.dumps({"finding": "clear"}), "missing argument 'summary'"),
    Bad(args(extra=1), "unexpected argument(s): extra"),
]


@pytest.mark.parametrize("case", PAYLOAD_CASES, ids=lambda c: c.problem)
def test_invalid_payloads(case: Bad) -> None:
    report, problems = read_report(case.raw)
    assert report is None
    assert len(problems) == 1 and problems[0].startswith(case.problem)


@dataclass(frozen=True)
class Cited:
    summary: str
    evidence: list[str]
    problems: list[str]


CITATION_CASES = [
    Cited("Fine [Q1] and [C1].", ["Q1", "C1"], []),
    Cited("Fine [Q1, Q2].", ["Q2"], []),
    Cited(
        "Fine.",
        [],
        ["evidence is empty: list the ids the finding rests on (ids in this run: C1, Q1, Q2)"],
    ),
    Cited(
        "Fine [Q1].",
        ["Q7"],
        ["evidence cites 'Q7', which did not run in this run (ids: C1, Q1, Q2)"],
    ),
    Cited(
        "Rate 3% [Q9][C4].",
        ["Q1"],
        ["summary cites [Q9], [C4], which did not run in this run (ids: C1, Q1, Q2)"],
    ),
    Cited(
        "Fine [Q1].",
        ["the flights table"],
        ["evidence holds 'the flights table', which are not ids like Q1 or C1"],
    ),
    Cited("  ", ["Q1"], ["summary is empty"]),
]


@pytest.mark.parametrize("case", CITATION_CASES, ids=lambda c: c.summary)
def test_citations_must_exist_in_this_run(case: Cited) -> None:
    report = SubmittedReport(Finding.CLEAR, case.summary, case.evidence, "low")
    assert verify(report, KNOWN) == case.problems


def test_cited_ids_in_order_once() -> None:
    assert cited_ids("a [Q2] b [Q1; C3] c [Q2] [not an id] [q4]") == ["Q2", "Q1", "C3"]


def test_repair_request_says_exactly_what_was_wrong() -> None:
    text = repair_request(["evidence cites 'Q7', which did not run"], {"Q2", "Q10", "C1"})
    assert text == (
        "Report rejected. Problems:\n"
        "- evidence cites 'Q7', which did not run\n"
        "Call submit_report once more with these fixed. Cite only ids that exist in this run: "
        "C1, Q2, Q10."
    )
