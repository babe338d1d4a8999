"""Stand-ins for what cannot be reached from here: scripted LLM and decision-model servers."""
