"""The LLM agent: chat client, prompt, tools, per-turn tool calls, loop, contract, trace."""
