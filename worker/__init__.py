"""The service around ``checks``: Celery worker and beat, alerts, the review page, the CLI.

Rooms: ``service`` (Celery app, tasks, ``dispatch_due``, slots, leases, the
run queue), ``alerts`` (incidents, routing, delivery, messages, channels),
``review`` (what the review page asks of the store, framework-free), ``web``
(the FastAPI app over ``review``) and ``cli`` (the ``lookout`` command).
"""
