"""The base of every settings section."""

from __future__ import annotations

from urllib.parse import urlsplit

from pydantic import BaseModel, ConfigDict
from pydantic_core import PydanticCustomError


class Strict(BaseModel):
    """A settings section: unknown keys are refused, so a typo never goes unnoticed."""

    model_config = ConfigDict(extra="forbid")


def config_error(message: str) -> PydanticCustomError:
    """Return a validation error whose message is shown as is in the ``ConfigError``."""
    return PydanticCustomError("lookout", "{message}", {"message": message})


def http_url(value: str) -> str:
    """Return ``value`` if it is an ``http://`` or ``https://`` URL with a host (RFC 3986).

    The LLM's, the decision model's and the chat channels' endpoints are all
    reached over HTTP: anything else failed only when first used (every run
    retried the agent, or a request raised ``InvalidURL``). The URL is not
    echoed: it may hold a secret.

    Raises:
        ValueError: another scheme, no host, or a URL that does not parse (a bad
            port, an unclosed ``[``).

    """
    try:
        parts = urlsplit(value.strip())
        _ = parts.port  # a port that is not a number raises here
    except ValueError:
        raise ValueError("expected an http:// or https:// URL; this one does not parse") from None
    if parts.scheme.lower() not in ("http", "https") or not parts.hostname:
        raise ValueError("expected an http:// or https:// URL with a host")
    return value


REDIS_SCHEMES = ("redis", "rediss", "redis+socket", "unix", "sentinel")
"""The URL schemes of a Redis server that Celery's transport (kombu) and redis-py take."""


def redis_url(value: str) -> str:
    """Return ``value`` if it is a Redis URL (``REDIS_SCHEMES``), the broker's and the rate limits'.

    Any other scheme failed only when first used: ``run-now`` and the worker
    raised kombu's unknown-transport error (exit 4). The URL is not echoed: it
    may hold a password.

    Raises:
        ValueError: another scheme, or a URL that does not parse.

    """
    try:
        parts = urlsplit(value.strip())
        _ = parts.port  # a port that is not a number raises here
    except ValueError:
        raise ValueError("expected a redis:// URL; this one does not parse") from None
    if parts.scheme.lower() not in REDIS_SCHEMES:
        shown = ", ".join(f"{s}://" for s in REDIS_SCHEMES)
        raise ValueError(f"expected a Redis URL ({shown})")
    return value
