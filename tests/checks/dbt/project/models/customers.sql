select id, name, email, country from {{ source('raw', 'raw_customers') }}
