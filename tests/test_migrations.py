"""Migrations: the fast "already at head" check agrees with Alembic, and the schema matches the models."""

from alembic.autogenerate import compare_metadata
from alembic.migration import MigrationContext
from alembic.script import ScriptDirectory

from toolvet.db.migrate import alembic_config, current_revision, head_revision
from toolvet.db.models import Base


def test_the_fast_head_check_agrees_with_alembic(ctx):
    script = ScriptDirectory.from_config(alembic_config(ctx.settings.resolved_database_url()))
    assert head_revision() == script.get_current_head()
    assert current_revision(ctx.db.engine) == head_revision()


def test_the_migrated_schema_matches_the_models(ctx):
    with ctx.db.engine.connect() as conn:
        diff = compare_metadata(MigrationContext.configure(conn), Base.metadata)
    assert diff == []
