"""The service around ``checks``: CLI now; Celery, delivery and the review page later."""
