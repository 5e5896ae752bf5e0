"""Representations shared by the REST API, the CLI's ``--json`` and the console: fields listed
explicitly, never ORM rows."""
