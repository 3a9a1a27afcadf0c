"""Background work queued by task name, once the current transaction commits.

Services ask for work through here instead of importing ``knowledge.tasks``, which imports the
services: task modules depend on services, never the reverse (no import circle
registration -> tasks -> pipeline -> store -> registration).

The queue (Redis) may be down when the transaction commits: the work is then not sent, the
request that asked for it still succeeds (what it stored is committed), and ``on_failure`` marks
the rows so that the beat's recovery sends it once the queue is back.
"""

from __future__ import annotations

import logging
import os
import time
from collections.abc import Callable
from functools import lru_cache

import redis
from django.conf import settings
from django.db import transaction
from kombu.exceptions import OperationalError as QueueUnreachable

from portal.celery import app

logger = logging.getLogger(__name__)

INGEST_VERSION = "knowledge.ingest_version"
SYNC_SOURCE = "knowledge.sync_source"
FILL_SECOND_VECTORS = "knowledge.fill_second_vectors"


def enqueue_on_commit(
    task: str,
    *args: object,
    on_failure: Callable[[], object] | None = None,
    **kwargs: object,
) -> None:
    """Send ``task`` (routed to its queue by name) when the transaction commits; at once outside
    a transaction. Nothing is queued for work a rollback undoes."""
    transaction.on_commit(lambda: _send(task, args, kwargs, on_failure))


def _send(task: str, args: tuple, kwargs: dict, on_failure: Callable[[], object] | None) -> None:
    try:
        app.send_task(task, args=args, kwargs=kwargs)
    except (QueueUnreachable, redis.RedisError, OSError) as exc:
        logger.warning("%s%r not queued, the queue is unreachable: %s", task, args, exc)
        if on_failure is not None:
            on_failure()


# Seconds a "queued once" mark lasts when its task never runs (lost with a dead broker); the
# beat's schedule queues such work again meanwhile.
ONCE_MARK_SECONDS = 600


def enqueue_once_on_commit(task: str) -> None:
    """Send ``task`` (no arguments) when the transaction commits unless one is already waiting
    in its queue: 309 versions ready one after the other queue one run of a backlog task, not
    309 runs that each hold a worker for a turn. The task calls ``started_once`` when it starts,
    so work that arrives while it runs gets one follow-up."""
    transaction.on_commit(lambda: _send_once(task))


def started_once(task: str) -> None:
    """The waiting run of ``task`` has started: the next ``enqueue_once_on_commit`` queues one."""
    try:
        _redis().delete(_once_key(task))
    except redis.RedisError:
        logger.warning("%s: its queued mark not cleared, Redis unreachable", task)


def take_turn(task: str, seconds: int) -> bool:
    """Whether this process may run ``task`` now: one process of the deployment at a time, so a
    backlog task never holds more than one worker process while ingests wait. The turn ends
    with ``end_turn``, or by itself after ``seconds`` (a process killed mid-turn)."""
    try:
        return bool(_redis().set(f"kb:turn:{task}", os.getpid(), nx=True, ex=seconds))
    except redis.RedisError:
        return True  # no turn to read: run it, the batches are claimed apart anyway


def end_turn(task: str) -> None:
    try:
        _redis().delete(f"kb:turn:{task}")
    except redis.RedisError:
        logger.warning("%s: its turn not ended, Redis unreachable; it ends by itself", task)


def _send_once(task: str) -> None:
    try:
        first = _redis().set(_once_key(task), 1, nx=True, ex=ONCE_MARK_SECONDS)
    except redis.RedisError:
        first = True  # no mark to read: send it, a duplicate only costs a turn
    if first:
        _send(task, (), {}, None)


def _once_key(task: str) -> str:
    return f"kb:queued:{task}"


@lru_cache(maxsize=1)
def _redis() -> redis.Redis:
    return redis.Redis.from_url(settings.REDIS_URL, socket_timeout=1, socket_connect_timeout=1)


# How fast a backlog task gets through its work, for the pages (seconds kept after its end).
PACE_SECONDS = 86_400


def record_pace(task: str, done: int, total: int) -> None:
    """Note that ``task`` has ``done`` of ``total`` items: the first note of a run (none kept,
    or the last run ended) starts it; the pages read how fast it goes (``pace``)."""
    key = f"kb:pace:{task}"
    now = time.time()
    try:
        client = _redis()
        kept = client.hgetall(key)
        ended = not kept or int(kept.get(b"done", 0)) >= int(kept.get(b"total", 0))
        if ended and done < total:
            client.hset(
                key,
                mapping={
                    "started": now,
                    "start_done": done,
                    "at": now,
                    "done": done,
                    "total": total,
                },
            )
        elif not ended:
            client.hset(key, mapping={"at": now, "done": done, "total": total})
        client.expire(key, PACE_SECONDS)
    except redis.RedisError:
        pass  # the pace is shown when known; the work goes on without it


def pace(task: str) -> dict[str, float] | None:
    """The current or last run of ``task``: when it started, how many items it had done then
    and has now, of how many, and when it last noted (None: none known)."""
    try:
        kept = _redis().hgetall(f"kb:pace:{task}")
    except redis.RedisError:
        return None
    if not kept:
        return None
    return {k.decode(): float(v) for k, v in kept.items()}
