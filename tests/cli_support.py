"""The ``lookout`` command line run in-process, through its real entry point, for the tests."""

from __future__ import annotations

import os
import sys

import pytest


def run_cli(
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
    args: list[str],
    env: dict[str, str],
) -> tuple[int, str, str]:
    """Run ``lookout ARGS`` with only ``env``'s ``LOOKOUT_*`` variables; (status, stdout, stderr).

    The entry point is ``worker.cli.app.main``, which maps Lookout's errors to
    the README's exit statuses and always ends in ``SystemExit``.
    """
    from worker.cli import app as cli

    for name in list(os.environ):
        if name.startswith("LOOKOUT_"):
            monkeypatch.delenv(name)
    for name, value in env.items():
        monkeypatch.setenv(name, value)
    monkeypatch.setattr(sys, "argv", ["lookout", *args])
    with pytest.raises(SystemExit) as caught:
        cli.main()
    out, err = capsys.readouterr()
    code = caught.value.code
    return (code if isinstance(code, int) else 0), out, err
