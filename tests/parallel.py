"""What each pytest-xdist worker keeps to itself, so that tests can run side by side.

PostgreSQL databases (``tests/conftest.py``) and temporary paths are already
unique per test session, and every xdist worker is a session of its own;
ports come from the kernel (``service_support.free_port``). What is left is
the machine's Redis, whose 16 databases are numbered: a module that uses one
takes ``redis_db(N)``, database N on a run without xdist and on worker
``gw0``, N - 1 on ``gw1``, and so on.
"""

from __future__ import annotations

import os

MAX_WORKERS = 4
"""Workers whose Redis databases never meet: the bases in use (15 and 11) are 4 apart."""


def worker_index() -> int:
    """This process's xdist worker number: 0 for ``gw0`` and for a run without xdist."""
    name = os.environ.get("PYTEST_XDIST_WORKER", "gw0")
    return int(name.removeprefix("gw") or "0")


def redis_db(base: int) -> int:
    """The Redis database number this worker uses in place of ``base`` (0-15).

    Raises:
        RuntimeError: more workers than ``MAX_WORKERS``, whose databases would meet.
    """
    index = worker_index()
    if index >= MAX_WORKERS:
        raise RuntimeError(
            f"xdist worker gw{index}: at most {MAX_WORKERS} workers get Redis databases of"
            " their own (run with -n 4 or fewer)"
        )
    return base - index
