"""The ``lineage:`` section: where each stored run's OpenLineage events go."""

from __future__ import annotations

from pydantic import Field

from checks.settings.strict import Strict


class LineageSettings(Strict):
    """An OpenLineage HTTP endpoint (Marquez, or any server speaking the spec's HTTP API).

    ``url`` unset (the default) sends nothing. ``endpoint`` is the path the events are
    POSTed to (Marquez: ``api/v1/lineage``); ``api_key`` is sent as ``Authorization:
    Bearer`` (write it as ``${VAR}``); ``namespace`` is the jobs' namespace (each
    automation is one job of it).
    """

    url: str | None = None
    endpoint: str = "api/v1/lineage"
    api_key: str | None = None
    namespace: str = "lookout"
    timeout_s: float = Field(default=5.0, gt=0, le=120)
