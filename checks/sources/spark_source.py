"""Spark sources: a Spark Connect server (``remote``) or a local session (``master``).

Spark has no read-only session or transaction: nothing in a session stops a
statement from writing. What keeps a Spark source read-only is layer 1, the guard
(``checks.sql.guard`` with ``checks.sql.engines.spark``: one SELECT, no command, no
file reader, no Java call), and this module, which only ever sends the guarded
query through ``spark.sql`` and reads its result: no write path of the DataFrame
API is used. Each session is set (``SESSION_CONF``, Spark's documented SQL
configuration) so that the text cannot reach beyond the tables either:

- ``spark.sql.session.timeZone=UTC``: results never depend on the server's zone;
- ``spark.sql.ansi.enabled=true`` (Spark 4's default, stated): a bad cast or an
  overflow fails the query instead of becoming NULL;
- ``spark.sql.variable.substitute=false``: ``${env:SECRET}`` inside the text is no
  longer replaced by the server's environment or settings before parsing;
- ``spark.sql.runSQLOnFiles=false``: ``parquet.`/path``` names no file.

Each query carries a job tag of its own; the process watchdog interrupts that tag
at the time limit (``SparkSession.interruptTag``), catalog reads at the limit's kill
time. At most ``max(fingerprint_max_rows, max_rows) + 1`` rows are read, streamed
(``toLocalIterator``); variable-size cells are measured in Spark first
(``checks.sources.cells``), and ``TIMESTAMP`` values (an instant) come back as
``unix_micros`` and are made UTC datetimes here, not in the process's own zone.
"""

from __future__ import annotations

import contextlib
import datetime as dt
import itertools
import logging
import re
import threading
import time
import uuid
from collections.abc import Callable, Iterator, Sequence
from typing import Any

from checks.errors import QueryFailed, QueryTimeout, SourceError, first_line
from checks.settings.limits import Limits
from checks.settings.sources import SparkSource
from checks.sources.base import Source
from checks.sources.cells import CellFetch, spark_weight
from checks.sources.fingerprint import collect
from checks.sources.result import Column, DataSet, QueryResult
from checks.sources.watchdog import after
from checks.sql.facts import SourceFacts

SESSION_CONF = {
    "spark.sql.session.timeZone": "UTC",
    "spark.sql.ansi.enabled": "true",
    "spark.sql.variable.substitute": "false",
    "spark.sql.runSQLOnFiles": "false",
}
"""Set on every session before it reads anything (see the module docstring)."""

LOCAL_CONF = {
    "spark.ui.enabled": "false",
    "spark.ui.showConsoleProgress": "false",
}
"""A local session's JVM settings, applied when this process starts it (once)."""

READERS = {".parquet": "parquet", ".csv": "csv", ".json": "json", ".jsonl": "json"}
"""A ``tables:`` file's extension -> the Spark reader that registers it."""

_EPOCH = dt.datetime(1970, 1, 1, tzinfo=dt.UTC)
_TOKEN = re.compile(r"(;\s*token=)[^;]*", re.IGNORECASE)
_START_LOCK = threading.Lock()

for _name in ("SQLQueryContextLogger", "DataFrameQueryContextLogger"):
    # PySpark logs every failed query with its text to stderr; the error is ours to report.
    logging.getLogger(_name).setLevel(logging.CRITICAL + 1)


def shown_url(url: str) -> str:
    """A Spark Connect URL with its ``token=`` parameter hidden (``sc://h:443/;token=***``)."""
    return _TOKEN.sub(r"\1***", url)


class SparkQuerySource(Source):
    """A Spark session read through ``spark.sql``, with the limits of every source.

    Args:
        name: the source's name in the settings.
        config: ``remote`` or ``master``, ``database`` and ``tables``.
        limits: the query limits.

    Raises:
        SourceError: pyspark is missing (naming the extra), the server cannot be
            reached, a ``tables:`` file is missing or of an unknown kind, or the
            database does not exist. Messages never hold a Connect token.

    """

    dialect = "spark"

    def __init__(self, name: str, config: SparkSource, limits: Limits) -> None:
        super().__init__()
        self.name = name
        self.limits = limits
        self._config = config
        self._where = shown_url(config.remote) if config.remote else f"Spark {config.master}"
        self._session = self._start(config)
        try:
            self._setup(config)
        except BaseException:
            self.close()
            raise

    def _start(self, config: SparkSource) -> Any:
        try:
            from pyspark.sql import SparkSession
        except ImportError:
            raise SourceError(
                f"source {self.name}: Spark needs pyspark: pip install 'lookout[spark]'"
            ) from None
        try:
            if config.remote:
                session = SparkSession.builder.remote(config.remote).create()
                self._bound_retries(session)
                return session
            with _START_LOCK:  # one SparkContext per process: the first source starts it
                builder = SparkSession.builder.master(config.master).appName("lookout")
                for key, value in LOCAL_CONF.items():
                    builder = builder.config(key, value)
                return builder.getOrCreate().newSession()
        except ImportError as error:  # Spark Connect's own packages (grpcio, pyarrow, pandas)
            raise SourceError(
                f"source {self.name}: Spark Connect needs its packages ({first_line(error)});"
                " pip install 'lookout[spark]'"
            ) from None
        except Exception as error:
            raise SourceError(
                f"source {self.name}: cannot start {self._where}: {self._message(error)}"
            ) from None

    def _bound_retries(self, session: Any) -> None:
        """Retry an unreachable server for about ``connect_timeout_s``, not Spark's 10 minutes."""
        from pyspark.sql.connect.client.retries import DefaultPolicy

        backoff_ms = max(50, int(self.limits.connect_timeout_s * 1000 / 4))
        session.client.set_retry_policies(
            [DefaultPolicy(max_retries=3, initial_backoff=50, max_backoff=backoff_ms)]
        )

    def _setup(self, config: SparkSource) -> None:
        with self._bounded(f"connect to {self._where}"):
            for key, value in SESSION_CONF.items():
                self._session.conf.set(key, value)
            self.schema = config.database or "default"
            if not self._session.catalog.databaseExists(self.schema):
                raise SourceError(
                    f"source {self.name}: no database {self.schema!r} in {self._where}"
                )
            self._session.catalog.setCurrentDatabase(self.schema)
            self.version = str(self._session.version)
        for table, path in config.tables.items():
            self._register(table, path)

    def _register(self, table: str, path: str) -> None:
        suffix = "." + path.rsplit(".", 1)[-1].lower() if "." in path else ""
        reader = READERS.get(suffix)
        if reader is None:
            raise SourceError(
                f"source {self.name}: tables.{table}: {path} is not a Parquet, CSV or JSON file"
                " (.parquet, .csv, .json, .jsonl)"
            )
        read = self._session.read
        if reader == "csv":
            read = read.option("header", "true").option("inferSchema", "true")
        try:
            with self._bounded(f"read tables.{table}"):
                getattr(read, reader)(path).createOrReplaceTempView(table)
        except SourceError as error:
            if "PATH_NOT_FOUND" in str(error):
                raise SourceError(
                    f"source {self.name}: tables.{table}: {path} does not exist"
                ) from None
            raise

    @contextlib.contextmanager
    def _bounded(self, doing: str) -> Iterator[None]:
        """Tag what the block runs, interrupt it at the limit's kill time, name what failed."""
        tag = f"lookout-{uuid.uuid4().hex}"
        limit_s = self.limits.kill_after_s(self.limits.query_timeout_s)
        self._session.addTag(tag)
        try:
            with after(limit_s, lambda: self._interrupt(tag)):
                yield
        except SourceError:
            raise
        except Exception as error:
            raise SourceError(
                f"source {self.name}: cannot {doing}: {self._message(error)}"
            ) from None
        finally:
            self._session.removeTag(tag)

    def _interrupt(self, tag: str) -> None:
        with contextlib.suppress(Exception):  # the session may be closing
            self._session.interruptTag(tag)

    def _message(self, error: BaseException) -> str:
        condition = getattr(error, "getCondition", lambda: None)()
        text = first_line(error)
        if condition and condition not in text:
            text = f"[{condition}] {text}"
        return shown_url(text)

    def _load_catalog(self) -> list[DataSet]:
        # Each statement is bounded on its own (``_bounded``), as a SQL source's are.
        with self._bounded("read the catalog"):
            tables = self._session.catalog.listTables(self.schema)
        found = []
        for table in tables:
            if table.isTemporary and table.name not in self._config.tables:
                continue  # another session's view could never be read by this one
            ident = _quote(table.name)
            if not table.isTemporary:
                ident = f"{_quote(self.schema or 'default')}.{ident}"
            with self._bounded(f"read the columns of {table.name}"):
                columns = _columns(self._session.table(ident).schema)
            with self._bounded(f"count the rows of {table.name}"):
                count = self._session.sql(f"SELECT count(*) FROM {ident}").collect()[0][0]
            found.append(DataSet(table.name, columns, int(count)))
        return found

    def _load_facts(self) -> SourceFacts:
        """Spark's built-in functions (``SHOW SYSTEM FUNCTIONS``): no catalog or session UDF."""
        with self._bounded("read the built-in functions"):
            functions = [r[0] for r in self._session.sql("SHOW SYSTEM FUNCTIONS").collect()]
        with self._bounded("read the databases"):
            schemas = [d.name for d in self._session.catalog.listDatabases()]
        return SourceFacts(
            frozenset(str(f).lower() for f in functions),
            frozenset(),
            frozenset(str(s).lower() for s in schemas),
        )

    def _read_columns(self, name: str) -> tuple[Column, ...]:
        with self._bounded(f"read the columns of {name}"):
            return _columns(self._session.table(_quote(name)).schema)

    def _execute(self, sql: str, *, max_rows: int, timeout_s: float) -> QueryResult:
        started = time.monotonic()
        tag = f"lookout-{uuid.uuid4().hex}"
        self._session.addTag(tag)
        try:
            with after(timeout_s, lambda: self._interrupt(tag)):
                frame = self._session.sql(sql)
                fields = frame.schema.fields
                fetch, rows = self._fetch(
                    frame, fields, max(self.limits.fingerprint_max_rows, max_rows)
                )
                try:
                    return collect(
                        fetch,
                        sql=sql,
                        columns=[f.name for f in fields],
                        max_rows=max_rows,
                        scan_rows=self.limits.fingerprint_max_rows,
                        started=started,
                        timeout_s=timeout_s,
                        limits=self.limits,
                    )
                finally:
                    # A result read no further is released now, not when garbage-collected
                    # (Spark Connect's is a generator; a local session's may not close).
                    getattr(rows, "close", lambda: None)()
        except (QueryTimeout, QueryFailed):
            raise
        except Exception as error:
            if time.monotonic() - started >= timeout_s:
                raise QueryTimeout(
                    f"the query ran past its time limit of {timeout_s:g} s"
                ) from None
            raise QueryFailed(self._message(error)) from None
        finally:
            self._session.removeTag(tag)

    def _fetch(
        self, frame: Any, fields: Sequence[Any], scan: int
    ) -> tuple[Callable[[int], list[tuple[Any, ...]]], Iterator[Any]]:
        """The result's rows, ``scan + 1`` at most, cells measured and instants made UTC.

        Returns the ``fetchmany`` and the stream it reads from (close it when done).
        """
        names = [f"c{i}" for i in range(len(fields))]
        types = [f.dataType.simpleString() for f in fields]
        weights = [spark_weight(t) for t in types]
        cells = CellFetch(
            types,
            weights,
            fetch_chars=max(self.limits.fetch_cell_chars, self.limits.max_cell_chars),
            head_chars=self.limits.max_cell_chars,
        )
        inner: list[str] = []
        outer: list[str] = []
        limit = cells.fetch_chars
        for i, (kind, weight) in enumerate(zip(types, cells.weights, strict=True)):
            x, w = f"`c{i}`", f"`w{i}`"
            inner.append(x)
            if weight is None:
                outer.append(f"unix_micros({x})" if kind == "timestamp" else x)
                continue
            inner.append(f"{weight.size.format(x=x)} AS {w}")
            big = f"{w} > {limit}"
            digest = f"md5({x})" if kind == "binary" else f"md5(CAST({x} AS STRING))"
            outer += [
                f"CASE WHEN {w} <= {limit} THEN {x} END",
                f"CASE WHEN {big} THEN {w} END",
                f"CASE WHEN {big} THEN {digest} END",
            ]
            if weight.head is not None:
                outer.append(
                    f"CASE WHEN {big} THEN {weight.head.format(x=x, n=cells.head_chars)} END"
                )
        wide = frame.toDF(*names).selectExpr(*inner).selectExpr(*outer).limit(scan + 1)
        rows = wide.toLocalIterator()
        instants = [i for i, kind in enumerate(types) if kind == "timestamp"]
        read = cells.reader(lambda size: list(itertools.islice(rows, size)))

        def fetch(size: int) -> list[tuple[Any, ...]]:
            batch = read(size)
            if not instants:
                return batch
            return [_as_instants(row, instants) for row in batch]

        return fetch, rows

    def engine_version(self) -> str:
        """The engine's name and version ("Spark 4.0.1")."""
        return f"Spark {self.version}"

    def write_warnings(self) -> list[str]:
        """Spark has no grants to read: one sentence saying what keeps the source read-only."""
        return [
            f"{self._where} has no read-only mode: only the guard and Lookout's own"
            " read-only use of the session keep it from writing"
        ]

    def close(self) -> None:
        """End this source's session (a local session's JVM stays up for the process)."""
        session = getattr(self, "_session", None)
        if session is None:
            return
        self._session = None
        if self._config.remote:
            release(session)


def release(session: Any) -> None:
    """End a Spark Connect session on its server and close its channel, and only that.

    Not ``session.stop()``, nor letting the session be garbage-collected as it is:
    both call ``client.close()``, which in pyspark 4.0 also shuts the process-wide
    pool that every other Connect session releases its results through
    (``ExecutePlanResponseReattachableIterator.shutdown``), so another source's
    query failed with "cannot schedule new futures after shutdown".
    """
    client = session.client
    with contextlib.suppress(Exception):
        client.release_session()
    with contextlib.suppress(Exception):
        client._channel.close()
    client.close = lambda: None  # what the session's __del__ calls


def _as_instants(row: tuple[Any, ...], places: list[int]) -> tuple[Any, ...]:
    values = list(row)
    for i in places:
        if values[i] is not None:
            values[i] = _EPOCH + dt.timedelta(microseconds=int(values[i]))
    return tuple(values)


def _columns(schema: Any) -> tuple[Column, ...]:
    return tuple(Column(f.name, f.dataType.simpleString(), f.nullable) for f in schema.fields)


def _quote(name: str) -> str:
    return "`" + name.replace("`", "``") + "`"
