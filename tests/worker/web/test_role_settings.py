"""The roles of ``review.users`` and ``review.tokens``: each form they are written in; errors."""

from __future__ import annotations

from pathlib import Path

import pytest

from checks.errors import ConfigError
from checks.settings.config import load_settings
from checks.settings.review import Role
from worker.web.passwords import hash_token

HASH = "scrypt:16384:8:1:c2FsdA:aGFzaA"  # well formed; never checked against a password here
TOKEN_HASH = hash_token("t" * 40)


def _load(tmp_path: Path, text: str, env: dict[str, str] | None = None) -> object:
    config = tmp_path / "lookout.yaml"
    config.write_text(text, encoding="utf-8")
    return load_settings(config, env=env or {})


def _error(tmp_path: Path, text: str, env: dict[str, str] | None = None) -> str:
    with pytest.raises(ConfigError) as caught:
        _load(tmp_path, text, env)
    return str(caught.value).replace(str(tmp_path), "DIR")


def test_the_file_names_roles_as_a_mapping_or_role_colon_hash_and_bare_hashes_still_load(
    tmp_path: Path,
) -> None:
    settings = _load(
        tmp_path,
        "review:\n"
        "  users:\n"
        f'    alice: {{hash: "{HASH}", role: reviewer}}\n'
        f'    carol: "admin:{HASH}"\n'
        f'    bob: "{HASH}"\n'
        "  tokens:\n"
        f'    ci: {{hash: "{TOKEN_HASH}", role: admin}}\n'
        f'    grafana: "{TOKEN_HASH}"\n',
    )
    review = settings.review  # type: ignore[attr-defined]
    roles = {name: review.role_of(entry) for name, entry in review.users.items()}
    assert roles == {"alice": Role.REVIEWER, "carol": Role.ADMIN, "bob": Role.VIEWER}
    tokens = {name: review.role_of(entry) for name, entry in review.tokens.items()}
    assert tokens == {"ci": Role.ADMIN, "grafana": Role.VIEWER}
    assert review.users["carol"].hash == HASH and review.token_hashes()["grafana"] == TOKEN_HASH
    assert review.without_role() == ["user bob", "token grafana"]
    assert HASH in settings.secrets() and TOKEN_HASH in settings.secrets()  # type: ignore[attr-defined]


def test_the_default_role_gives_old_entries_their_role(tmp_path: Path) -> None:
    settings = _load(tmp_path, f'review:\n  default_role: admin\n  users: {{bob: "{HASH}"}}\n')
    review = settings.review  # type: ignore[attr-defined]
    assert review.role_of(review.users["bob"]) == Role.ADMIN


def test_the_environment_names_roles_as_name_equals_role_colon_hash(tmp_path: Path) -> None:
    env = {
        "LOOKOUT_REVIEW_USERS": f"alice=reviewer:{HASH},bob={HASH}",
        "LOOKOUT_REVIEW_TOKENS": f"ci=admin:{TOKEN_HASH},grafana={TOKEN_HASH}",
    }
    review = _load(tmp_path, "{}\n", env).review  # type: ignore[attr-defined]
    assert {n: review.role_of(e) for n, e in review.users.items()} == {
        "alice": Role.REVIEWER,
        "bob": Role.VIEWER,
    }
    assert {n: review.role_of(e) for n, e in review.tokens.items()} == {
        "ci": Role.ADMIN,
        "grafana": Role.VIEWER,
    }


def test_a_bad_role_is_named_at_its_file_line_and_column(tmp_path: Path) -> None:
    mapping = f'review:\n  users:\n    alice:\n      hash: "{HASH}"\n      role: reviewr\n'
    assert _error(tmp_path, mapping) == (
        "DIR/lookout.yaml:5:13: review.users.alice.role: "
        "unknown role 'reviewr': use viewer, reviewer or admin"
    )
    string = f'review:\n  users:\n    alice: "reviewr:{HASH}"\n'
    assert _error(tmp_path, string) == (
        "DIR/lookout.yaml:3:12: review.users.alice: "
        "unknown role 'reviewr': use viewer, reviewer or admin"
    )
    token = f'review:\n  tokens:\n    ci: {{role: root, hash: "{TOKEN_HASH}"}}\n'
    assert _error(tmp_path, token) == (
        "DIR/lookout.yaml:3:16: review.tokens.ci.role: "
        "unknown role 'root': use viewer, reviewer or admin"
    )
    assert _error(tmp_path, "review:\n  default_role: superuser\n") == (
        "DIR/lookout.yaml:2:17: review.default_role: "
        "unknown role 'superuser': use viewer, reviewer or admin"
    )
    extra = f'review:\n  users:\n    alice: {{hash: "{HASH}", rolle: admin}}\n'
    assert _error(tmp_path, extra) == (
        "DIR/lookout.yaml:3:60: review.users.alice.rolle: "
        "unknown field 'rolle' (did you mean 'role'?)"
    )


def test_a_bad_role_from_the_environment_and_a_plain_password_with_a_colon(tmp_path: Path) -> None:
    env = {"LOOKOUT_REVIEW_USERS": f"alice=reviewr:{HASH}"}
    assert _error(tmp_path, "{}\n", env) == (
        "DIR/lookout.yaml: review.users.alice.role: "
        "unknown role 'reviewr': use viewer, reviewer or admin"
    )
    # a word before ':' is called a role only when a hash follows: a password is never echoed
    plain = _error(tmp_path, 'review:\n  users:\n    alice: "hunter:2"\n')
    assert plain == (
        "DIR/lookout.yaml:3:5: review.users: user alice: not a password hash (make one with "
        "'python -m worker.web.passwords password'); plain passwords are refused"
    )
    assert "hunter" not in plain
