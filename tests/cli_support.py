"""The ``lookout`` command line run in-process, through its real entry point, for the tests.

Two runners, one entry point (``worker.cli.app.main``, which maps Lookout's
errors to the README's exit statuses and always ends in ``SystemExit``):
``run_cli`` for a test that has ``monkeypatch`` and ``capsys`` at hand, and
``run_lookout`` for a helper that used to start ``python -c "…main()"`` as a
child process: the same environment, working directory and captured text, as
a ``subprocess.CompletedProcess``, without a new interpreter importing
everything again. A test about the process itself (its signals, a kill, its
start-up imports, the console script's own exit) still starts one.
"""

from __future__ import annotations

import contextlib
import io
import os
import sys
from collections.abc import Iterator, Mapping, Sequence
from pathlib import Path
from subprocess import CompletedProcess

import pytest

from tests.paths import ROOT


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


@contextlib.contextmanager
def _as_a_child_would(env: Mapping[str, str], cwd: Path, argv: list[str]) -> Iterator[None]:
    """Hold exactly ``env`` as the environment, ``cwd`` and ``argv`` for the block; restore all."""
    saved_env, saved_cwd, saved_argv = dict(os.environ), Path.cwd(), sys.argv
    os.environ.clear()
    os.environ.update(env)
    os.chdir(cwd)
    sys.argv = argv
    try:
        yield
    finally:
        sys.argv = saved_argv
        os.chdir(saved_cwd)
        os.environ.clear()
        os.environ.update(saved_env)


def run_lookout(
    args: Sequence[str], env: Mapping[str, str] | None = None, cwd: Path = ROOT
) -> CompletedProcess[str]:
    """Run ``lookout ARGS`` in this process as ``subprocess.run(…, env=env, cwd=cwd)`` would.

    Args:
        args: the command line after ``lookout``.
        env: the whole environment of the run (as ``subprocess.run``'s ``env``); None keeps
            this process's.
        cwd: the working directory of the run.

    Returns:
        ``returncode`` (the status ``main`` exits with), ``stdout`` and ``stderr`` as text.
    """
    # Imported before the environment changes: the consoles these modules build at import
    # read COLUMNS once, and must not keep one run's width for the next.
    from worker.cli import app as cli

    out, err = io.StringIO(), io.StringIO()
    argv = ["lookout", *args]
    with (
        _as_a_child_would(dict(os.environ) if env is None else env, cwd, argv),
        contextlib.redirect_stdout(out),
        contextlib.redirect_stderr(err),
    ):
        try:
            cli.main()
        except SystemExit as exit_:
            code = exit_.code
        else:  # main always exits; a return would be a bug of the entry point
            raise AssertionError("worker.cli.app.main returned instead of exiting")
    status = code if isinstance(code, int) else (0 if code is None else 1)
    return CompletedProcess(argv, status, out.getvalue(), err.getvalue())
