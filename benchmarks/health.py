"""The web server under floods: PostgreSQL connections and answers, against the real server.

Starts the embedded PostgreSQL and Redis (``var/bench-health``), a Celery worker and the web
server with the run command's own command line (``portal.management.commands.run``), ingests
the HSE app specifications, then sends, one flood after the other:

1. N concurrent anonymous ``GET /healthz`` (default 200, 100 client threads) while one user
   signs in;
2. N concurrent ``GET /healthz`` with a random ``sessionid`` cookie each;
3. N concurrent ``GET /login/`` with a random ``sessionid`` cookie each;
4. 150 concurrent ``GET /api/v1/search`` with an API token (150 client threads).

For each: the statuses, the latency (p50, p95, max), whether every 503 carried
``Retry-After``, and the PostgreSQL connections of the portal's database before, at the peak
(sampled every 50 ms during the flood), right after, and again after ``--idle`` seconds
(default 75: what a flood leaves behind).

Run: ``.venv/bin/python benchmarks/health.py [N] [--idle SECONDS] [--quick]`` (``--quick``: 20
calls a flood, 5 searches, the ТЗ alone ingested, 2 s idle).
"""

from __future__ import annotations

import argparse
import os
import re
import secrets
import threading
import time
from concurrent.futures import ThreadPoolExecutor

from _setup import (
    CORPUS,
    _free_port,
    arguments,
    percentile,
    setup,
    spawn,
    spawn_beat,
    teardown,
    wait_http,
)

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


def _web_command(port: int) -> list[str]:
    """The web server exactly as ``./kb run`` starts it (its flags are what is measured)."""
    from portal.management.commands import run

    if hasattr(run, "web_command"):
        return run.web_command("127.0.0.1", port)
    return run.Command()._web_command("127.0.0.1", port)  # before the bounded server


class Sampler:
    """The highest connection count seen while a flood runs (a query every 50 ms)."""

    def __init__(self) -> None:
        self.peak = 0
        self.refused = 0  # samples PostgreSQL refused: "too many clients"
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)

    def _run(self) -> None:
        from django.db import OperationalError, connection

        while not self._stop.is_set():
            try:
                self.peak = max(self.peak, _connections())
            except OperationalError:  # the server itself is out of connections
                self.refused += 1
                connection.close()
            time.sleep(0.05)
        connection.close()

    def __enter__(self) -> Sampler:
        self._thread.start()
        return self

    def __exit__(self, *_: object) -> None:
        self._stop.set()
        self._thread.join()


def flood(base: str, name: str, calls: int, threads: int, request, *, during=None) -> dict:
    """``calls`` concurrent calls of ``request(client) -> response``; prints one block."""
    import httpx2

    before = _connections()
    limits = httpx2.Limits(max_connections=threads, max_keepalive_connections=0)
    client = httpx2.Client(base_url=base, timeout=60, limits=limits)

    def call(_: int) -> tuple[int, float, bool]:
        started = time.perf_counter()
        try:
            response = request(client)
            status, retry = response.status_code, "retry-after" in response.headers
        except httpx2.HTTPError:
            status, retry = 0, False  # a transport error: no answer at all
        return status, (time.perf_counter() - started) * 1000, retry

    started = time.perf_counter()
    with client, Sampler() as sampler, ThreadPoolExecutor(max_workers=threads) as pool:
        results_iter = pool.map(call, range(calls))
        extra = during() if during else None
        results = list(results_iter)
    wall = time.perf_counter() - started
    after = _connections()
    latencies = [ms for _, ms, _ in results]
    statuses = {
        s: sum(1 for x, _, _ in results if x == s) for s in sorted({x for x, _, _ in results})
    }
    unavailable = [r for r in results if r[0] == 503]
    print(f"\n{name}: {calls} concurrent calls in {wall:.2f} s; statuses {statuses}")
    print(
        f"  latency p50 {percentile(latencies, 50):.0f} ms, p95 {percentile(latencies, 95):.0f} ms,"
        f" max {max(latencies):.0f} ms"
    )
    if unavailable:
        with_retry = sum(1 for r in unavailable if r[2])
        print(f"  503 with Retry-After: {with_retry}/{len(unavailable)}")
    full = (
        f" (PostgreSQL refused {sampler.refused} samples: too many clients)"
        if sampler.refused
        else ""
    )
    print(
        f"  PostgreSQL connections: {before} before, peak {sampler.peak}{full}, {after} right after"
    )
    return {"statuses": statuses, "extra": extra}


def main() -> None:
    import httpx2

    parser = argparse.ArgumentParser()
    parser.add_argument("calls", nargs="?", type=int, default=200)
    parser.add_argument("--idle", type=float, default=75.0)
    options = arguments(parser)
    specs, searches = CORPUS / "specs_hse_app_ru", 150
    if options.quick:
        options.calls, options.idle, searches = 20, 2.0, 5
        specs = specs / "ТЗ-Шакруа-Максим-БПИ182.docx"
    calls = options.calls

    setup("health")
    from django.contrib.auth import get_user_model
    from django.core.management import call_command

    from portal.api_auth import create_token

    user = get_user_model().objects.create_user("bench", password=PASSWORD)
    _, token = create_token(user, "bench")
    call_command("ingest", str(specs), source="HSE", verbosity=0)
    port = _free_port()
    base = f"http://127.0.0.1:{port}"
    worker = spawn(["celery", "-A", "portal.celery", "worker", "--concurrency", "1"])
    beat = spawn_beat()
    command = _web_command(port)
    print("web server:", " ".join(command[1:]))
    assert command[1] == "-m", command
    web = spawn(command[2:])  # spawn() runs "python -m ..."
    try:
        wait_http(base + "/healthz")  # up, a worker's heartbeat and the beat's tick seen
        idle = _connections()
        print(f"PostgreSQL connections with the portal idle: {idle}")

        def session_cookie() -> dict[str, str]:
            return {"Cookie": f"sessionid={secrets.token_hex(16)}"}

        result = flood(
            base,
            "anonymous GET /healthz",
            calls,
            100,
            lambda c: c.get("/healthz"),
            during=lambda: _login(base),
        )
        login = result["extra"]
        print(f"  sign-in during the flood: HTTP {login} ({'ok' if login == 302 else 'FAILED'})")
        flood(
            base,
            "GET /healthz with a random session cookie",
            calls,
            calls,
            lambda c: c.get("/healthz", headers=session_cookie()),
        )
        flood(
            base,
            "GET /login/ with a random session cookie",
            calls,
            calls,
            lambda c: c.get("/login/", headers=session_cookie()),
        )
        auth = {"Authorization": f"Bearer {token}"}
        flood(
            base,
            "API searches",
            searches,
            searches,
            lambda c: c.get(
                "/api/v1/search", params={"q": "требования к приложению"}, headers=auth
            ),
        )
        time.sleep(options.idle)
        print(f"\nPostgreSQL connections {options.idle:.0f} s after the floods: {_connections()}")
        after = httpx2.get(base + "/healthz", timeout=30).status_code
        print(f"GET /healthz after the floods: HTTP {after}")
    finally:
        for process in (web, worker, beat):
            os.killpg(process.pid, 15)
            process.wait(30)
        teardown()


if __name__ == "__main__":
    main()
