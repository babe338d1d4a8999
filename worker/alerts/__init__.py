"""Alerts to chat: events and incidents, routing, delivery, attempts, messages, channels."""
