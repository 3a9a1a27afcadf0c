"""Portal-level Celery tasks."""

from __future__ import annotations

from portal.audit import purge_old_events
from portal.celery import app
from portal.models import WorkerHeartbeat


@app.task(name="portal.purge_audit_log", ignore_result=True)
def purge_audit_log() -> int:
    """Remove audit events older than KB_AUDIT_RETENTION_DAYS."""
    return purge_old_events()


@app.task(name="portal.heartbeat", ignore_result=True)
def heartbeat(token: str = "") -> None:
    """Record that a worker picked up and ran a task (used by health checks and tests)."""
    hostname = heartbeat.request.hostname or "unknown"
    WorkerHeartbeat.objects.update_or_create(worker=hostname, defaults={"token": token})
