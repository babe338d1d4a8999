"""The service: Celery app and tasks, ``dispatch_due``, known automations, slots, leases, runs."""
