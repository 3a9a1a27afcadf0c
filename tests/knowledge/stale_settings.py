"""Settings for a worker that declares an ingest stalled after 3 s without a heartbeat.

``KB_INGEST_STALE_SECONDS`` cannot go below 30 (a real deployment must not take over a busy
worker's version), so the stall tests start their worker with this module instead.
"""

from portal.settings import *  # noqa: F403

INGEST_STALE_SECONDS = 3
