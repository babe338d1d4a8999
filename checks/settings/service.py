"""Settings of the service (Celery worker and beat): the ``service:`` section of the config.

Read by ``worker.service.celery_app``, ``worker.service.dispatch`` and ``worker.service.tasks``; the
rules they tune are in docs/design.md, Scheduling and ``worker.service.slots``.
"""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict, Field, model_validator


class ServiceSettings(BaseModel):
    """How the dispatcher and the workers behave. Every duration is in seconds.

    Attributes:
        dispatch_interval_s: how often beat sends ``dispatch_due`` (default 30).
        misfire_grace_s: a slot found at most this long after its time is on
            time and runs; an older one was missed and follows the automation's
            ``catchup`` policy (default 120).
        catchup_cap: most slots of one automation one dispatch looks at,
            newest first; with ``catchup: all`` at most this many missed slots
            run (default 100). Older ones are logged, not recorded.
        lease_s: how long a worker's claim on a run lasts without renewal; the
            worker renews it every ``lease_s / 3`` while the run goes on, so a
            killed worker's run is requeued about ``lease_s`` after it died
            (default 60).
        max_attempts: claims of one run before the reaper gives up and records
            it as an error (default 3).
        hard_limit_grace_s: the hard time limit is the automation's
            ``timeout_s`` plus this; the soft limit is ``timeout_s`` (default 30).
        visibility_timeout_s: Redis redelivers a message not acknowledged
            within this; it must stay well above the longest hard limit, since
            runs are acknowledged when they end (default 21600, 6 h; checked
            at dispatch: an automation whose hard limit exceeds half of it is
            refused).
        source_concurrency: source name -> most runs of that source running at
            once across all workers (no entry: no bound). Enforced when a
            worker claims a run; a run over the bound waits ``busy_retry_s``.
        busy_retry_s: how long a run that may not start yet (source bound, or
            ``overlap: buffer_one`` behind a running one) waits before trying
            again (default 5).
        unsent_grace_s: a queued run whose message was never sent (the
            dispatcher died between the insert and the send) is sent by the
            reaper once it is this old (default 60).
        resend_after_s: a queued run whose message was sent this long ago and
            that no worker has claimed is sent again, in case the broker lost
            it (a Redis restart without persistence); a duplicate message is
            harmless (default 3600).
        clock_skew_warn_s: a process whose clock differs from the store's by
            more than this logs a WARNING naming both times and the difference,
            once when it starts and again each time it crosses back over
            (default 5). Slot and lease times come from the store's clock
            either way (``checks.store.store_clock``).
    """

    model_config = ConfigDict(extra="forbid")

    dispatch_interval_s: float = Field(default=30.0, gt=0)
    misfire_grace_s: float = Field(default=120.0, gt=0)
    catchup_cap: int = Field(default=100, ge=1, le=10_000)
    lease_s: float = Field(default=60.0, gt=0)
    max_attempts: int = Field(default=3, ge=1, le=100)
    hard_limit_grace_s: float = Field(default=30.0, gt=0)
    visibility_timeout_s: float = Field(default=21_600.0, gt=0)
    source_concurrency: dict[str, int] = Field(default_factory=dict)
    busy_retry_s: float = Field(default=5.0, gt=0)
    unsent_grace_s: float = Field(default=60.0, gt=0)
    resend_after_s: float = Field(default=3_600.0, gt=0)
    clock_skew_warn_s: float = Field(default=5.0, gt=0)

    @model_validator(mode="after")
    def _positive_bounds(self) -> ServiceSettings:
        for source, bound in self.source_concurrency.items():
            if bound < 1:
                raise ValueError(f"source_concurrency.{source} must be at least 1 (got {bound})")
        return self

    def hard_limit_s(self, timeout_s: float) -> float:
        """Return the hard time limit, in seconds, of a run whose soft limit is ``timeout_s``."""
        return timeout_s + self.hard_limit_grace_s
