-- A singular test: its SQL is its own, so the importer lists it as not translated.
select * from {{ ref('orders') }} where amount > 1000
