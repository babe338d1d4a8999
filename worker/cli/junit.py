"""Runs as JUnit XML, the test report CI servers read (``lookout run --junit FILE``).

The shape is the Jenkins xUnit plugin's JUnit schema, ``junit-10.xsd``
(https://github.com/jenkinsci/xunit-plugin/blob/master/src/main/resources/org/jenkinsci/plugins/xunit/types/model/xsd/junit-10.xsd),
which Jenkins, GitLab's test reports and GitHub's JUnit reporting actions read,
and pytest's ``junit_family=xunit2`` writes:

- ``<testsuites>`` (``name``, ``tests``, ``failures``, ``errors``, ``time``) holds
  one ``<testsuite>`` per run (``name`` the automation; ``tests``, ``failures``,
  ``errors``, ``skipped``, ``time`` in seconds, ``timestamp`` the run's start in
  UTC, ``file`` the automation's file), its ``<properties>`` first;
- one ``<testcase>`` per case (``worker.cli.ci_runs.run_cases``: ``name`` the
  check's, ``classname`` the automation's), holding at most one of
  ``<error>``, ``<failure>`` or ``<skipped>`` (``message`` one line, ``type``
  the outcome, the text its value, counts, evidence and SQL), then
  ``<system-out>`` with the check's place and a warned check's warning.

Built with ``xml.etree.ElementTree``, which escapes every name and value; the
characters XML 1.0 cannot hold at all (control characters, lone surrogates)
are replaced by U+FFFD first, since escaping cannot carry them.
"""

from __future__ import annotations

import datetime as dt
import re
import xml.etree.ElementTree as ET
from collections.abc import Sequence

from worker.cli.ci_runs import CiCase, CiProblem, CiRun, run_cases

_NOT_XML = re.compile("[^\t\n\r\x20-\ud7ff\ue000-\ufffd\U00010000-\U0010ffff]")
"""What XML 1.0 cannot hold (its ``Char`` production, https://www.w3.org/TR/xml/#charsets)."""


def xml_text(text: object) -> str:
    """``text`` as a string XML can hold: characters outside XML 1.0's ``Char`` become U+FFFD."""
    return _NOT_XML.sub("\ufffd", str(text))


def junit_xml(runs: Sequence[CiRun], problems: Sequence[CiProblem] = ()) -> bytes:
    """The runs as one JUnit XML document (UTF-8, with its declaration; see the module).

    ``problems`` (bad files, unreadable sources) come first as one suite,
    ``configuration``: one ``<error type="config_error">`` case per problem,
    named by its ``file:line:column``.
    """
    root = ET.Element("testsuites", name="lookout")
    suites = [_problems(problems)] if problems else []
    suites += [_suite(run) for run in runs]
    root.extend(suites)
    for key in ("tests", "failures", "errors"):
        root.set(key, str(sum(int(s.get(key, "0")) for s in suites)))
    root.set("time", _seconds(sum(float(s.get("time", "0")) for s in suites)))
    ET.indent(root)
    document: bytes = ET.tostring(root, encoding="utf-8", xml_declaration=True)
    return document + b"\n"


def _problems(problems: Sequence[CiProblem]) -> ET.Element:
    count = str(len(problems))
    suite = ET.Element(
        "testsuite", name="configuration", tests=count, failures="0", errors=count, skipped="0"
    )
    suite.set("time", _seconds(0))
    for problem in problems:
        where = f"{problem.file}:{problem.line}:{problem.column}"
        case = ET.SubElement(suite, "testcase", name=xml_text(where), classname="configuration")
        ET.SubElement(case, "error", message=xml_text(problem.message), type="config_error")
    return suite


def _suite(run: CiRun) -> ET.Element:
    report = run.report
    cases = run_cases(report)
    counts = {r: sum(1 for c in cases if c.result == r) for r in ("failure", "error", "skipped")}
    suite = ET.Element(
        "testsuite",
        name=xml_text(report.automation),
        tests=str(len(cases)),
        failures=str(counts["failure"]),
        errors=str(counts["error"]),
        skipped=str(counts["skipped"]),
        time=_seconds(_elapsed(report.started_at, report.finished_at)),
        file=xml_text(run.file),
    )
    if report.started_at is not None:
        started = report.started_at.astimezone(dt.UTC)
        suite.set("timestamp", started.strftime("%Y-%m-%dT%H:%M:%S"))
    properties = ET.SubElement(suite, "properties")
    for name, value in _properties(run).items():
        ET.SubElement(properties, "property", name=name, value=xml_text(value))
    for case in cases:
        suite.append(_case(run, case))
    return suite


def _properties(run: CiRun) -> dict[str, str]:
    report = run.report
    found = {
        "run_id": report.run_id,
        "status": report.status,
        "finding": report.finding,
        "finding_source": report.finding_source,
        "source": report.definition.get("source"),
        "owner": report.definition.get("owner"),
        "severity": report.definition.get("severity"),
        "file": run.file,
        "line": run.line,
    }
    return {k: str(v) for k, v in found.items() if v is not None}


def _case(run: CiRun, case: CiCase) -> ET.Element:
    element = ET.Element(
        "testcase", name=xml_text(case.name), classname=xml_text(run.report.automation)
    )
    if case.result != "passed":
        result = ET.SubElement(
            element, case.result, message=xml_text(case.message), type=xml_text(case.kind)
        )
        if case.details:
            result.text = xml_text("\n".join(case.details))
    out = [f"{run.file}:{run.line_of(case.check)}"]
    if case.kind == "warned":
        out += [case.message, *case.details]
    ET.SubElement(element, "system-out").text = xml_text("\n".join(out))
    return element


def _elapsed(start: dt.datetime | None, end: dt.datetime | None) -> float:
    return max(0.0, (end - start).total_seconds()) if start and end else 0.0


def _seconds(value: float) -> str:
    return f"{value:.3f}"
