"""Alembic environment: runs on the connection toolvet hands it, or on the configured URL."""

from __future__ import annotations

from alembic import context
from sqlalchemy import create_engine

from toolvet.db.models import Base, complete_for_dialect

config = context.config
target_metadata = Base.metadata


def run() -> None:
    connection = config.attributes.get("connection")
    if connection is not None:
        complete_for_dialect(connection.dialect.name)
        context.configure(connection=connection, target_metadata=target_metadata,
                          render_as_batch=connection.dialect.name == "sqlite")
        with context.begin_transaction():
            context.run_migrations()
        return
    engine = create_engine(config.get_main_option("sqlalchemy.url") or "")
    with engine.connect() as conn:
        complete_for_dialect(conn.dialect.name)
        context.configure(connection=conn, target_metadata=target_metadata,
                          render_as_batch=conn.dialect.name == "sqlite")
        with context.begin_transaction():
            context.run_migrations()


run()
