"""Many-row INSERTs whose repeated values are converted for the database once, not once per row.

``Connection.execute(insert(table), rows)`` runs every value of every row through its column's bind
processor, and builds a parameter set per row around it. For discovery's first pass (tens of
thousands of tool rows of about twenty columns, most of them the same ``now``, server id and flags
in every row of a pass) that bookkeeping cost more than the SQL. :class:`BulkInsert` compiles the
INSERT with SQLAlchemy for the connection's dialect, converts each column's value with that column's
own bind processor (``TypeEngine.bind_processor``, the very function ``execute`` would call), once
for a value shared by all rows, and hands the rows to the driver's ``executemany`` through
``Connection.exec_driver_sql``. What reaches the database is what ``execute`` would have sent.

The statement is a plain INSERT unless the caller builds it (``build``: the dialect's own ``insert``
of the table, e.g. with its ``ON CONFLICT`` clause); its values are always the bound columns.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any

from sqlalchemy import Connection, Insert, Table, bindparam, insert
from sqlalchemy.engine import Dialect

__all__ = ["BulkInsert"]

Processor = Callable[[Any], Any]


class BulkInsert:
    """INSERT of ``columns`` into ``table``, for many rows at once."""

    def __init__(self, table: Table, columns: Sequence[str],
                 build: Callable[[Dialect, Table], Insert] | None = None) -> None:
        self.table = table
        self.columns = tuple(columns)
        self.build = build
        self._compiled: dict[str, tuple[str, tuple[str, ...] | None, dict[str, Any]]] = {}

    def _for(self, dialect: Dialect) -> tuple[str, tuple[str, ...] | None, dict[str, Any]]:
        found = self._compiled.get(dialect.name)
        if found is None:
            base = self.build(dialect, self.table) if self.build is not None else insert(self.table)
            statement = base.values({name: bindparam(name) for name in self.columns})
            compiled = statement.compile(dialect=dialect)
            order = tuple(compiled.positiontup) if compiled.positional and compiled.positiontup else None
            processors = {name: self.table.c[name].type.dialect_impl(dialect).bind_processor(dialect)
                          for name in self.columns}
            found = self._compiled[dialect.name] = (compiled.string, order, processors)
        return found

    def execute(self, conn: Connection, shared: Mapping[str, Any], rows: Sequence[Mapping[str, Any]]) -> None:
        """Insert ``rows`` (each the per-row columns), every row also taking the ``shared`` values.

        Every column must be given, in ``shared`` or in each row (no column defaults are applied).
        """
        if not rows:
            return
        sql, order, processors = self._for(conn.dialect)
        fixed = {name: _process(processors[name], value) for name, value in shared.items()}
        params: list[Any]
        if order is None:  # named parameters: one dict per row
            per_row = [(name, processors[name]) for name in self.columns if name not in fixed]
            params = [{**fixed, **{name: process(row[name]) if process is not None else row[name]
                                   for name, process in per_row}} for row in rows]
        else:  # positional: each row a copy of the shared values with its own filled in at their places
            template = [fixed.get(name) for name in order]
            converted = [(at, name, processors[name]) for at, name in enumerate(order)
                         if name not in fixed and processors[name] is not None]
            plain = [(at, name) for at, name in enumerate(order) if name not in fixed and processors[name] is None]
            params = []
            for row in rows:
                values = template.copy()
                for at, name, process in converted:
                    values[at] = process(row[name])
                for at, name in plain:
                    values[at] = row[name]
                params.append(tuple(values))
        conn.exec_driver_sql(sql, params)


def _process(process: Processor | None, value: Any) -> Any:
    return process(value) if process is not None else value
