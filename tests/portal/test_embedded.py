"""One embedded Redis per data folder (issue 40, row 15): a command started by hand beside a
running portal, with another ``KB_REDIS_PORT`` or none, joins the portal's Redis, found from
the data folder's pid file, instead of starting a second server on the same files; and the
portal's last process then stops that one server, leaving none behind.

Real processes (``manage.py shell``) on a data folder of the test's own; PostgreSQL is the
session's (``DATABASE_URL``), so only Redis is embedded here.
"""

from __future__ import annotations

import os
import subprocess
import sys
import time
from pathlib import Path

import psutil
import pytest
from django.db import connection

from portal.services_layout import embedded_layout
from tests.conftest import ROOT, free_port

pytestmark = pytest.mark.skipif(
    bool(os.environ.get("DATABASE_URL") or os.environ.get("REDIS_URL")),
    reason="exercises the embedded services",
)

HOLD = (
    "from django.conf import settings; from portal.services_layout import acquire_services; "
    "acquire_services(); print(settings.REDIS_URL, flush=True); input()"
)
JOIN = (
    "from django.conf import settings; from portal.services_layout import acquire_services; "
    "import redis; acquire_services(); redis.Redis.from_url(settings.REDIS_URL).ping(); "
    "print(settings.REDIS_URL)"
)


def _env(data_dir: Path, **extra: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("KB_", "DJANGO_ALLOW"))}
    socket_dir = embedded_layout().socket_dir
    name = connection.settings_dict["NAME"]
    env.update(
        DATABASE_URL=f"postgres://postgres@/{name}?host={socket_dir}",
        KB_DATA_DIR=str(data_dir),
        KB_EMBEDDED_FAST_UNSAFE="1",
        **extra,
    )
    return env


def _shell(code: str, env: dict[str, str], **options) -> subprocess.Popen[str]:
    return subprocess.Popen(
        [sys.executable, "manage.py", "shell", "--verbosity", "0", "-c", code],
        cwd=ROOT,
        env=env,
        text=True,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        start_new_session=True,
        **options,
    )


def _servers(redis_dir: Path) -> list[psutil.Process]:
    """Redis processes working in the data folder's redis/ (each one's --dir)."""
    found = []
    for process in psutil.process_iter(["name"]):
        try:
            if "redis" in (process.info["name"] or "") and Path(process.cwd()) == redis_dir:
                found.append(process)
        except psutil.Error:
            pass
    return found


def _until_none(redis_dir: Path, timeout: float = 30) -> list[psutil.Process]:
    deadline = time.monotonic() + timeout
    while (left := _servers(redis_dir)) and time.monotonic() < deadline:
        time.sleep(0.2)
    return left


def test_a_command_beside_the_running_portal_joins_its_redis_and_ctrl_c_leaves_none(db, tmp_path):
    data_dir = tmp_path / "data"
    portal_port, other_port = free_port(), free_port()
    portal = _shell(HOLD, _env(data_dir, KB_REDIS_PORT=str(portal_port)), stdin=subprocess.PIPE)
    try:
        assert portal.stdout.readline().strip() == f"redis://127.0.0.1:{portal_port}/0", (
            portal.stderr.read() if portal.poll() is not None else "no answer"
        )
        pid_file = data_dir / "redis" / "redis.pid"
        before = pid_file.read_text()
        # By hand, with another KB_REDIS_PORT, and with none (the default port).
        for extra in ({"KB_REDIS_PORT": str(other_port)}, {}):
            joined = _shell(JOIN, _env(data_dir, **extra))
            out, err = joined.communicate(timeout=120)
            assert joined.returncode == 0, err
            assert out.strip() == f"redis://127.0.0.1:{portal_port}/0"
            assert pid_file.read_text() == before
            assert len(_servers(data_dir / "redis")) == 1
    finally:
        portal.communicate("\n", timeout=60)  # the portal's last process ends: its lease goes
    assert _until_none(data_dir / "redis") == []
