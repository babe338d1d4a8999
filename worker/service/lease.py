"""A run's lease, kept alive by a heartbeat thread while the run goes on.

A worker claims a run for ``service.lease_s`` seconds (``RunQueue.claim``);
while the run goes on, this thread renews the lease every third of that, so a
run can take as long as its time limit allows while a killed worker's run is
noticed by the reaper about ``lease_s`` after it died (docs/design.md, Scheduling: no lock
that outlives a killed worker).

The thread also records the hard time limit: Celery enforces time limits in
the prefork pool only, so when the run is still going ``hard_limit_s`` (plus
one second, letting Celery's own kill come first) after the claim, the run is
ended in ``error`` — fenced on the attempt, so the stuck run's own late write
is refused — and renewing stops.
"""

from __future__ import annotations

import logging
import threading
import time

from worker.service.run_queue import RunQueue

log = logging.getLogger("lookout.worker")


def hard_limit_reason(hard_limit_s: float) -> str:
    """The error recorded for a run stopped at its hard time limit."""
    return f"hard time limit of {hard_limit_s:g} s exceeded; the run was stopped"


def soft_limit_reason(timeout_s: float) -> str:
    """The error recorded for a run stopped at its soft time limit (``timeout_s``)."""
    return f"soft time limit of {timeout_s:g} s exceeded (the automation's timeout_s)"


class Heartbeat:
    """A context manager renewing one attempt's lease on a daemon thread.

    Args:
        queue: the store's run queue.
        run_id: the run.
        attempt: the attempt the lease belongs to (every write is fenced on it).
        lease_s: the lease length, in seconds; renewed every ``lease_s / 3``.
        hard_limit_s: seconds after which the run is ended in error.
    """

    def __init__(
        self, queue: RunQueue, run_id: int, attempt: int, *, lease_s: float, hard_limit_s: float
    ) -> None:
        self.queue = queue
        self.run_id = run_id
        self.attempt = attempt
        self.lease_s = lease_s
        self.hard_limit_s = hard_limit_s
        self.timed_out = False
        self._stop = threading.Event()
        self._thread = threading.Thread(
            target=self._beat, name=f"lease-{run_id}-{attempt}", daemon=True
        )

    def __enter__(self) -> Heartbeat:
        self._thread.start()
        return self

    def __exit__(self, *_: object) -> None:
        self._stop.set()
        self._thread.join(timeout=5)

    def _beat(self) -> None:
        deadline = time.monotonic() + self.hard_limit_s + 1.0
        while True:
            left = deadline - time.monotonic()
            if self._stop.wait(max(0.0, min(self.lease_s / 3, left))):
                return
            try:
                if time.monotonic() >= deadline:
                    self.timed_out = True
                    reason = hard_limit_reason(self.hard_limit_s)
                    self.queue.fail(self.run_id, reason, attempt=self.attempt)
                    return
                if not self.queue.renew(self.run_id, self.attempt, lease_s=self.lease_s):
                    log.warning("run %d attempt %d: lease lost", self.run_id, self.attempt)
                    return
            except Exception:  # the store is unreachable: try again at the next beat
                log.exception("run %d: could not renew the lease", self.run_id)
