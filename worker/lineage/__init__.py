"""OpenLineage: each stored run as run events with its data-quality facets.

``events.py`` builds the events of a run (START and COMPLETE, or FAIL), one input
dataset per table its checks read, with the ``dataQualityAssertions`` and
``dataQualityMetrics`` facets; ``emit.py`` sends them with ``openlineage-python``'s
HTTP transport to ``lineage.url``; ``fake_marquez.py`` is the local stand-in the tests
send to. docs/lineage.md says what is sent.
"""
