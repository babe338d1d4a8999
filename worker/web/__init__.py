"""The review page and its JSON API (``lookout serve``): see ``worker.web.app``."""

from worker.web.app import create_app

__all__ = ["create_app"]
