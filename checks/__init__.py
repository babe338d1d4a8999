"""Lookout's core: everything needed to run one automation, in-process, with no broker.

The path of a run, room by room: ``automation`` (YAML → Automation) →
``sources`` (read-only connections) and ``sql`` (the guard) → ``declared``
(the declared checks) and ``agent`` (the LLM's exploration) → ``report`` →
``opinion`` (the decision model's second opinion) → ``store``. ``run`` is the
single path through them. ``settings`` reads the config, ``eval`` measures
the whole path on cases with known answers, ``fakes`` stand in for the LLM
and the decision model. Nothing here imports Celery or the web framework.
"""
