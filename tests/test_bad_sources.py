"""Bad source settings through the real command line: each one located error, in every command.

An engine Lookout does not read (a ``type:`` or a URL's scheme), a password written in
the config file as plain text, and a table that does not exist (listed in a source's
``tables:``, or named by a check) are each said at their line and column, with the
closest name there is, by ``lookout validate``, ``lookout run`` and ``lookout sources
check``; a password is never shown.
"""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path

import pytest

from checks.sources.recipes import supported
from tests.cli_support import run_cli

AUTOMATION = (
    "name: a\nsource: shop\ngoal: g\nchecks:\n  - {name: rows, row_count: {table: orders}}\n"
)


@pytest.fixture
def shop_db(tmp_path: Path) -> Path:
    """A SQLite file with ``orders`` and ``customers``."""
    path = tmp_path / "shop.db"
    with sqlite3.connect(path) as conn:
        conn.execute("CREATE TABLE orders (id INTEGER)")
        conn.execute("CREATE TABLE customers (id INTEGER)")
        conn.execute("INSERT INTO orders VALUES (1)")
    conn.close()
    return path


def lookout(
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
    tmp_path: Path,
    source: str,
    *args: str,
    automation: str = AUTOMATION,
    env: dict[str, str] | None = None,
) -> tuple[int, str, str, Path]:
    """``lookout ARGS`` with a config whose one source ``shop`` is ``source`` (YAML lines)."""
    config = tmp_path / "lookout.yaml"
    config.write_text(f"sources:\n  shop:\n{source}", encoding="utf-8")
    folder = tmp_path / "automations"
    folder.mkdir(exist_ok=True)
    (folder / "a.yaml").write_text(automation, encoding="utf-8")
    base = ["--config", str(config), "--automations", str(folder)]
    store = {"LOOKOUT_STORE_URL": f"sqlite:///{tmp_path}/lookout.db", **(env or {})}
    code, out, err = run_cli(monkeypatch, capsys, [*base, *args], store)
    return code, out, err, config


def test_an_unknown_source_type_names_the_types_and_the_closest(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    for args in (["validate"], ["run", "a"], ["sources", "check"]):
        code, out, err, config = lookout(
            monkeypatch, capsys, tmp_path, "    type: ducdb\n    database: x.duckdb\n", *args
        )
        assert (code, out, err) == (
            2,
            "",
            f"error: {config}:3:11: sources.shop.type: unknown source type 'ducdb' (did you mean"
            " 'duckdb'?): the types are duckdb, sqlalchemy, clickhouse, spark; a database such as"
            " PostgreSQL, MySQL or SQLite is type: sqlalchemy with a url: naming it"
            " (docs/sources.md)\n",
        ), args
    code, _, err, _ = lookout(monkeypatch, capsys, tmp_path, "    type: oracel\n", "validate")
    assert err.startswith(
        "error: " + str(tmp_path / "lookout.yaml") + ":3:11: sources.shop.type: unknown source"
        " type 'oracel': the types are duckdb, sqlalchemy, clickhouse, spark;"
    )


ORACLE = "    type: sqlalchemy\n    url: oracle://scott@db/orcl\n"


def test_a_url_naming_an_engine_lookout_does_not_read(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    message = (
        "sources.shop.url: unsupported database 'oracle': Lookout reads"
        f" {supported()} through a URL (docs/engines.md)"
    )
    code, out, err, config = lookout(monkeypatch, capsys, tmp_path, ORACLE, "validate")
    assert (code, err) == (2, "")
    assert out.splitlines() == [
        f"error: {config}:4:10: {message}",
        "0 automations valid in 0 files; 1 error, 0 warnings",
    ]
    code, out, err, _ = lookout(monkeypatch, capsys, tmp_path, ORACLE, "run", "a")
    assert (code, out.startswith("0 runs: none ·")) == (2, True)  # the run is not started
    assert err.splitlines()[0] == f"error: {config}:4:10: {message}"
    code, out, _, _ = lookout(monkeypatch, capsys, tmp_path, ORACLE, "sources", "check")
    assert code == 2 and out.splitlines()[1] == f"  error: {config}:4:10: {message}"
    misspelt = "    type: sqlalchemy\n    url: postgres://reader@127.0.0.1/shop\n"
    code, out, _, _ = lookout(monkeypatch, capsys, tmp_path, misspelt, "validate", "--no-sources")
    assert out.splitlines()[0] == (
        f"error: {config}:4:10: sources.shop.url: unsupported database 'postgres' (did you mean"
        f" 'postgresql'?): Lookout reads {supported()} through a URL"
        " (docs/engines.md)"
    )


PLAIN = "    type: sqlalchemy\n    url: postgresql://reader:s3cr3t-pw@127.0.0.1:1/shop\n"
PLAIN_MESSAGE = (
    "sources.shop.url: the URL holds a password in plain text: write it as ${NAME} and set NAME"
    " in the environment (user:${SHOP_PASSWORD}@host), or set allow_plaintext_password: true"
    " for this source"
)


@pytest.mark.parametrize("args", [["validate"], ["run", "a"], ["sources", "check"]])
def test_a_password_written_in_the_file_is_an_error_that_never_shows_it(
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
    tmp_path: Path,
    args: list[str],
) -> None:
    code, out, err, config = lookout(monkeypatch, capsys, tmp_path, PLAIN, *args)
    assert (code, out, err) == (2, "", f"error: {config}:4:10: {PLAIN_MESSAGE}\n")
    assert "s3cr3t" not in out + err


def test_a_password_in_the_query_is_one_too_and_from_the_environment_is_none(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    query = "    type: sqlalchemy\n    url: postgresql://reader@127.0.0.1:1/shop?password=pw\n"
    code, _, err, config = lookout(monkeypatch, capsys, tmp_path, query, "validate")
    assert (code, err) == (2, f"error: {config}:4:10: {PLAIN_MESSAGE}\n")
    from_env = "    type: sqlalchemy\n    url: postgresql://reader:${SHOP_PW}@127.0.0.1:1/shop\n"
    code, out, err, _ = lookout(
        monkeypatch, capsys, tmp_path, from_env, "validate", "--no-sources", env={"SHOP_PW": "pw"}
    )
    assert (code, out, err) == (0, "1 automation valid in 1 file; 0 errors, 0 warnings\n", "")
    allowed = PLAIN + "    allow_plaintext_password: true\n"
    code, out, err, _ = lookout(monkeypatch, capsys, tmp_path, allowed, "validate", "--no-sources")
    assert (code, out, err) == (0, "1 automation valid in 1 file; 0 errors, 0 warnings\n", "")


def test_a_listed_table_that_does_not_exist_names_the_closest(
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
    tmp_path: Path,
    shop_db: Path,
) -> None:
    source = f"    type: sqlalchemy\n    url: sqlite:///{shop_db}\n    tables: [orders, custmers]\n"
    located = (
        f"{tmp_path / 'lookout.yaml'}:5:22: sources.shop.tables.1: no table custmers (did you"
        f" mean 'customers'?) in sqlite:///{shop_db}"
    )
    code, out, err, _ = lookout(monkeypatch, capsys, tmp_path, source, "validate")
    assert (code, err) == (2, "")
    assert out.splitlines() == [
        f"error: {located}",
        "0 automations valid in 0 files; 1 error, 0 warnings",
    ]
    code, out, err, _ = lookout(monkeypatch, capsys, tmp_path, source, "run", "a", "--json")
    report = json.loads(out)
    assert (code, report["status"], report["error"]) == (3, "error", located)
    code, out, _, _ = lookout(monkeypatch, capsys, tmp_path, source, "sources", "check")
    assert code == 2 and out.splitlines()[:2] == [
        "shop: configuration error",
        f"  error: {located}",
    ]


def test_a_check_naming_a_table_that_does_not_exist_names_the_closest(
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
    tmp_path: Path,
    shop_db: Path,
) -> None:
    source = f"    type: sqlalchemy\n    url: sqlite:///{shop_db}\n"
    automation = AUTOMATION.replace("table: orders", "table: order")
    code, out, _, _ = lookout(
        monkeypatch, capsys, tmp_path, source, "validate", automation=automation
    )
    path = tmp_path / "automations" / "a.yaml"
    assert code == 2
    assert out.splitlines()[0] == (
        f"error: {path}:5:37: checks.0.row_count.table: no table 'order' in this source"
        " (did you mean 'orders'?)"
    )
    code, out, _, _ = lookout(
        monkeypatch, capsys, tmp_path, source, "run", "a", "--json", automation=automation
    )
    (check,) = json.loads(out)["checks"]
    assert (code, check["outcome"], check["error"]) == (
        3,
        "error",
        "no table 'order' in this source (did you mean 'orders'?)",
    )
