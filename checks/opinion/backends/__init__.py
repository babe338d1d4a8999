"""One module per decision-model wire format: systemone, openai-decisions, chat-logprobs."""
