"""The store: every table (runs, alerts, review), the store API and the migrations."""
