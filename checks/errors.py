"""Lookout's exception tree.

Three kinds are kept apart: mistakes of the person configuring Lookout
(``ConfigError``), query problems the agent loop sends back to the model as a
tool result (``QueryError`` and its children), and failures of a run that carry
their context (``SourceError``, ``LLMError``, ``RunError``)::

    LookoutError
    ├── ConfigError            file, line, column, field; CLI exit 2
    │   ├── AutomationError    one problem in one automation file
    │   ├── CheckDefinitionError  a typed check names what its source lacks (field under the check)
    │   └── SuiteError         one problem in an eval suite file (checks.eval.suite)
    ├── ToolArgumentError      bad tool-call arguments; sent back to the model (agent.toolspec)
    ├── QueryError             a query could not give a result; a tool error for the agent
    │   ├── QueryRejected      the SQL guard refused it (rule, reason)
    │   ├── QueryFailed        the database raised an error
    │   └── QueryTimeout       the query ran past its time limit
    ├── SourceError            a source could not be opened or read
    │   └── SourceConfigError  …its settings name what cannot be (a ConfigError too: exit 2)
    ├── StoreError             the report store could not be read or written
    │   └── StoreURLError      …because its URL is not one (also a ConfigError: exit 2)
    ├── LLMError               the LLM endpoint failed (status, body)
    │   └── ContextOverflowError  …because the conversation outgrew the model's context
    ├── RunError               a run could not finish; CLI exit 3
    └── ReviewError            a review request refused (worker.review.vocabulary); HTTP 400
        ├── NotFound           no such run or incident; HTTP 404
        └── InvalidAction      the action does not apply; HTTP 422

Every message is safe to show: secrets are redacted before an error is raised.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from pathlib import PurePath

_CONTROL = re.compile(r"[\x00-\x1f\x7f]")  # written as escapes in one-line messages


class LookoutError(Exception):
    """Root of every error Lookout raises on purpose."""


class ConfigError(LookoutError):
    """A configuration or automation file is wrong.

    Args:
        message: what is wrong, in one line.
        path: the file, when known.
        line: 1-based line in the file, when known.
        column: 1-based column in the file, when known.
        field: dotted path of the field, e.g. ``checks.0.expect``.
    """

    def __init__(
        self,
        message: str,
        *,
        path: str | None = None,
        line: int | None = None,
        column: int | None = None,
        field: str | None = None,
    ) -> None:
        self.message = message
        self.path = path
        self.line = line
        self.column = column
        self.field = field
        super().__init__(self.location_message())

    def location_message(self) -> str:
        """Return ``path:line:column: field: message``, leaving out the parts not known.

        Control characters in the path, the field and the message (a file name,
        a table's name in a field's path or quoted in a message may hold a
        newline) are written as escapes (a backslash and n), so the message
        stays one line and no name can start a line of its own.
        """
        where = ""
        if self.path:
            where = _escaped(self.path)
            if self.line is not None:
                where += f":{self.line}"
                if self.column is not None:
                    where += f":{self.column}"
            where += ": "
        field = f"{_escaped(self.field)}: " if self.field else ""
        return f"{where}{field}{_escaped(self.message)}"


def _escaped(text: str) -> str:
    r"""``text`` with each control character written as its escape (``\n``, ``\x1b``)."""
    return _CONTROL.sub(lambda m: repr(m.group())[1:-1], text)


class AutomationError(ConfigError):
    """One problem in one automation file (see ``ConfigError`` for the fields).

    ``automation`` is the name of the automation the problem is in, when its
    ``name:`` could be read (None for a file that does not parse, say).
    """

    automation: str | None = None

    def concerns(self, names: Iterable[str]) -> bool:
        """Whether the problem is about one of ``names``: by its name, else by its file's name."""
        wanted = set(names)
        if self.automation is not None:
            return self.automation in wanted
        return self.path is not None and PurePath(self.path).stem in wanted


class CheckDefinitionError(ConfigError):
    """A typed check cannot be compiled against its source.

    An unknown table or column, or a filter that does not parse. ``field`` is
    relative to the check (``missing.column``); at run time the message is the
    check's error.
    """


class QueryError(LookoutError):
    """A query gave no result. Sent back to the agent as the tool result."""


class QueryRejected(QueryError):
    """The SQL guard refused a statement before it reached the database.

    Args:
        rule: short name of the rule broken, e.g. ``write``, ``multiple-statements``.
        reason: one line saying what in the statement broke it.
    """

    def __init__(self, rule: str, reason: str) -> None:
        self.rule = rule
        self.reason = reason
        super().__init__(f"rejected ({rule}): {reason}")


class QueryFailed(QueryError):
    """The database raised an error while running an accepted statement."""


class QueryTimeout(QueryError):
    """The query ran past its time limit and was interrupted."""


class SourceError(LookoutError):
    """A source could not be opened, built or described."""


class SourceConfigError(ConfigError, SourceError):
    """A source's settings name what cannot be (an engine Lookout does not read, a table).

    Said at the key's place in the config file when known (CLI exit 2): an engine no
    recipe reads, a listed table the database lacks.

    A ``SourceError`` too, so what catches a source that cannot open catches it.
    """


class StoreError(LookoutError):
    """The report store could not be read or written."""


class StoreURLError(ConfigError, StoreError):
    """The store URL is not one SQLAlchemy can use: a mistake in the settings (CLI exit 2).

    A ``StoreError`` too, so what catches store failures catches it; a store that
    is only unreachable stays a plain ``StoreError``.
    """


class LLMError(LookoutError):
    """The LLM endpoint failed after retries.

    Args:
        message: what failed.
        status: HTTP status, when there was a response.
        body: the start of the response body (at most 500 characters), redacted.
    """

    def __init__(self, message: str, *, status: int | None = None, body: str | None = None) -> None:
        self.status = status
        self.body = body[:500] if body else body
        super().__init__(message if status is None else f"{message} (HTTP {status})")


class ContextOverflowError(LLMError):
    """The conversation no longer fits the model's context window (an HTTP 400 that says so).

    Recognised from the error's code or type (OpenAI's and llama-cpp-python's
    ``context_length_exceeded``, llama.cpp's ``exceed_context_size_error``) or
    its message (vLLM's "maximum context length"); never retried as such: the
    agent loop shrinks the conversation and asks again, or ends the run.
    """


class RunError(LookoutError):
    """A run could not finish; the stored run carries this message."""


def first_line(error: BaseException | None) -> str:
    """The first line of an error's message, from the driver's error when it has one.

    Database drivers add context lines; SQLAlchemy wraps the driver's own error
    (``orig``), whose text is what the person needs.
    """
    cause = getattr(error, "orig", None) or error
    text = str(cause).strip()
    return text.splitlines()[0] if text else type(cause).__name__
