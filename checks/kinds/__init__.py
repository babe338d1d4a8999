"""The typed check kinds: one module per kind, every kind registered in ``registry``."""
