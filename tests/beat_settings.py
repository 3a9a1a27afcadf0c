"""Settings for a beat that ticks and schedules nothing: the tests that need ``/healthz`` 200
start a real beat (it records its tick, ``portal.beat``) without its tasks reaching the
session's workers in the middle of another test."""

from portal.settings import *  # noqa: F403

CELERY_BEAT_SCHEDULE = {}
