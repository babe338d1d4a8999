"""The values a file's fields hold and how they are read: YAML with places, expect:, durations.

Below ``checks/automation/`` and ``checks/kinds/``, which both read their keys
through it; it imports nothing of Lookout but ``checks.errors``.
"""
