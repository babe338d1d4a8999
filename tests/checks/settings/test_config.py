"""Settings: the file, ${VAR} expansion, LOOKOUT_* overrides, errors that say where, redaction."""

from __future__ import annotations

from pathlib import Path

import pytest

from checks.errors import ConfigError
from checks.settings.config import load_settings, redact
from tests.paths import ROOT


def write(tmp_path: Path, text: str) -> Path:
    path = tmp_path / "lookout.yaml"
    path.write_text(text, encoding="utf-8")
    return path


def test_shipped_config_defines_the_flights_source() -> None:
    settings = load_settings(ROOT / "config" / "lookout.yaml", env={})
    assert sorted(settings.sources) == ["flights"]
    flights = settings.sources["flights"]
    assert flights.type == "duckdb"
    assert sorted(flights.tables) == ["airlines", "airports", "flights", "planes", "weather"]
    assert settings.store_url == "sqlite:///.lookout/lookout.db"
    assert settings.decision.backend == "none"
    assert settings.llm.base_url is None


def test_no_file_falls_back_to_builtin_defaults(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)  # no config/lookout.yaml here
    missing_default = load_settings(None, env={"LOOKOUT_CONFIG": ""})
    assert "flights" in missing_default.sources


def test_environment_wins_and_expands(tmp_path: Path) -> None:
    path = write(tmp_path, "store_url: sqlite:///x.db\nllm:\n  api_key: ${MY_KEY}\n")
    env = {
        "MY_KEY": "sk-secret-123",
        "LOOKOUT_STORE_URL": "postgresql+psycopg://db/lookout",
        "LOOKOUT_LLM_BASE_URL": "http://127.0.0.1:9/v1",
        "LOOKOUT_LLM_MODEL": "m",
        "LOOKOUT_DECISION_BACKEND": "systemone",
        "LOOKOUT_DECISION_BASE_URL": "http://127.0.0.1:9",
        "LOOKOUT_DECISION_MODEL": "jev-latest",
    }
    settings = load_settings(path, env=env)
    assert settings.store_url == "postgresql+psycopg://db/lookout"
    assert settings.llm.api_key == "sk-secret-123"
    assert settings.llm.base_url == "http://127.0.0.1:9/v1"
    assert settings.decision.backend == "systemone"
    assert "sk-secret-123" in settings.secrets()


@pytest.mark.parametrize(
    ("text", "message"),
    [
        (
            "llm:\n  api_key: ${NOPE_NOT_SET}\n",
            "lookout.yaml:2:12: llm.api_key: environment variable NOPE_NOT_SET is not set",
        ),
        (
            "stor_url: x\n",
            "lookout.yaml:1:11: stor_url: unknown field 'stor_url' (did you mean 'store_url'?)",
        ),
        (
            "sources:\n  shop:\n    type: duckdb\n    path: shop.duckdb\n",
            "lookout.yaml:4:11: sources.shop.path: unknown field 'path' (did you mean 'database'?)",
        ),
        (
            "sources:\n  shop:\n    type: duckdb\n    tables:\n      t: {path: a.csv, nulls: []}\n",
            "lookout.yaml:5:31: sources.shop.tables.t.nulls: unknown field 'nulls'",
        ),
        ("limits:\n  max_rowz: 3\n", "unknown field 'max_rowz' (did you mean 'max_rows'?)"),
        ("decision:\n  backend: gpt\n", "lookout.yaml:2:12: decision.backend: Input should be"),
        ("sources: [\n", "lookout.yaml:2:1: not valid YAML"),
        ("- a\n", "lookout.yaml: the config file must be a mapping"),
    ],
)
def test_errors_say_file_and_field(tmp_path: Path, text: str, message: str) -> None:
    path = write(tmp_path, text)
    with pytest.raises(ConfigError) as info:
        load_settings(path, env={})
    assert message in str(info.value)


def test_invalid_override_value_is_a_config_error(tmp_path: Path) -> None:
    path = write(tmp_path, "{}\n")
    with pytest.raises(ConfigError, match=r"decision\.backend"):
        load_settings(path, env={"LOOKOUT_DECISION_BACKEND": "magic"})


def test_redact_hides_secrets_and_signed_query_values() -> None:
    text = "POST https://x.logic.azure.com/w?api-version=1&sig=abcDEF123 with key sk-secret-123"
    shown = redact(text, ["sk-secret-123"])
    assert shown == "POST https://x.logic.azure.com/w?api-version=1&sig=*** with key ***"
