"""Lookout's core: everything needed to run one automation, with no broker.

The path of a run: ``automation`` (YAML → Automation) → ``sources`` (read-only
SQL through ``sqlguard``) → ``run`` (declared checks, then the agent) →
``store``. Nothing here imports Celery or the web framework.
"""
