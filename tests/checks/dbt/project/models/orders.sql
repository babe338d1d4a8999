select order_id, customer_id, order_date, status, amount, quantity, loaded_at
from {{ source('raw', 'raw_orders') }}
