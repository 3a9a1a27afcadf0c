"""Run the whole portal: embedded services, migrations, first admin, web server, worker, beat.

The web server, the Celery worker and the beat (the schedules) are three processes, each
started again when it dies (killed, out of memory, a broker that went away): a dead beat
stops every schedule, and the beat inside the worker (``--beat``) died with the worker's
children. A process that keeps dying (five times in two minutes) stops the portal instead.

Ctrl-C (or SIGTERM) stops every process this command started, in order: web server, worker and
beat first, then Redis and PostgreSQL (through the lease in ``portal.embedded``). Running it
again keeps all data.
"""

from __future__ import annotations

import contextlib
import ctypes
import os
import signal
import subprocess
import sys
import time
import urllib.request
from typing import Any

import psutil
from django.conf import settings
from django.core.management import call_command
from django.core.management.base import BaseCommand, CommandError
from django.db import connections

from portal import paths
from portal.accounts import ensure_first_admin
from portal.embedded import release
from portal.services_layout import acquire_services, embedded_layout

_PR_SET_PDEATHSIG = 1
CELERY_ROOT_WARNING = "You're running the worker with superuser privileges"
# Seconds uvicorn keeps an idle connection open (deploy/ files use the same value).
KEEP_ALIVE_SECONDS = 75
# A process that dies this many times within this many seconds is not started again.
RESTART_LIMIT = 5
RESTART_WINDOW_SECONDS = 120
DEADLINE_PROTOCOL = "portal.deadlines:DeadlineProtocol"


def _die_with_parent() -> None:
    # Runs in the child between fork and exec: if this supervisor is killed outright, the
    # kernel sends SIGTERM to the child, so no web server or worker is left behind.
    with contextlib.suppress(OSError):
        ctypes.CDLL("libc.so.6", use_errno=True).prctl(_PR_SET_PDEATHSIG, signal.SIGTERM)


def _signal_name(number: int) -> str:
    try:
        return signal.Signals(number).name
    except ValueError:
        return f"signal {number}"


def web_command(host: str, port: int) -> list[str]:
    """The web server's command line (deploy/systemd/kb-web.service and the compose file carry
    the same flags)."""
    return [
        sys.executable,
        "-m",
        "uvicorn",
        "portal.asgi:application",
        "--host",
        host,
        "--port",
        str(port),
        "--workers",
        str(settings.RUN_WEB_WORKERS),
        "--no-access-log",
        "--lifespan",
        "off",
        "--timeout-graceful-shutdown",
        "5",
        # Longer than any client's or proxy's idle keep-alive: with uvicorn's 5 s, a client
        # reusing a connection the server is closing gets a transport error (load.py).
        "--timeout-keep-alive",
        str(KEEP_ALIVE_SECONDS),
        # The client's address is the socket's: uvicorn would otherwise believe X-Forwarded-For
        # from the loopback, so anyone on the machine could pose as any address. A proxy's
        # header is read by the portal itself, from KB_TRUSTED_PROXIES only (portal.addresses).
        "--no-proxy-headers",
        # The hard cap on open connections and tasks of a process (beyond it uvicorn answers a
        # bare 503): the portal's own ceiling on requests at once (KB_WEB_CONCURRENCY,
        # portal.capacity, 503 with Retry-After) answers long before a flood reaches it.
        "--limit-concurrency",
        str(settings.WEB_CONNECTIONS),
        # uvicorn's HTTP/1.1 with a deadline on a request's head and body and on a client that
        # stops reading (portal.deadlines): uvicorn itself waits for them as long as they like.
        "--http",
        DEADLINE_PROTOCOL,
        # The portal serves no WebSocket: an upgrade request is an ordinary request.
        "--ws",
        "none",
    ]


class Command(BaseCommand):
    help = (
        "Run the portal (web server, Celery worker and beat) on the embedded or configured "
        "services."
    )

    def add_arguments(self, parser: Any) -> None:
        parser.add_argument("--host", default=settings.RUN_HOST)
        parser.add_argument("--port", type=int, default=settings.RUN_PORT)
        parser.add_argument("--no-worker", action="store_true", help="web server only (no beat)")
        parser.add_argument(
            "--no-demo", action="store_true", help="do not load the demo knowledge base"
        )

    def handle(self, *args: Any, **options: Any) -> None:
        self._children: dict[str, subprocess.Popen[bytes]] = {}
        self._commands: dict[str, list[str]] = {}
        self._exits: dict[str, list[float]] = {}
        self._stopping = False
        signal.signal(signal.SIGTERM, self._on_signal)
        signal.signal(signal.SIGINT, self._on_signal)

        self._say(
            "Starting services"
            + (" (embedded PostgreSQL and Redis)" if settings.EMBEDDED_POSTGRES else "")
        )
        acquire_services()
        call_command("migrate", interactive=False, verbosity=0)
        self._first_admin()
        if settings.DEMO_KNOWLEDGE_BASE and not options["no_demo"]:
            self._load_demo()

        url = f"http://{options['host']}:{options['port']}/"
        self._spawn("web", web_command(options["host"], options["port"]))
        if not options["no_worker"]:
            self._spawn("worker", self._worker_command())
            self._spawn("beat", self._beat_command())
        self._wait_until_up(url)
        self._say(f"Knowledge Belt is running at {url}  (Ctrl-C stops everything)")
        try:
            self._supervise()
        finally:
            self._shutdown()

    # ------------------------------------------------------------------------------------------

    def _say(self, text: str) -> None:
        self.stdout.write(text)
        self.stdout.flush()

    def _first_admin(self) -> None:
        admin = ensure_first_admin()
        if admin is None:
            return
        if admin.password:
            self._say(
                f"Created the first admin account: user '{admin.username}', password '{admin.password}'"
                "\n  (shown once; set KB_ADMIN_PASSWORD to choose it, change it on the admin page)"
            )
        else:
            self._say(
                f"Created the first admin account '{admin.username}' (password from KB_ADMIN_PASSWORD)"
            )

    def _load_demo(self) -> None:
        # The knowledge app's command, called by name: the portal (the base layer) knows no
        # document; the loader says what it queued.
        call_command("load_demo", stdout=self.stdout)

    def _worker_command(self) -> list[str]:
        return [
            sys.executable,
            "-m",
            "celery",
            "-A",
            "portal.celery",
            "--quiet",  # no banner: the run command prints what matters
            "worker",
            "--loglevel",
            "WARNING",
            "--concurrency",
            str(settings.CELERY_WORKER_CONCURRENCY),
            "--hostname",
            f"kb-worker-{os.getpid()}@%h",
        ]

    def _beat_command(self) -> list[str]:
        # Its own process, not the worker's --beat: that runs as one of the worker's children
        # and died with them, unseen and never started again.
        return [
            sys.executable,
            "-m",
            "celery",
            "-A",
            "portal.celery",
            "--quiet",
            "beat",
            "--loglevel",
            "WARNING",
            "--schedule",
            str(settings.DATA_DIR / "celerybeat-schedule"),
        ]

    def _spawn(self, name: str, command: list[str]) -> None:
        # Celery warns at length when its worker runs as root, which a one-machine portal on a
        # developer's box or in a container often does; the deployment units run as a user.
        env = {**os.environ, "PYTHONWARNINGS": "ignore:" + CELERY_ROOT_WARNING}
        process = subprocess.Popen(
            command,
            cwd=paths.HOME_DIR,  # the checkout, or the folder an installed portal runs in
            env=env,
            start_new_session=True,
            preexec_fn=_die_with_parent,
        )
        self._children[name] = process
        self._commands[name] = command

    def _wait_until_up(self, url: str, timeout: float = 90) -> None:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline and not self._stopping:
            for name, process in self._children.items():
                if process.poll() is not None:
                    raise CommandError(f"the {name} process exited with code {process.returncode}")
            try:
                with urllib.request.urlopen(url + "login/", timeout=2) as response:
                    if response.status == 200:
                        return
            except OSError:
                time.sleep(0.3)
        if not self._stopping:
            raise CommandError(f"the web server did not answer at {url} within {timeout:.0f} s")

    def _supervise(self) -> None:
        while not self._stopping:
            for name, process in list(self._children.items()):
                died = process.poll() is not None and not self._stopping
                if died and not self._start_again(name, process.returncode):
                    return
            time.sleep(0.5)

    def _start_again(self, name: str, code: int) -> bool:
        """Start a process that died again; False (stop the portal) when it keeps dying."""
        how = f"was killed by {_signal_name(-code)}" if code < 0 else f"exited with code {code}"
        now = time.monotonic()
        exits = [t for t in self._exits.get(name, []) if now - t < RESTART_WINDOW_SECONDS]
        self._exits[name] = [*exits, now]
        if len(self._exits[name]) >= RESTART_LIMIT:
            self.stderr.write(
                f"the {name} process {how}, {RESTART_LIMIT} times in "
                f"{RESTART_WINDOW_SECONDS} s; stopping"
            )
            return False
        self.stderr.write(f"the {name} process {how}; starting it again")
        self._spawn(name, self._commands[name])
        return True

    def _on_signal(self, _signum: int, _frame: object) -> None:
        if self._stopping:
            return
        self._stopping = True
        self._say("\nStopping…")

    def _shutdown(self) -> None:
        self._stopping = True
        for process in self._children.values():
            if process.poll() is None:
                process.send_signal(signal.SIGTERM)
        deadline = time.monotonic() + 15
        for name, process in self._children.items():
            try:
                process.wait(max(0.1, deadline - time.monotonic()))
            except subprocess.TimeoutExpired:
                # The worker's warm shutdown waits for a running ingest; the task is acked late,
                # so killing it here only means it runs again on the next start.
                self.stderr.write(f"the {name} process did not stop in time; killing it")
                kill_tree(process)
        # Releasing the lease stops Redis and PostgreSQL if nobody else uses them.
        connections.close_all()
        if settings.EMBEDDED_POSTGRES or settings.EMBEDDED_REDIS:
            release(embedded_layout())
        self._say("Stopped.")


def kill_tree(process: subprocess.Popen) -> None:
    """SIGKILL a child process and every process under it, and wait for them. A worker killed
    alone leaves its pool running (a process busy with a batch of second vectors): each holds
    a lease on the embedded services, so the last release finds one and stops neither
    PostgreSQL nor Redis, and they outlive ./kb run."""
    try:
        tree = psutil.Process(process.pid).children(recursive=True)
    except psutil.Error:
        tree = []
    process.kill()
    for child in tree:
        with contextlib.suppress(psutil.Error):
            child.kill()
    process.wait()
    psutil.wait_procs(tree, timeout=10)
