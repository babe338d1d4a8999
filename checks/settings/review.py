"""Settings of the review page and its API: the ``review:`` section of the config.

Read by ``worker.web`` (``lookout serve``). Only hashes of passwords and API
tokens are held here, never the secrets themselves; make them with
``python -m worker.web.passwords password`` (scrypt, for people's passwords)
and ``python -m worker.web.passwords token NAME`` (a fresh random token and
its SHA-256). Users and tokens may also come from the environment as one
string, ``name=HASH,name=HASH`` (``LOOKOUT_REVIEW_USERS``,
``LOOKOUT_REVIEW_TOKENS``); the hash alphabets contain no ``,`` or ``=``.
"""

from __future__ import annotations

import re
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, field_validator

PASSWORD_HASH = re.compile(r"scrypt:\d+:\d+:\d+:[A-Za-z0-9_-]+:[A-Za-z0-9_-]+")
"""``scrypt:N:r:p:SALT:HASH`` with SALT and HASH in unpadded URL-safe base64."""

TOKEN_HASH = re.compile(r"sha256:[0-9a-f]{64}")
"""``sha256:HEX`` of a token of at least 32 random bytes (see ``worker.web.passwords``)."""

NAME = re.compile(r"[A-Za-z0-9_.@-]{1,64}")


def _pairs(value: Any, field: str) -> Any:
    """Accept ``name=HASH,name=HASH`` (the environment's form) as well as a mapping."""
    if not isinstance(value, str):
        return value
    found: dict[str, str] = {}
    for item in filter(None, (part.strip() for part in value.split(","))):
        name, sep, hashed = item.partition("=")
        if not sep:
            raise ValueError(f"{field}: expected name=HASH, got an entry without '='")
        found[name.strip()] = hashed.strip()
    return found


class ReviewSettings(BaseModel):
    """Who may read and act on the review page and API, and how sessions last.

    Attributes:
        users: user name -> scrypt hash of the password (``PASSWORD_HASH``).
            The name is what actions record as who did them (``local`` is
            reserved for the local mode).
        tokens: token name -> SHA-256 of the API token (``TOKEN_HASH``); a
            request with ``Authorization: Bearer TOKEN`` acts as ``token:NAME``.
        secret_key: signs the session cookie (a secret: redacted everywhere).
            Unset: a random key per process, so sessions end at a restart and
            are not shared between processes.
        session_max_age_s: a session cookie is refused this long after the
            login, in seconds (default 43200, 12 h).
        local: allow use without login (what ``lookout serve --local`` turns on);
            refused unless the server listens on a loopback address.
        host: the address ``lookout serve`` listens on (default 127.0.0.1).
        port: the TCP port ``lookout serve`` listens on (default 8000).
        page_size: rows per page of the list (default 50).
        allowed_hosts: names the ``Host`` header may carry besides the
            loopback names, ``host`` and the host of ``review_base_url``
            (``*.example.com`` allowed); any other gets 400.
        trusted_proxies: addresses of the reverse proxies whose
            ``X-Forwarded-Proto`` and ``X-Forwarded-For`` are believed (empty:
            none); then a request that reached the proxy over HTTPS gets a
            ``Secure`` cookie and ``Strict-Transport-Security``.
        login_attempts: failed logins in a row for one user name from one client
            address (ten times as many from one address for any names) before each
            further one waits (1 s, doubling; ``worker.web.login_limits``).
        login_backoff_max_s: the longest such wait, in seconds.
        max_body_bytes: the largest request body taken, in bytes (default 64 KiB;
            an action's body is a few hundred); a larger one gets HTTP 413, and
            an API request's body is read only once its sender is known.
    """

    model_config = ConfigDict(extra="forbid")

    users: dict[str, str] = Field(default_factory=dict)
    tokens: dict[str, str] = Field(default_factory=dict)
    secret_key: str | None = None
    session_max_age_s: int = Field(default=43_200, ge=60)
    local: bool = False
    host: str = "127.0.0.1"
    port: int = Field(default=8000, ge=1, le=65_535)
    page_size: int = Field(default=50, ge=1, le=500)
    allowed_hosts: list[str] = Field(default_factory=list)
    trusted_proxies: list[str] = Field(default_factory=list)
    login_attempts: int = Field(default=5, ge=1)
    login_backoff_max_s: float = Field(default=900.0, gt=0)
    max_body_bytes: int = Field(default=65_536, ge=1024)

    @field_validator("users", mode="before")
    @classmethod
    def _users_from_text(cls, value: Any) -> Any:
        return _pairs(value, "users")

    @field_validator("tokens", mode="before")
    @classmethod
    def _tokens_from_text(cls, value: Any) -> Any:
        return _pairs(value, "tokens")

    @field_validator("users")
    @classmethod
    def _password_hashes(cls, value: dict[str, str]) -> dict[str, str]:
        for name, hashed in value.items():
            if not NAME.fullmatch(name):
                raise ValueError(f"user name {name!r}: use letters, digits and _ . @ -")
            if name == "local":
                raise ValueError("user name 'local' is reserved for the local mode's actions")
            if not PASSWORD_HASH.fullmatch(hashed):
                raise ValueError(
                    f"user {name}: not a password hash (make one with "
                    "'python -m worker.web.passwords password'); plain passwords are refused"
                )
        return value

    @field_validator("tokens")
    @classmethod
    def _token_hashes(cls, value: dict[str, str]) -> dict[str, str]:
        for name, hashed in value.items():
            if not NAME.fullmatch(name):
                raise ValueError(f"token name {name!r}: use letters, digits and _ . @ -")
            if not TOKEN_HASH.fullmatch(hashed):
                raise ValueError(
                    f"token {name}: not a token hash (make one with "
                    "'python -m worker.web.passwords token NAME'); plain tokens are refused"
                )
        return value

    def secrets(self) -> list[str]:
        """Return the values to redact: the session key and every stored hash."""
        found = [self.secret_key] if self.secret_key else []
        return found + list(self.users.values()) + list(self.tokens.values())
