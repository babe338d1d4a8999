"""Settings of the review page and its API: the ``review:`` section of the config.

Read by ``worker.web`` (``lookout serve``). Only hashes of passwords and API
tokens are held here, never the secrets themselves; make them with
``python -m worker.web.passwords password`` (scrypt, for people's passwords)
and ``python -m worker.web.passwords token NAME`` (a fresh random token and
its SHA-256).

Each user and token has a role (``Role``): ``viewer`` reads, ``reviewer``
also acts on runs, ``admin`` also runs automations now. An entry is written
either as ``{hash: HASH, role: ROLE}``, as the string ``ROLE:HASH``, or, as
before roles existed, as the bare ``HASH``; a bare hash takes
``review.default_role`` (``viewer``: least privilege, so an upgrade never
hands anyone more than reading; one line, ``default_role: admin``, restores
the old "everyone may do everything"). Users and tokens may also come from
the environment as one string, ``name=HASH,name=ROLE:HASH``
(``LOOKOUT_REVIEW_USERS``, ``LOOKOUT_REVIEW_TOKENS``). This parses
unambiguously: the hash alphabets contain no ``,`` or ``=``, every hash
starts with ``scrypt:`` or ``sha256:``, and no role is named ``scrypt`` or
``sha256``.
"""

from __future__ import annotations

import re
from enum import StrEnum
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, field_validator

PASSWORD_HASH = re.compile(r"scrypt:\d+:\d+:\d+:[A-Za-z0-9_-]+:[A-Za-z0-9_-]+")
"""``scrypt:N:r:p:SALT:HASH`` with SALT and HASH in unpadded URL-safe base64."""

TOKEN_HASH = re.compile(r"sha256:[0-9a-f]{64}")
"""``sha256:HEX`` of a token of at least 32 random bytes (see ``worker.web.passwords``)."""

NAME = re.compile(r"[A-Za-z0-9_.@-]{1,64}")


HASH_SCHEMES = ("scrypt", "sha256")


class Role(StrEnum):
    """What a user or token may do on the review page and API; each includes the one before.

    - ``viewer``: read the list, reports, traces, outcomes, ``/metrics`` and ``/api/me``;
    - ``reviewer``: also acknowledge, assign, snooze, comment and resolve (which labels the run);
    - ``admin``: also run an automation now (and anything touching channels or the service).
    """

    VIEWER = "viewer"
    REVIEWER = "reviewer"
    ADMIN = "admin"

    def allows(self, needed: Role) -> bool:
        """Whether this role may do what ``needed`` may."""
        order = list(Role)
        return order.index(self) >= order.index(needed)


def unknown_role(given: object) -> str:
    """The message for a role that is not one of ``Role`` (the value cut to 40 characters)."""
    return f"unknown role {str(given)[:40]!r}: use viewer, reviewer or admin"


class Credential(BaseModel):
    """One user's or token's entry: the hash of its secret and its role.

    Attributes:
        hash: ``PASSWORD_HASH`` for a user, ``TOKEN_HASH`` for a token.
        role: its role; None when written without one (it then takes
            ``ReviewSettings.default_role``).
    """

    model_config = ConfigDict(extra="forbid", frozen=True)

    hash: str
    role: Role | None = None

    @field_validator("role", mode="before")
    @classmethod
    def _known_role(cls, value: Any) -> Any:
        if value is not None and value not in {r.value for r in Role}:
            raise ValueError(unknown_role(value))
        return value


def _entry(value: Any) -> Any:
    """Turn ``HASH`` or ``ROLE:HASH`` into a ``Credential``'s fields; a mapping stays as it is.

    The text before the first ``:`` is a role only when it is not a hash's
    scheme; a word that is no role is called one only when a well-formed hash
    follows it, so a plain password is never echoed in an error.
    """
    if not isinstance(value, str):
        return value
    head, sep, rest = value.strip().partition(":")
    if not sep or head in HASH_SCHEMES:
        return {"hash": value.strip()}
    hashed = PASSWORD_HASH.fullmatch(rest) or TOKEN_HASH.fullmatch(rest)
    if head in {r.value for r in Role} or hashed:
        return {"hash": rest, "role": head}
    return {"hash": value.strip()}


def _entries(value: Any, field: str) -> Any:
    """Accept ``name=HASH,name=ROLE:HASH`` (the environment's form) as well as a mapping."""
    if isinstance(value, str):
        found: dict[str, Any] = {}
        for item in filter(None, (part.strip() for part in value.split(","))):
            name, sep, hashed = item.partition("=")
            if not sep:
                raise ValueError(
                    f"{field}: expected name=HASH or name=ROLE:HASH, got an entry without '='"
                )
            found[name.strip()] = hashed.strip()
        value = found
    if not isinstance(value, dict):
        return value
    return {name: _entry(entry) for name, entry in value.items()}


class ReviewSettings(BaseModel):
    """Who may read and act on the review page and API, and how sessions last.

    Attributes:
        users: user name -> its scrypt hash of the password (``PASSWORD_HASH``)
            and role. The name is what actions record as who did them
            (``local`` is reserved for the local mode).
        tokens: token name -> its SHA-256 of the API token (``TOKEN_HASH``)
            and role; a request with ``Authorization: Bearer TOKEN`` acts as
            ``token:NAME``.
        default_role: the role of an entry written without one (default
            ``viewer``; see the module docstring for why).
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

    users: dict[str, Credential] = Field(default_factory=dict)
    tokens: dict[str, Credential] = Field(default_factory=dict)
    default_role: Role = Role.VIEWER
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

    @field_validator("default_role", mode="before")
    @classmethod
    def _known_default_role(cls, value: Any) -> Any:
        if value not in {r.value for r in Role}:
            raise ValueError(unknown_role(value))
        return value

    @field_validator("users", mode="before")
    @classmethod
    def _users_from_text(cls, value: Any) -> Any:
        return _entries(value, "users")

    @field_validator("tokens", mode="before")
    @classmethod
    def _tokens_from_text(cls, value: Any) -> Any:
        return _entries(value, "tokens")

    @field_validator("users")
    @classmethod
    def _password_hashes(cls, value: dict[str, Credential]) -> dict[str, Credential]:
        for name, entry in value.items():
            hashed = entry.hash
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
    def _token_hashes(cls, value: dict[str, Credential]) -> dict[str, Credential]:
        for name, entry in value.items():
            hashed = entry.hash
            if not NAME.fullmatch(name):
                raise ValueError(f"token name {name!r}: use letters, digits and _ . @ -")
            if not TOKEN_HASH.fullmatch(hashed):
                raise ValueError(
                    f"token {name}: not a token hash (make one with "
                    "'python -m worker.web.passwords token NAME'); plain tokens are refused"
                )
        return value

    def role_of(self, entry: Credential) -> Role:
        """Return an entry's role: its own, else ``default_role``."""
        return entry.role or self.default_role

    def token_hashes(self) -> dict[str, str]:
        """Return token name -> ``TOKEN_HASH`` (what ``worker.web.passwords.token_owner`` takes)."""
        return {name: entry.hash for name, entry in self.tokens.items()}

    def without_role(self) -> list[str]:
        """Return the entries written without a role, as ``user NAME`` and ``token NAME``."""
        users = [f"user {name}" for name, entry in self.users.items() if entry.role is None]
        tokens = [f"token {name}" for name, entry in self.tokens.items() if entry.role is None]
        return users + tokens

    def secrets(self) -> list[str]:
        """Return the values to redact: the session key and every stored hash."""
        found = [self.secret_key] if self.secret_key else []
        entries = [*self.users.values(), *self.tokens.values()]
        return found + [entry.hash for entry in entries]
