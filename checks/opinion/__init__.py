"""The second opinion: decision-model interface, backends, flags, evidence diff, ranking."""
