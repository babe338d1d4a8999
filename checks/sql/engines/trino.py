"""What Trino's own SQL must not call, beyond what the guard refuses everywhere.

Written from Trino's documentation (trino.io/docs/current): "Table functions"
(``TABLE(catalog.system.query(query => '…'))`` in the JDBC connectors, BigQuery,
Elasticsearch's and MongoDB's ``raw_query``, each handing text to the connected
database to run, out of the guard's sight: ``query`` is refused in every dialect,
``raw_query`` here), "System connector" (the ``system`` catalog: ``runtime.queries``,
``runtime.nodes``, and the procedures such as ``system.runtime.kill_query``, which
only ``CALL`` reaches: refused as a command), "AI functions" (``ai_gen``,
``ai_classify``, … send the text to a language model over the network) and
"Session information" (``current_groups()``).

Catalog-qualified names (``system.runtime.queries``, ``hive.sales.orders``) are
refused by the guard itself; ``DENIED_SCHEMAS`` names the ``system`` schema every
catalog has (its table functions and procedures), so ``system.query(…)`` is refused
as a system schema whatever the source's own schema is.
"""

from __future__ import annotations

import re

DENIED_FUNCTIONS: tuple[tuple[str, str, re.Pattern[str]], ...] = (
    (
        "function",
        "hands text to the connected database to run (a connector's pass-through query)",
        re.compile(r"raw_query"),
    ),
    ("function", "sends the text to a language model over the network", re.compile(r"ai_\w+")),
    ("function", "reads the database's own metadata", re.compile(r"current_groups")),
)
DENIED_SCHEMAS = frozenset({"system"})
