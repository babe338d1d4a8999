"""Fixtures of ``tests/checks/declared``: the shop on every engine.

``shop`` is parametrized over ``SHOP_ENGINES``: every test that takes it
runs on each (see ``tests.checks.declared.shop``; the files and the database
are built once per session in ``tests/conftest.py``).
"""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from checks.sources import Source
from tests.checks.declared.shop import SHOP_ENGINES, open_shop


@pytest.fixture(scope="module", params=SHOP_ENGINES)
def shop(request: pytest.FixtureRequest) -> Iterator[Source]:
    """The shop tables on each engine in turn."""
    with open_shop(request.param, request) as source:
        yield source


@pytest.fixture(autouse=True)
def _names_asked_afresh(monkeypatch: pytest.MonkeyPatch) -> None:
    """Each test starts with no names statement's answer kept (tests count statements)."""
    from checks.declared import shared_scans

    monkeypatch.setattr(shared_scans, "_NAMES", {})
