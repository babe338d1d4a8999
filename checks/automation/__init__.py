"""Automations: the model, its fields, YAML loading with positions, ``expect:``, cron specs."""
