"""PostgreSQL backend that starts the embedded server on the first connection.

With ``DATABASE_URL`` set it is Django's own PostgreSQL backend, unchanged. Without it, the first
connection of a process takes a lease on the embedded PostgreSQL and Redis (see
``portal.embedded``), creates the database if needed, and connects through the server's socket.
Connection failures are re-raised with one plain sentence naming the server.
"""

from __future__ import annotations

import psycopg
from django.conf import settings
from django.db.backends.postgresql import base as postgresql
from django.db.utils import OperationalError

from portal.embedded import acquire, ensure_database
from portal.services_layout import embedded_layout


class DatabaseWrapper(postgresql.DatabaseWrapper):
    def get_connection_params(self) -> dict:
        params = super().get_connection_params()
        if settings.EMBEDDED_POSTGRES:
            params["host"] = str(embedded_layout().socket_dir)
        return params

    def get_new_connection(self, conn_params: dict):
        if settings.EMBEDDED_POSTGRES or settings.EMBEDDED_REDIS:
            layout = embedded_layout()
            acquire(layout)
            if settings.EMBEDDED_POSTGRES:
                ensure_database(layout, conn_params.get("dbname") or "postgres")
        try:
            return super().get_new_connection(conn_params)
        except psycopg.OperationalError as exc:
            where = conn_params.get("host") or "localhost"
            first_line = (
                str(exc).strip().splitlines()[-1] if str(exc).strip() else type(exc).__name__
            )
            raise OperationalError(
                f"cannot connect to PostgreSQL at {where}: {first_line}"
            ) from exc
