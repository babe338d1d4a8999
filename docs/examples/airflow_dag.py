"""An Airflow DAG that runs one Lookout automation each morning; the task fails unless Clear.

Copy it into your DAGs folder, with Lookout installed in Airflow's environment
and ``LOOKOUT_CONFIG`` pointing at your config (or pass ``config=``). The task
is one ``PythonOperator`` whose callable, ``run_automation``, only uses Lookout's
Python API (``worker.api``): the report is stored as ``lookout run`` stores it,
returned to XCom as its ``--json`` document, and anything but Clear raises, so
Airflow marks the task failed (and retries it as the task's ``retries`` say).
"""

from __future__ import annotations

import datetime as dt
from typing import Any

from worker.api import ExitCode, Lookout

AUTOMATION = "flights-carrier-integrity"


class NotClear(Exception):
    """The run was not Clear: Needs attention, or in error (the exit code says which)."""

    def __init__(self, name: str, code: ExitCode, summary: str) -> None:
        super().__init__(
            f"{name}: {code.name.lower().replace('_', ' ')} (exit {int(code)}): {summary}"
        )
        self.code = code


def run_automation(name: str = AUTOMATION, config: str | None = None) -> dict[str, Any]:
    """Run ``name`` now; return its report as ``lookout run --json`` prints it.

    Raises:
        NotClear: the run was not Clear (its exit code and summary in the message).
    """
    with Lookout(config) as lookout:
        report = lookout.run(name)
    code = Lookout.exit_code([report])
    if code is not ExitCode.CLEAR:
        raise NotClear(name, code, report.summary.splitlines()[0] if report.summary else "")
    return report.to_dict()


try:  # Airflow 3 keeps its PythonOperator in the standard provider; Airflow 2 in the core
    from airflow import DAG

    try:
        from airflow.providers.standard.operators.python import PythonOperator
    except ImportError:
        from airflow.operators.python import PythonOperator
except ImportError:  # no Airflow here (Lookout's tests call run_automation directly)
    DAG = None

if DAG is not None:
    with DAG(
        dag_id="lookout_flights",
        schedule="0 7 * * *",
        start_date=dt.datetime(2026, 1, 1, tzinfo=dt.UTC),
        catchup=False,
        tags=["data-quality"],
    ) as dag:
        PythonOperator(
            task_id=f"lookout_{AUTOMATION.replace('-', '_')}",
            python_callable=run_automation,
            op_kwargs={"name": AUTOMATION},
        )
