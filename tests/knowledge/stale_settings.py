"""Settings for a worker that declares an ingest stalled after 3 s without a heartbeat.

``KB_INGEST_STALE_SECONDS`` cannot go below 30 (a real deployment must not take over a busy
worker's version), so the stall tests start their workers with this module instead. Batches of
8 chunks make the heartbeat (one per batch) frequent, so a test can kill a worker mid-embedding.
"""

from portal.settings import *  # noqa: F403

INGEST_STALE_SECONDS = 3
EMBED_BATCH = 8
