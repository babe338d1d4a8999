"""SQL before it runs: the guard (layer 1 of reading data safely, design notes §4)."""
