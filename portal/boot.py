"""Entry-point guard: bad configuration ends the process with one readable line."""

from __future__ import annotations

import os
import sys


def load_settings_or_exit() -> None:
    """Import the settings now, turning a configuration error into a one-line message."""
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "portal.settings")
    # The entry points' guard: Django is imported once the settings module is named.
    from django.conf import settings
    from django.core.exceptions import ImproperlyConfigured

    try:
        settings.INSTALLED_APPS  # noqa: B018 - forces the settings module to load
    except ImproperlyConfigured as exc:
        sys.stderr.write(f"knowledge-belt: configuration error: {exc}\n")
        raise SystemExit(2) from None


def setup_or_exit() -> None:
    """Set Django up now, after the settings: the apps read their own configuration as they
    start (``knowledge`` its ranking weights), and an error in it is one line too."""
    load_settings_or_exit()
    import django
    from django.core.exceptions import ImproperlyConfigured

    try:
        django.setup(set_prefix=False)
    except ImproperlyConfigured as exc:
        sys.stderr.write(f"knowledge-belt: configuration error: {exc}\n")
        raise SystemExit(2) from None


# Commands that read or write the knowledge base: on a fresh data folder they first bring the
# database up to date, the way `./kb run` does, instead of failing on a missing table.
DATA_COMMANDS = frozenset(
    {"ingest", "search", "ask", "mcp", "reembed", "export_eval", "eval", "createsuperuser"}
)


def migrate_if_needed(argv: list[str]) -> None:
    """Apply unapplied migrations before a data command (one line on stderr when it does)."""
    if len(argv) < 2 or argv[1] not in DATA_COMMANDS or "--help" in argv or "-h" in argv:
        return
    import django  # the entry points' guard: Django is set up here, then used

    django.setup()
    from django.core.management import call_command
    from django.db import connection
    from django.db.migrations.executor import MigrationExecutor

    executor = MigrationExecutor(connection)
    if executor.migration_plan(executor.loader.graph.leaf_nodes()):
        sys.stderr.write("knowledge-belt: preparing the database (migrations)\n")
        call_command("migrate", interactive=False, verbosity=0)
