"""Eval suites: automations over small data sets whose right answers are known.

A suite file is YAML::

    name: default                      # optional
    description: …                     # optional
    cases:
      - id: invoice-paid-on-day-30     # a slug, unique in the suite; also the automation's name
        why: >-                        # one paragraph: why the answer below is right
          …
        tables:                        # inline data, and/or a DuckDB `setup:` script
          invoices:
            columns: {id: INTEGER, issued_on: DATE, paid_on: DATE}
            rows:
              - [1, 2024-01-05, 2024-02-04]
        setup: |                       # optional; runs after the tables are filled
          CREATE TABLE more AS SELECT range AS n FROM range(10);
        at: 2026-11-30T12:00:00Z       # optional: the run's slot time (zone-aware), for
                                       # checks over time buckets; default: now
        automation:                    # goal, instructions, checks (as in automation files),
          goal: …                      # timeout_s, model; name and source are set here
          checks: [{name: …, sql: …, expect: …}]
        verify:                        # optional: checks the agent never sees, proving the
          - {name: …, sql: …, expect: …}   # answer of a goal-only case (run by the tests)
        answer:
          finding: clear               # clear | needs_attention
          goal_met: true               # optional; default: finding == clear
          urgency: nothing_to_do       # optional: nothing_to_do | worth_a_look | act_soon | act_now

``load_suite`` validates the whole file and raises ``SuiteError`` listing every
problem as ``path:line:column: field: message``, like the automation loader.
``checks.eval.case_data`` builds each case's data into its own DuckDB file.
"""

from __future__ import annotations

import datetime as dt
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

from pydantic import (
    BaseModel,
    ConfigDict,
    Field,
    ValidationError,
    ValidationInfo,
    field_validator,
)
from pydantic_core import ErrorDetails

from checks.automation.check import Check
from checks.automation.model import Automation
from checks.errors import ConfigError
from checks.fields.rules import not_blank, slug
from checks.fields.yaml_places import position
from checks.fields.yaml_tree import Loc, YamlTree

CASE_SOURCE = "case"
"""The source name every case's data is exposed under."""

FindingName = Literal["clear", "needs_attention"]
Urgency = Literal["nothing_to_do", "worth_a_look", "act_soon", "act_now"]

_TYPE = re.compile(r"[A-Za-z][A-Za-z0-9_ ]*(\(\s*\d+\s*(,\s*\d+\s*)?\))?(\[\])?")
_QUOTE_HINT = '; inside {…} a comma ends a value: quote a type holding one, e.g. "DECIMAL(10,2)"'


class SuiteError(ConfigError):
    """A suite file is wrong; ``problems`` holds every problem found, each located.

    The message is the first problem's ``path:line:column: field: message``
    and how many more there are. CLI exit 2.
    """

    def __init__(self, problems: list[ConfigError]) -> None:
        self.problems = problems
        first = problems[0]
        more = f" (and {len(problems) - 1} more)" if len(problems) > 1 else ""
        super().__init__(
            first.message + more,
            path=first.path,
            line=first.line,
            column=first.column,
            field=first.field,
        )


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class TableSpec(_Strict):
    """One inline table: column name → DuckDB type, in order, and its rows.

    Column names may be any text (they are quoted); types are DuckDB type
    names such as ``INTEGER``, ``DECIMAL(10,2)``, ``TIMESTAMP``. Every row
    holds one value per column; YAML dates and times are accepted as such.
    """

    columns: dict[str, str | None] = Field(min_length=1)
    rows: list[list[Any]] = Field(default_factory=list)

    @field_validator("columns")
    @classmethod
    def _types(cls, columns: dict[str, str | None]) -> dict[str, str | None]:
        for name, type_ in columns.items():
            if not name.strip():
                raise ValueError("a column name must not be empty")
            if type_ is None or not _TYPE.fullmatch(type_.strip()):
                hint = "" if type_ and "(" not in type_ else _QUOTE_HINT
                shown = "no type" if type_ is None else f"{type_!r} is not a DuckDB type name"
                raise ValueError(f"column {name!r}: {shown}{hint}")
        return columns

    @field_validator("rows")
    @classmethod
    def _widths(cls, rows: list[list[Any]], info: ValidationInfo) -> list[list[Any]]:
        width = len(info.data.get("columns") or {})
        for index, row in enumerate(rows):
            if width and len(row) != width:
                raise ValueError(
                    f"row {index} has {len(row)} values; the table has {width} columns"
                )
        return rows


class Answer(_Strict):
    """The right answers of a case (``goal_met`` None: the finding is ``clear``)."""

    finding: FindingName
    goal_met: bool | None = None
    urgency: Urgency | None = None

    @property
    def goal_met_label(self) -> bool:
        """The true label of the decision model's "goal met?" question."""
        return self.finding == "clear" if self.goal_met is None else self.goal_met


class _AutomationSpec(_Strict):
    goal: str
    instructions: str | None = None
    checks: list[Any] = Field(default_factory=list)
    timeout_s: float | None = None
    model: str | None = None


class _CaseSpec(_Strict):
    id: str
    why: str
    tables: dict[str, TableSpec] = Field(default_factory=dict)
    setup: str | None = None
    at: dt.datetime | None = None
    automation: _AutomationSpec
    verify: list[Check] = Field(default_factory=list)
    answer: Answer

    @field_validator("id")
    @classmethod
    def _slug(cls, value: str) -> str:
        return slug(value, "an id")

    @field_validator("why")
    @classmethod
    def _said(cls, value: str) -> str:
        return not_blank(value, "must say why the answer is right")

    @field_validator("at")
    @classmethod
    def _aware(cls, value: dt.datetime | None) -> dt.datetime | None:
        if value is not None and value.utcoffset() is None:
            raise ValueError("at needs a time zone, e.g. 2026-11-30T12:00:00Z")
        return value


@dataclass(frozen=True)
class Case:
    """One validated case.

    Attributes:
        automation: the automation run (name = ``id``, source ``case``).
        verify: checks proving the answer that the agent never sees.
        at: the run's slot time (None: each run's own start).
        line: 1-based line of the case in its file; ``data_lines`` maps
            ``setup`` and each table name to its line, for build errors.
    """

    id: str
    why: str
    automation: Automation
    answer: Answer
    tables: dict[str, TableSpec]
    setup: str | None
    verify: list[Check]
    path: str
    line: int
    data_lines: dict[str, int] = field(default_factory=dict)
    at: dt.datetime | None = None

    def reference_automation(self) -> Automation:
        """The automation with the ``verify`` checks added: what proves ``answer`` by SQL."""
        checks = [*self.automation.checks, *self.verify]
        return self.automation.model_copy(update={"checks": checks})


@dataclass(frozen=True)
class Suite:
    """A validated suite file: its cases in file order."""

    path: str
    name: str
    description: str | None
    cases: list[Case]

    def select(self, ids: list[str] | None) -> list[Case]:
        """Return the cases named in ``ids`` (all when None), in suite order.

        Raises:
            ConfigError: an id is not in the suite.
        """
        if not ids:
            return list(self.cases)
        known = {c.id for c in self.cases}
        unknown = [i for i in ids if i not in known]
        if unknown:
            raise ConfigError(
                f"no case {', '.join(map(repr, unknown))} in the suite", path=self.path
            )
        wanted = set(ids)
        return [c for c in self.cases if c.id in wanted]


def load_suite(path: str | Path) -> Suite:
    """Read and validate a suite file.

    Raises:
        SuiteError: the file cannot be read, is not YAML, or any case is
            wrong; every problem is listed with its line and column.
    """
    return _SuiteLoader(str(path)).load()


class _SuiteLoader:
    def __init__(self, path: str) -> None:
        self.path = path
        self.problems: list[ConfigError] = []

    def error(self, message: str, node: Any = None, loc: Loc = ()) -> None:
        line, column = position(node)
        dotted = ".".join(str(part) for part in loc) or None
        self.problems.append(
            ConfigError(message, path=self.path, line=line, column=column, field=dotted)
        )

    def load(self) -> Suite:
        try:
            tree = YamlTree.parse(Path(self.path).read_bytes())
        except OSError as exc:
            raise SuiteError(
                [ConfigError(f"cannot read: {exc.strerror}", path=self.path)]
            ) from None
        except ConfigError as exc:
            message = exc.message
            if message.startswith("the file is empty"):
                message = "the file is empty; expected 'cases:' with a list of cases"
            located = ConfigError(message, path=self.path, line=exc.line, column=exc.column)
            raise SuiteError([located]) from None
        for where, node, message in tree.problems:
            self.error(message, node, where)
        if not tree.complete:  # an alias bomb: the data is cut short, only its problems stand
            raise SuiteError(self.problems)
        cases = self.cases(tree)
        if self.problems:
            raise SuiteError(sorted(self.problems, key=lambda e: (e.line or 0, e.column or 0)))
        data = tree.data
        return Suite(
            self.path, str(data.get("name") or Path(self.path).stem), data.get("description"), cases
        )

    def cases(self, tree: YamlTree) -> list[Case]:
        data = tree.data
        if not isinstance(data, dict) or not isinstance(data.get("cases"), list):
            self.error("a suite is a mapping with 'cases:', a list of cases", tree.near(("cases",)))
            return []
        for key in data:
            if key not in ("name", "description", "cases"):
                self.error(f"unknown field {key!r} (name, description, cases)", tree.keys[(key,)])
        if not data["cases"]:
            self.error("'cases:' is empty", tree.values[("cases",)], ("cases",))
        found: list[Case] = []
        first_line: dict[str, int] = {}
        for index in range(len(data["cases"])):
            case = self.case(tree, ("cases", index))
            if case is None:
                continue
            if case.id in first_line:
                where = ("cases", index, "id")
                self.error(
                    f"duplicate case id {case.id!r} (first on line {first_line[case.id]})",
                    tree.near(where),
                    where,
                )
                continue
            first_line[case.id] = case.line
            found.append(case)
        return found

    def case(self, tree: YamlTree, prefix: Loc) -> Case | None:
        node, data = tree.values[prefix], tree.get(prefix)
        if not isinstance(data, dict):
            self.error("expected a case (a mapping of fields)", node, prefix)
            return None
        try:
            spec = _CaseSpec.model_validate(data)
        except ValidationError as exc:
            for err in exc.errors():
                self.pydantic_error(tree, prefix, err["loc"], err)
            return None
        line = position(node)[0] or 1
        automation = self.automation(tree, prefix, spec, line)
        if automation is None:
            return None
        names = [c.name for c in automation.checks]
        for index, check in enumerate(spec.verify):
            if check.name in names:
                where = (*prefix, "verify", index, "name")
                self.error(f"duplicate check name {check.name!r}", tree.near(where), where)
            names.append(check.name)
        if not spec.tables and not (spec.setup or "").strip():
            self.error("a case needs data: 'tables:' and/or a 'setup:' script", node, prefix)
        lines = {name: self.line_of(tree, (*prefix, "tables", name), line) for name in spec.tables}
        if spec.setup is not None:
            lines["setup"] = self.line_of(tree, (*prefix, "setup"), line)
        return Case(
            spec.id,
            spec.why,
            automation,
            spec.answer,
            spec.tables,
            spec.setup,
            spec.verify,
            self.path,
            line,
            lines,
            spec.at,
        )

    @staticmethod
    def line_of(tree: YamlTree, loc: Loc, default: int) -> int:
        """The 1-based line of the value at ``loc``, or ``default``."""
        return position(tree.values.get(loc))[0] or default

    def automation(
        self, tree: YamlTree, prefix: Loc, spec: _CaseSpec, line: int
    ) -> Automation | None:
        """Validate the case's automation as an automation file would be, named after the case."""
        auto = spec.automation
        fields: dict[str, Any] = {
            "name": spec.id,
            "source": CASE_SOURCE,
            "goal": auto.goal,
            "instructions": auto.instructions,
            "checks": auto.checks,
            "path": self.path,
            "line": line,
        }
        fields.update(
            {k: v for k, v in (("timeout_s", auto.timeout_s), ("model", auto.model)) if v}
        )
        try:
            return Automation.model_validate(fields)
        except ValidationError as exc:
            for err in exc.errors():
                loc = ("id",) if err["loc"][:1] == ("name",) else ("automation", *err["loc"])
                self.pydantic_error(tree, prefix, loc, err)
            return None

    def pydantic_error(
        self, tree: YamlTree, prefix: Loc, relative: tuple[Any, ...], err: ErrorDetails
    ) -> None:
        ctx = err.get("ctx") or {}
        if err["type"] == "lookout" and ctx.get("relative"):  # at, under the model raising it
            relative = (*relative, *ctx["at"])
        elif err["type"] == "lookout":  # raised by Automation at a location of its own
            relative = ("automation", *ctx["at"])
        loc = (*prefix, *relative)
        node = tree.near(loc)
        if err["type"] == "extra_forbidden":
            message, node = f"unknown field {relative[-1]!r}", tree.keys.get(loc) or node
        elif err["type"] == "missing":
            message = "required field is missing"
        elif err["type"] == "lookout":
            message = str(ctx["message"])
        elif err["type"] == "value_error":
            message = str(ctx["error"])
        else:
            message = f"{err['msg'][:1].lower()}{err['msg'][1:]}"
        self.error(message, node, loc)
