"""Hashing and checking the review page's secrets: people's passwords and API tokens.

- Passwords are chosen by people, so they are stored as scrypt hashes
  (``hashlib.scrypt``, N=2**14, r=8, p=1, 16-byte salt, 32-byte key: about
  16 MiB and tens of milliseconds per check), ``scrypt:N:r:p:SALT:HASH`` with
  SALT and HASH in unpadded URL-safe base64 (``checks.settings.review.PASSWORD_HASH``).
- API tokens are made here, 32 random bytes (256 bits), so a fast hash is
  enough — nobody can guess one to match it — and every API call stays fast:
  ``sha256:HEX``. A token is found by the hash of the one presented.

Comparisons are constant-time (``hmac.compare_digest``). Make the values for
the config with ``python -m worker.web.passwords password`` (asks twice,
without echo; reads one line when piped) or ``python -m worker.web.passwords token NAME``.
"""

from __future__ import annotations

import argparse
import base64
import getpass
import hashlib
import hmac
import secrets
import sys

_N, _R, _P, _SALT_BYTES, _KEY_BYTES = 2**14, 8, 1, 16, 32
_MAX_N = 2**20


def _b64(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode("ascii")


def _unb64(text: str) -> bytes:
    return base64.urlsafe_b64decode(text + "=" * (-len(text) % 4))


def _scrypt(secret: str, salt: bytes, n: int, r: int, p: int, size: int) -> bytes:
    return hashlib.scrypt(
        secret.encode("utf-8"), salt=salt, n=n, r=r, p=p, dklen=size, maxmem=256 * 1024 * 1024
    )


def hash_password(password: str) -> str:
    """Return the ``scrypt:…`` hash of a password, with a fresh random salt."""
    salt = secrets.token_bytes(_SALT_BYTES)
    key = _scrypt(password, salt, _N, _R, _P, _KEY_BYTES)
    return f"scrypt:{_N}:{_R}:{_P}:{_b64(salt)}:{_b64(key)}"


def verify_password(password: str, hashed: str) -> bool:
    """Whether ``password`` matches an ``scrypt:…`` hash; a malformed hash never matches."""
    try:
        scheme, n, r, p, salt, key = hashed.split(":")
        if scheme != "scrypt" or not 2 <= int(n) <= _MAX_N:
            return False
        expected = _unb64(key)
        found = _scrypt(password, _unb64(salt), int(n), int(r), int(p), len(expected))
    except (ValueError, TypeError):
        return False
    return hmac.compare_digest(found, expected)


def hash_token(token: str) -> str:
    """Return the ``sha256:HEX`` hash of an API token."""
    return "sha256:" + hashlib.sha256(token.encode("utf-8")).hexdigest()


def new_token() -> str:
    """Return a fresh API token: 32 random bytes, URL-safe base64, prefixed ``lookout_``."""
    return "lookout_" + secrets.token_urlsafe(32)


def token_owner(token: str, tokens: dict[str, str]) -> str | None:
    """Return the name of the configured token ``token`` is, or None.

    Args:
        token: the bearer token presented.
        tokens: token name -> ``sha256:HEX`` (``ReviewSettings.tokens``).
    """
    presented = hash_token(token)
    found = None
    for name, hashed in tokens.items():  # every entry is compared: no early exit
        if hmac.compare_digest(presented.encode(), hashed.encode()):
            found = name
    return found


def main(argv: list[str] | None = None) -> int:
    """``python -m worker.web.passwords password | token NAME``: print a value for the config."""
    parser = argparse.ArgumentParser(
        prog="python -m worker.web.passwords",
        description="Print a value for the review page's config: a password's scrypt hash "
        "(review.users) or a new API token with its sha256 (review.tokens).",
    )
    sub = parser.add_subparsers(dest="what", required=True)
    sub.add_parser(
        "password",
        help="hash a password (asked twice, not echoed; read as one line when stdin is not a "
        "terminal)",
    )
    token = sub.add_parser("token", help="make an API token and print it with its hash")
    token.add_argument("name", help="the token's name; actions record token:NAME")
    args = parser.parse_args(argv)
    if args.what == "password":
        if sys.stdin.isatty():
            first = getpass.getpass("password: ")
            if first != getpass.getpass("again: "):
                print("the two passwords differ", file=sys.stderr)
                return 2
        else:  # piped (a script, a secret store): one line, said once
            first = sys.stdin.readline().rstrip("\r\n")
        if len(first) < 8:
            print("use at least 8 characters", file=sys.stderr)
            return 2
        print(hash_password(first))
        return 0
    value = new_token()
    print(f"token (give it to the client; it is not stored): {value}")
    print(f"config:  review: {{tokens: {{{args.name}: {hash_token(value)}}}}}")
    print(f"or env:  LOOKOUT_REVIEW_TOKENS={args.name}={hash_token(value)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
