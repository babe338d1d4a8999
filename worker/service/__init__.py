"""The service: Celery app and tasks, ``dispatch_due``, catalog, slots, leases, run queue."""
