"""A ``type: spark`` source in the settings: its keys, and bad ones said at their place."""

from __future__ import annotations

from pathlib import Path

import pytest

from checks.errors import ConfigError
from checks.settings.config import load_settings
from checks.settings.sources import SparkSource
from checks.sources import dialect_of


def write(tmp_path: Path, text: str) -> Path:
    path = tmp_path / "lookout.yaml"
    path.write_text(text, encoding="utf-8")
    return path


def test_a_spark_source_loads_with_its_defaults(tmp_path: Path) -> None:
    path = write(tmp_path, "sources:\n  lake:\n    type: spark\n    remote: sc://h:15002\n")
    source = load_settings(path, env={}).sources["lake"]
    assert source == SparkSource(type="spark", remote="sc://h:15002")
    assert (source.master, source.database, source.tables) == ("local[1]", None, {})
    assert dialect_of(source) == "spark"


@pytest.mark.parametrize(
    ("body", "said"),
    [
        (
            "    remote: http://spark:15002\n",
            "lookout.yaml:4:13: sources.lake.remote: expected a Spark Connect URL, sc://host:15002",
        ),
        (
            "    url: sc://spark:15002\n",
            "lookout.yaml:4:10: sources.lake.url: unknown field 'url' (did you mean 'remote'?)",
        ),
    ],
    ids=["not sc://", "url for remote"],
)
def test_a_bad_key_is_said_where_it_is(tmp_path: Path, body: str, said: str) -> None:
    path = write(tmp_path, "sources:\n  lake:\n    type: spark\n" + body)
    with pytest.raises(ConfigError) as error:
        load_settings(path, env={})
    assert str(error.value) == f"{tmp_path}/{said}"
