"""``/healthz`` under a flood: 200 concurrent anonymous calls against the real server.

Starts the embedded PostgreSQL and Redis (``var/bench-health``), a Celery worker and uvicorn on
loopback, then sends N concurrent ``GET /healthz`` (default 200, 100 client threads) while one
user signs in. Prints the latency of every call (p50, p95, max), the statuses, the number of
PostgreSQL connections before and after, and whether the sign-in worked.

Run: ``.venv/bin/python benchmarks/health.py [N]``.
"""

from __future__ import annotations

import os
import re
import sys
import time
from concurrent.futures import ThreadPoolExecutor

from _setup import _free_port, percentile, setup, spawn, teardown, wait_http

PASSWORD = "benchmark-password-9f3k"


def _connections() -> int:
    from django.db import connection

    with connection.cursor() as cursor:
        cursor.execute("SELECT count(*) FROM pg_stat_activity WHERE datname = current_database()")
        return cursor.fetchone()[0]


def _login(base: str) -> int:
    import httpx2

    with httpx2.Client(base_url=base, timeout=30) as client:
        page = client.get("/login/")
        token = re.search(r'name="csrfmiddlewaretoken" value="([^"]+)"', page.text).group(1)
        data = {"username": "bench", "password": PASSWORD, "csrfmiddlewaretoken": token}
        return client.post("/login/", data=data).status_code


def main() -> None:
    import httpx2

    calls = int(sys.argv[1]) if len(sys.argv) > 1 else 200
    setup("health")
    from django.contrib.auth import get_user_model

    get_user_model().objects.create_user("bench", password=PASSWORD)
    port = _free_port()
    base = f"http://127.0.0.1:{port}"
    worker = spawn(["celery", "-A", "portal.celery", "worker", "--concurrency", "1"])
    web = spawn(["uvicorn", "portal.asgi:application", "--port", str(port), "--no-access-log"])
    try:
        wait_http(base + "/healthz")  # up, and a worker has sent its heartbeat
        before = _connections()

        # One client for all threads: a client per call spends its time building TLS contexts.
        limits = httpx2.Limits(max_connections=100, max_keepalive_connections=0)
        client = httpx2.Client(base_url=base, timeout=60, limits=limits)

        def call(_: int) -> tuple[int, float]:
            started = time.perf_counter()
            status = client.get("/healthz").status_code
            return status, (time.perf_counter() - started) * 1000

        started = time.perf_counter()
        with client, ThreadPoolExecutor(max_workers=100) as pool:
            flood = pool.map(call, range(calls))
            login_status = _login(base)
            results = list(flood)
        wall = time.perf_counter() - started
        after = _connections()
        latencies = [ms for _, ms in results]
        statuses = {s: sum(1 for x, _ in results if x == s) for s in {x for x, _ in results}}
        print(f"{calls} concurrent GET /healthz in {wall:.2f} s; statuses {statuses}")
        print(
            f"latency p50 {percentile(latencies, 50):.0f} ms, p95 {percentile(latencies, 95):.0f}"
            f" ms, max {max(latencies):.0f} ms; answered within 1 s: "
            f"{sum(1 for ms in latencies if ms <= 1000)}/{calls}"
        )
        print(f"PostgreSQL connections: {before} before, {after} after")
        print(
            f"sign-in during the flood: HTTP {login_status} ({'ok' if login_status == 302 else 'FAILED'})"
        )
    finally:
        for process in (web, worker):
            os.killpg(process.pid, 15)
            process.wait(30)
        teardown()


if __name__ == "__main__":
    main()
