"""SQL before it runs: the guard (layer 1 of docs/design.md, Reading data safely)."""
