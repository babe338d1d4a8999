"""``lookout eval``: suite format, case data, runner, scoring, the reliability diagram."""
