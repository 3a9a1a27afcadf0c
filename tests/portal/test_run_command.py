"""The run command as a user runs it: start, log in, Ctrl-C, nothing left behind, data kept."""

from __future__ import annotations

import contextlib
import http.cookiejar
import os
import re
import signal
import subprocess
import sys
import time
import urllib.parse
import urllib.request
from pathlib import Path

import psutil
import pytest

from tests.conftest import ROOT, free_port

pytestmark = pytest.mark.skipif(
    bool(os.environ.get("DATABASE_URL")), reason="exercises the embedded services"
)


class RunningPortal:
    def __init__(self, data_dir: Path, port: int, redis_port: int) -> None:
        env = {
            k: v
            for k, v in os.environ.items()
            if not k.startswith(("KB_", "DJANGO_ALLOW")) and k not in ("DATABASE_URL", "REDIS_URL")
        }
        env.update(
            KB_DATA_DIR=str(data_dir),
            KB_PORT=str(port),
            KB_REDIS_PORT=str(redis_port),
            KB_DEMO="0",
            KB_ADMIN_PASSWORD="first-admin-pass-42",
            KB_WORKER_CONCURRENCY="1",
        )
        self.url = f"http://127.0.0.1:{port}"
        self.output: list[str] = []
        # A new session, as a terminal gives a foreground job: Ctrl-C reaches the whole group.
        self.process = subprocess.Popen(
            [sys.executable, "manage.py", "run"],
            cwd=ROOT,
            env=env,
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            text=True,
            start_new_session=True,
        )
        deadline = time.monotonic() + 180
        for line in self.process.stdout:
            self.output.append(line)
            if "is running at" in line:
                return
            if time.monotonic() > deadline:
                break
        raise AssertionError("the portal did not start:\n" + "".join(self.output))

    def descendants(self) -> list[psutil.Process]:
        return psutil.Process(self.process.pid).children(recursive=True)

    def child(self, command: str) -> psutil.Process | None:
        """The process this command started whose command line holds ``command``."""
        for process in psutil.Process(self.process.pid).children():
            with contextlib.suppress(psutil.Error):
                if command in " ".join(process.cmdline()):
                    return process
        return None

    def ctrl_c(self) -> None:
        os.killpg(self.process.pid, signal.SIGINT)
        rest, _ = self.process.communicate(timeout=90)
        self.output.append(rest)


def _login(url: str, username: str, password: str) -> str:
    jar = http.cookiejar.CookieJar()
    opener = urllib.request.build_opener(urllib.request.HTTPCookieProcessor(jar))
    html = opener.open(url + "/login/").read().decode()
    token = re.search(r'name="csrfmiddlewaretoken" value="([^"]+)"', html).group(1)
    data = urllib.parse.urlencode(
        {"csrfmiddlewaretoken": token, "username": username, "password": password}
    ).encode()
    request = urllib.request.Request(
        url + "/login/", data=data, headers={"Referer": url + "/login/"}
    )
    return opener.open(request).read().decode()


def _postgres_pid(data_dir: Path) -> int | None:
    pid_file = data_dir / "postgres" / "postmaster.pid"
    return int(pid_file.read_text().split()[0]) if pid_file.exists() else None


def _redis_pid(data_dir: Path) -> int | None:
    pid_file = data_dir / "redis" / "redis.pid"
    return int(pid_file.read_text().split()[0]) if pid_file.exists() else None  # pid, port


def _eventually(predicate, within: float = 90) -> bool:
    deadline = time.monotonic() + within
    while time.monotonic() < deadline:
        if predicate():
            return True
        time.sleep(0.3)
    return False


def _gone(pid: int, within: float) -> bool:
    deadline = time.monotonic() + within
    while time.monotonic() < deadline:
        try:
            if psutil.Process(pid).status() == psutil.STATUS_ZOMBIE:
                return True
        except psutil.NoSuchProcess:
            return True
        time.sleep(0.2)
    return False


def test_run_command_starts_serves_login_and_ctrl_c_leaves_nothing_behind(tmp_path):
    data_dir = tmp_path / "portal-data"
    port, redis_port = free_port(), free_port()

    portal = RunningPortal(data_dir, port, redis_port)
    try:
        assert "Created the first admin account 'admin'" in "".join(portal.output)
        page = _login(portal.url, "admin", "first-admin-pass-42")
        assert "Выйти" in page and "admin" in page  # KB_LANGUAGE unset: Russian
        started = [p.pid for p in portal.descendants()]
        postgres_pid, redis_pid = _postgres_pid(data_dir), _redis_pid(data_dir)
        assert postgres_pid and psutil.pid_exists(postgres_pid)
        assert redis_pid and psutil.pid_exists(redis_pid)
        assert any("celery" in " ".join(psutil.Process(p).cmdline()) for p in started)
        assert any("uvicorn" in " ".join(psutil.Process(p).cmdline()) for p in started)
        # The beat is a process of its own, and it and the worker are started again when they
        # die: the beat inside the worker died with the worker's children, and every schedule
        # with it; a dead worker stopped the whole portal.
        for role in (
            "celery -A portal.celery --quiet beat",
            "celery -A portal.celery --quiet worker",
        ):
            victim = portal.child(role)
            assert victim is not None, role
            os.killpg(victim.pid, signal.SIGKILL)  # with its pool: the whole process group
            assert _eventually(lambda r=role, v=victim: (portal.child(r) or v).pid != v.pid), role
        started = [p.pid for p in portal.descendants()]
    finally:
        portal.ctrl_c()
    output = "".join(portal.output)
    assert "the beat process was killed by SIGKILL; starting it again" in output
    assert "the worker process was killed by SIGKILL; starting it again" in output

    # Every process ends; on a busy machine the last ones may take a few seconds to go.
    for pid in [*started, postgres_pid, redis_pid]:
        assert _gone(pid, within=30), f"process {pid} is still running 30 s after Ctrl-C"
    assert "Stopped." in "".join(portal.output)

    # A second start keeps the data: same admin, no new password printed.
    again = RunningPortal(data_dir, port, redis_port)
    try:
        assert "Created the first admin" not in "".join(again.output)
        assert "Выйти" in _login(again.url, "admin", "first-admin-pass-42")
    finally:
        again.ctrl_c()


def test_a_child_killed_at_the_stop_deadline_takes_its_own_children_with_it():
    """A worker that does not stop in time is killed with its pool: a pool process left alone
    (busy with a batch of second vectors) held a lease on PostgreSQL and Redis, and ./kb run
    left both running (the first-run check: 'processes left behind')."""
    from portal.management.commands.run import kill_tree

    parent = subprocess.Popen(
        [
            sys.executable,
            "-c",
            "import subprocess, time; subprocess.Popen(['sleep', '300']); time.sleep(300)",
        ]
    )
    deadline = time.monotonic() + 30
    while not psutil.Process(parent.pid).children() and time.monotonic() < deadline:
        time.sleep(0.05)
    (pool,) = psutil.Process(parent.pid).children()
    kill_tree(parent)
    assert parent.poll() is not None
    assert not pool.is_running() or pool.status() == psutil.STATUS_ZOMBIE
