"""HTTP clients kept per process: one per endpoint, shared by every run and thread."""
