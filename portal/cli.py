"""The portal's command line: ``manage.py`` in a checkout, ``knowledge-belt`` once installed."""

from __future__ import annotations

import sys


def main() -> None:
    """Run one management command with the portal's guards: a configuration error or an
    unreachable service is one readable line, and data commands migrate a fresh database."""
    # The entry point: the settings are loaded (and checked) before Django's machinery is
    # imported, so a configuration error is one line rather than a traceback.
    from portal.boot import load_settings_or_exit, migrate_if_needed, setup_or_exit
    from portal.locale_build import compile_catalogs

    load_settings_or_exit()
    compile_catalogs()  # a checkout's translations: .po under version control, .mo built here
    setup_or_exit()
    from django.core.management import execute_from_command_line
    from django.db.utils import OperationalError

    from portal.embedded import EmbeddedServiceError

    try:
        migrate_if_needed(sys.argv)
        execute_from_command_line(sys.argv)
    except (OperationalError, EmbeddedServiceError) as exc:
        # One line instead of a driver traceback: the usual cause is configuration.
        sys.stderr.write(f"knowledge-belt: {str(exc).strip().splitlines()[0]}\n")
        raise SystemExit(2) from None
