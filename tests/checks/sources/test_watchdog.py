"""The process's watchdog: each armed action at its deadline, none after its block ended."""

from __future__ import annotations

import functools
import os
import threading
import time

from checks.sources.watchdog import Watchdog, after


def test_an_action_runs_at_its_deadline_while_the_block_runs() -> None:
    fired: list[float] = []
    started = time.monotonic()
    with after(0.2, lambda: fired.append(time.monotonic() - started)):
        time.sleep(0.6)
    assert len(fired) == 1 and 0.2 <= fired[0] < 0.5


def test_an_action_whose_block_ended_first_never_runs() -> None:
    dog = Watchdog()
    fired: list[int] = []
    for n in range(200):
        with dog.after(0.05, functools.partial(fired.append, n)):
            pass
    time.sleep(0.3)
    assert fired == []


def test_deadlines_run_in_their_order_whatever_the_order_they_were_armed_in() -> None:
    dog = Watchdog()
    fired: list[str] = []
    done = threading.Event()

    def late() -> None:
        fired.append("late")
        done.set()

    with (
        dog.after(0.6, late),
        dog.after(0.3, lambda: fired.append("soon")),  # earlier: wakes the thread
        dog.after(5.0, lambda: fired.append("never")),
    ):
        assert done.wait(5)
    assert fired == ["soon", "late"]


def test_a_slow_action_does_not_hold_up_another_deadline() -> None:
    dog = Watchdog()
    release = threading.Event()
    fired: list[float] = []
    started = time.monotonic()

    def slow() -> None:
        release.wait(5)

    def due() -> None:
        fired.append(time.monotonic() - started)

    with dog.after(0.1, slow), dog.after(0.3, due):
        time.sleep(0.8)
    release.set()
    assert len(fired) == 1 and fired[0] < 0.7


def test_a_forked_child_keeps_its_own_deadlines() -> None:
    with after(30, lambda: None):  # the parent's thread runs; the child's must start anew
        pid = os.fork()
        if pid == 0:
            fired = threading.Event()
            with after(0.1, fired.set):
                ok = fired.wait(5)
            os._exit(0 if ok else 1)
    _, status = os.waitpid(pid, 0)
    assert os.waitstatus_to_exitcode(status) == 0
