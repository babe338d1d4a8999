"""Where a query handles a column's NULLs: how the lint reads ``IS [NOT] NULL`` near ``NOT IN``.

``checks.sql.lint`` warns about ``x NOT IN (SELECT y …)`` when either side can
be NULL; these say which table a column belongs to and whether a condition
around the ``NOT IN`` already rules the NULLs out.
"""

from __future__ import annotations

from sqlglot import exp


def owner_table(column: exp.Column) -> str | None:
    """The table a column belongs to, by its qualifier or its SELECT's only table."""
    select = column.find_ancestor(exp.Select)
    while select is not None:
        tables = [
            t
            for t in [select.args.get("from_"), *(select.args.get("joins") or [])]
            for t in ([t.this] if t is not None else [])
            if isinstance(t, exp.Table)
        ]
        if column.table:
            for table in tables:
                if table.alias_or_name == column.table:
                    return table.name
        elif len(tables) == 1:
            return tables[0].name
        elif tables:
            return None
        select = select.find_ancestor(exp.Select)
    return None


def _same_column(a: exp.Expr, b: exp.Column) -> bool:
    return (
        isinstance(a, exp.Column)
        and a.name.lower() == b.name.lower()
        and (not a.table or not b.table or a.table == b.table)
    )


def _null_test(node: exp.Expr) -> tuple[exp.Expr, bool] | None:
    """``(operand, negated)`` for ``x IS NULL`` / ``x IS NOT NULL``, as either dialect parses it."""
    node = node.unnest()
    negated = False
    if isinstance(node, exp.Not):
        node, negated = node.this.unnest(), True
    if isinstance(node, exp.Is) and isinstance(node.expression, exp.Null):
        return node.this, negated != bool(node.args.get("negate"))
    return None


def says_not_null(condition: exp.Expr, column: exp.Column) -> bool:
    """Whether ``condition`` (an AND of parts) requires ``column IS NOT NULL``."""
    for part in condition.flatten() if isinstance(condition, exp.And) else [condition]:
        test = _null_test(part)
        if test is not None and test[1] and _same_column(test[0], column):
            return True
    return False


def _says_is_null(condition: exp.Expr, column: exp.Column) -> bool:
    test = _null_test(condition)
    return test is not None and not test[1] and _same_column(test[0], column)


def null_handled(node: exp.In, column: exp.Column) -> bool:
    """Whether the NOT IN sits beside ``col IS NULL OR …`` or ``col IS NOT NULL AND …``."""
    child: exp.Expr = node.parent or node  # the NOT
    parent = child.parent
    while isinstance(parent, exp.And | exp.Or | exp.Paren):
        if isinstance(parent, exp.Or) and any(
            _says_is_null(side, column) for side in parent.flatten()
        ):
            return True
        if isinstance(parent, exp.And) and says_not_null(parent, column):
            return True
        parent = parent.parent
    return False
