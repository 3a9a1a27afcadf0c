"""Benchmarks run on their own embedded servers and database, never on the portal's data.

``setup()`` points the settings at ``var/bench-<name>`` (or ``KB_BENCH_DATA_DIR``), a free Redis
port, and migrates. Pass ``fresh=True`` to start from an empty knowledge base.
"""

from __future__ import annotations

import os
import shutil
import socket
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
CORPUS = Path(os.environ.get("KB_DEMO_CORPUS", ROOT.parent / "shared" / "corpus"))
EVAL = ROOT.parent / "shared" / "eval"


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def setup(name: str, *, fresh: bool = True) -> Path:
    sys.path.insert(0, str(ROOT))
    data_dir = Path(os.environ.get("KB_BENCH_DATA_DIR", ROOT / "var" / f"bench-{name}"))
    if fresh and data_dir.exists():
        shutil.rmtree(data_dir)
    data_dir.mkdir(parents=True, exist_ok=True)
    os.environ["KB_DATA_DIR"] = str(data_dir)
    os.environ["KB_REDIS_PORT"] = str(_free_port())
    os.environ["KB_EMBEDDED_FAST_UNSAFE"] = "1"
    # A benchmark is one user asking many times a minute: the per-user limits would stop it.
    os.environ.setdefault("KB_RATE_ASK_PER_MINUTE", "100000")
    os.environ.setdefault("KB_RATE_SEARCH_PER_MINUTE", "100000")
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "portal.settings")
    import django

    django.setup()
    from django.core.management import call_command

    call_command("migrate", verbosity=0)
    return data_dir


def fill_second_vectors() -> None:
    """The second vectors the workers make after an ingest (e5, each unit of each searchable
    chunk), made here on every core; the time is printed."""
    import time

    from knowledge.embedding import build_second_embedder
    from knowledge.ingest.second import fill_second_vectors as fill

    embedder = build_second_embedder(threads=os.cpu_count())
    if embedder is None:
        return
    started = time.perf_counter()
    done, _ = fill(embedder)
    if done:
        print(f"second vectors of {done} chunks made in {time.perf_counter() - started:.0f} s")


def teardown() -> None:
    from django.conf import settings
    from django.db import connections

    from portal.embedded import release
    from portal.services_layout import embedded_layout

    connections.close_all()
    if settings.EMBEDDED_POSTGRES or settings.EMBEDDED_REDIS:
        release(embedded_layout())


def percentile(values: list[float], p: float) -> float:
    ordered = sorted(values)
    if not ordered:
        return 0.0
    index = min(len(ordered) - 1, max(0, round(p / 100 * (len(ordered) - 1))))
    return ordered[index]


def spawn(args: list[str], env: dict[str, str] | None = None):
    """``python -m ARGS`` in its own process group (the caller ends it with os.killpg), quiet."""
    import subprocess

    return subprocess.Popen(
        [sys.executable, "-m", *args],
        cwd=ROOT,
        env=env if env is not None else dict(os.environ),
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        start_new_session=True,
    )


def spawn_beat(env: dict[str, str] | None = None):
    """The beat (``celery beat``), as a portal runs it: ``/healthz`` is 200 only with its tick.
    Its drop folder is one that does not exist, so a checkout's own files stay out."""
    data_dir = Path(os.environ["KB_DATA_DIR"])
    env = {**(env if env is not None else os.environ), "KB_DROP_FOLDER": str(data_dir / "no-drop")}
    schedule = str(data_dir / "celerybeat-schedule")
    return spawn(["celery", "-A", "portal.celery", "beat", "--schedule", schedule], env)


def wait_http(url: str, timeout: float = 60) -> None:
    """Poll ``url`` until it answers 200 (a server up, a worker's heartbeat seen)."""
    import time

    import httpx2

    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        try:
            if httpx2.get(url, timeout=2).status_code == 200:
                return
        except httpx2.HTTPError:
            pass
        time.sleep(0.5)
    raise SystemExit(f"{url} did not answer 200 in {timeout} s")
