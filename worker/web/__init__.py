"""The review page and its JSON API (``lookout serve``): see ``worker.web.app``.

``create_app`` is imported on first use, so that running a module of this
package (``python -m worker.web.passwords``) does not import it twice.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from worker.web.app import create_app

__all__ = ["create_app"]


def __getattr__(name: str) -> Any:
    if name == "create_app":
        from worker.web.app import create_app

        return create_app
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
