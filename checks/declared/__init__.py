"""The declared checks: run each through the read-only layers, compare, decide the finding."""
