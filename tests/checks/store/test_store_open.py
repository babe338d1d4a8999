"""Opening a store: migrations applied when needed, and only then is Alembic loaded."""

import re
import subprocess
import sys
from pathlib import Path

import pytest
from alembic.config import Config
from alembic.script import ScriptDirectory
from sqlalchemy import text

from checks.store.store import Store, at_head, head_revision
from tests.paths import ROOT

VERSIONS = ROOT / "checks" / "store" / "migrations" / "versions"


def test_head_revision_is_alembics_head_and_every_file_is_named_after_its_revision() -> None:
    cfg = Config()
    cfg.set_main_option("script_location", str(VERSIONS.parent))
    assert head_revision() == ScriptDirectory.from_config(cfg).get_current_head()
    for path in sorted(VERSIONS.glob("*.py")):
        if path.name == "__init__.py":
            continue
        source = path.read_text(encoding="utf-8")
        revision = re.search(r'^revision = "(\w+)"', source, re.M)
        assert re.fullmatch(r"\d{4}_\w+\.py", path.name), path.name
        assert revision is not None and revision.group(1) == path.name[:4], path.name


OPEN = """
import sys
from checks.store.store import Store
Store(sys.argv[1]).close()
print("alembic" in sys.modules)
"""


def _opens_with_alembic(url: str) -> bool:
    out = subprocess.run(
        [sys.executable, "-c", OPEN, url], cwd=ROOT, capture_output=True, text=True, check=True
    )
    return out.stdout.strip() == "True"


@pytest.mark.slow
def test_a_store_at_head_opens_without_alembic_and_an_older_one_is_migrated(
    tmp_path: Path,
) -> None:
    url = f"sqlite:///{tmp_path / 'store.db'}"
    assert _opens_with_alembic(url)  # a new file: every migration applied
    assert not _opens_with_alembic(url)  # at head: one query, no Alembic
    store = Store(url)
    assert at_head(store.engine)
    with store.engine.begin() as conn:  # as if the newest migration had not run yet
        conn.execute(text("UPDATE alembic_version SET version_num = 'older'"))
    assert not at_head(store.engine)
    store.close()
