from __future__ import annotations

from django.db import models


class WorkerHeartbeat(models.Model):
    """The last time each Celery worker ran a task; /healthz shows it next to the ping."""

    worker = models.CharField(max_length=200, unique=True)
    token = models.CharField(max_length=64, blank=True)
    beat_at = models.DateTimeField(auto_now=True)

    def __str__(self) -> str:
        return f"{self.worker} @ {self.beat_at:%Y-%m-%d %H:%M:%S}"
