"""Settings from ``config/lookout.yaml`` and the environment, one module per section."""
