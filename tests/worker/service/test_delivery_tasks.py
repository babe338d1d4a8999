"""The delivery tasks keep one store per worker process; with no channel nothing is sent."""

from pathlib import Path

from sqlalchemy import func, select

from checks.store.alert_tables import DeliveryRow, IncidentRow
from checks.store.store import Store
from tests.worker.alerts.test_delivery import settings_for, stored
from worker.service.delivery_tasks import deliver_run_now
from worker.service.process_store import process_store


def test_with_no_channel_the_incident_is_planned_and_the_given_store_stays_open(
    tmp_path: Path,
) -> None:
    settings = settings_for({})
    settings.store_url = f"sqlite:///{tmp_path / 'l.db'}"
    store = process_store(settings.store_url)
    assert process_store(settings.store_url) is store  # once per process, not per task
    report = stored(store, "a", notify=())
    assert report.run_id is not None
    assert deliver_run_now(report.run_id, settings, store=store) == []
    with store.session() as session:  # still open: the task does not close the process's store
        incidents = session.scalar(select(func.count()).select_from(IncidentRow))
        deliveries = session.scalar(select(func.count()).select_from(DeliveryRow))
    assert (incidents, deliveries) == (1, 0)
    assert isinstance(store, Store)
