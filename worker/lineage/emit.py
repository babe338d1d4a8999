"""Send a stored run's OpenLineage events to ``lineage.url``, with ``openlineage-python``.

The client's own HTTP transport does the sending (POST ``{url}/{endpoint}``, JSON, the
API key as a bearer token, its retries capped at 2); a server that refuses or cannot be
reached is a ``LineageError`` the caller reports (the CLI prints it, the worker logs it).
Lineage never changes a run's finding or its exit status. ``openlineage-python`` is the
``lineage`` extra: it is imported only when events are sent.
"""

from __future__ import annotations

from checks.errors import LookoutError, first_line
from checks.report import RunReport
from checks.settings.config import Settings

RETRY = {"total": 2, "backoff_factor": 0.3, "status_forcelist": [500, 502, 503, 504]}
"""The transport's retries (urllib3 ``Retry`` keywords): two more tries on a server error."""


class LineageError(LookoutError):
    """The lineage server refused the events, could not be reached, or its client is missing."""


def emit_run(settings: Settings, report: RunReport) -> int:
    """Send a stored run's events; return how many were sent (0 when ``lineage.url`` is unset).

    The automation's source is the one its stored definition names.

    Raises:
        LineageError: the server answered with an error or could not be reached (the
            message holds no API key), or ``openlineage-python`` is not installed (the
            message names ``pip install 'lookout[lineage]'``).

    """
    lineage = settings.lineage
    if not lineage.url or report.run_id is None:
        return 0
    try:
        from openlineage.client.client import OpenLineageClient
        from openlineage.client.transport.http import (
            ApiKeyTokenProvider,
            HttpConfig,
            HttpTransport,
        )

        from worker.lineage.events import run_events
    except ImportError as error:
        raise LineageError(f"lineage: not sent: {error}; pip install 'lookout[lineage]'") from None
    config = HttpConfig(
        url=lineage.url, endpoint=lineage.endpoint, timeout=lineage.timeout_s, retry=RETRY
    )
    if lineage.api_key:
        config.auth = ApiKeyTokenProvider({"apiKey": lineage.api_key})
    client = OpenLineageClient(transport=HttpTransport(config))
    events = run_events(settings, report, str(report.definition.get("source", "")))
    try:
        for event in events:
            client.emit(event)
    except Exception as error:  # requests' and urllib3's errors, and the server's status
        text = first_line(error)
        if lineage.api_key:
            text = text.replace(lineage.api_key, "***")
        raise LineageError(f"lineage: not sent to {lineage.url}: {text}") from None
    finally:
        client.close(timeout=lineage.timeout_s)
    return len(events)
