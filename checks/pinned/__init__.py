"""The pinned plan: an accepted agent report kept, re-run instead of the agent till it changes."""
