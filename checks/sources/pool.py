"""The open sources of one process: each configured source opened once, on first use."""

from __future__ import annotations

from collections.abc import Iterable
from typing import TYPE_CHECKING

from checks.errors import SourceError
from checks.sources import open_source

if TYPE_CHECKING:
    from checks.settings.config import Settings
    from checks.sources.base import Source


class SourcePool:
    """Opens each configured source once, on first use, and closes them all at the end."""

    def __init__(self, settings: Settings) -> None:
        self.settings = settings
        self._open: dict[str, Source] = {}

    def get(self, name: str) -> Source:
        """Return the open source ``name``.

        Raises:
            SourceError: the name is not configured or the source cannot be opened.
        """
        if name not in self._open:
            config = self.settings.sources.get(name)
            if config is None:
                known = ", ".join(sorted(self.settings.sources)) or "none"
                raise SourceError(f"source '{name}' is not configured (configured: {known})")
            try:
                self._open[name] = open_source(name, config, self.settings)
            except OSError as exc:  # e.g. the cache folder cannot be created
                where = f" ({exc.filename})" if exc.filename else ""
                raise SourceError(
                    f"source '{name}' cannot be opened: {exc.strerror}{where}"
                ) from None
        return self._open[name]

    def start(self, names: Iterable[str]) -> None:
        """Open the sources ``names`` now, ahead of their first use; failures wait for it.

        A DuckDB source's query process then imports and connects while this
        process goes on. A source that cannot open is left closed: the run that
        uses it reports the error (``get`` raises it again).
        """
        for name in names:
            try:
                self.get(name)
            except SourceError:
                continue

    def close(self) -> None:
        """Close every source opened so far."""
        for source in self._open.values():
            source.close()
        self._open.clear()

    def __enter__(self) -> SourcePool:
        return self

    def __exit__(self, *_: object) -> None:
        self.close()
