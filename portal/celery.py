"""The Celery application. Tasks live in each app's ``tasks.py``; JSON only, never pickle."""

from __future__ import annotations

from celery import Celery, signals

from portal.boot import load_settings_or_exit
from portal.services_layout import acquire_services

load_settings_or_exit()

app = Celery("portal")
app.config_from_object("django.conf:settings", namespace="CELERY")
app.autodiscover_tasks()


@signals.celeryd_init.connect
def _start_embedded_services(**_: object) -> None:
    # The worker talks to the broker before it touches the database, so it takes its lease
    # on the embedded servers here rather than on its first database connection.
    acquire_services()


_heartbeat = None


@signals.worker_ready.connect
def _start_heartbeat(sender: object = None, **_: object) -> None:
    global _heartbeat
    # It stores its beats through portal.models: loaded once Django is set up (the worker
    # imports this module, the Celery app, before that).
    from portal.worker_heartbeat import HeartbeatThread

    _heartbeat = HeartbeatThread(getattr(sender, "hostname", None) or "unknown")
    _heartbeat.start()


@signals.worker_shutdown.connect
def _stop_heartbeat(**_: object) -> None:
    if _heartbeat is not None:
        _heartbeat.stop()
