"""Which process (and thread) holds a piece of work, and whether it is gone.

Work claimed by a process (an ingest run, a streamed answer) records the claimant as
``host:pid:start time:thread``. A process that was killed (SIGKILL, out of memory) leaves its
claims behind with a heartbeat that looks fresh for a while; on the same machine its death can
be seen at once, so the work is taken over then instead of after the stale limit. So can a run
of this very process that ended without giving its claim back (the database went away under
it): its thread is gone, or is the one now starting the work again. A claim from another
machine is never judged from here: its heartbeat going stale is the only sign.
"""

from __future__ import annotations

import os
import socket
import threading
from functools import cache

import psutil


@cache
def _host() -> str:
    return socket.gethostname()


_PROC = os.path.exists("/proc/self/stat")
_TICKS = os.sysconf("SC_CLK_TCK") if _PROC else 100


def started(pid: int) -> float:
    """When process ``pid`` started, in seconds since the machine booted: the kernel's start
    ticks (``/proc/<pid>/stat``'s 22nd field). psutil's ``create_time()`` adds to them the boot
    time read off the wall clock, so a clock correction (NTP stepping it, a virtual machine
    resumed from a snapshot) moves it and a live process looks like another one (psutil issue
    2526): its claims taken over, the embedded servers stopped under it. Where there is no
    ``/proc``, ``create_time()``. Raises ``psutil.NoSuchProcess`` when there is no such process,
    ``psutil.AccessDenied`` when its start cannot be read."""
    if not _PROC:
        return psutil.Process(pid).create_time()
    try:
        with open(f"/proc/{pid}/stat", "rb") as stat:
            fields = stat.read().rsplit(b")", 1)[1].split()
        return int(fields[19]) / _TICKS
    except (FileNotFoundError, ProcessLookupError):
        raise psutil.NoSuchProcess(pid) from None
    except (OSError, IndexError, ValueError) as error:  # not readable here: never the wall clock's
        raise psutil.AccessDenied(pid) from error


@cache
def _started(pid: int) -> str:
    return f"{started(pid):.3f}"


def this_process() -> str:
    """The calling thread as a claim records it: ``host:pid:start time:thread`` (the start time,
    ``started()``, tells a reused pid from the process that had it)."""
    pid = os.getpid()
    return f"{_host()}:{pid}:{_started(pid)}:{threading.get_ident()}"


def process_gone(owner: str) -> bool:
    """True when ``owner`` (``this_process()`` of some thread) ran on this machine and has
    ended; False when it runs, ran elsewhere, or cannot be told (an empty or odd value)."""
    parts = owner.split(":")
    if len(parts) < 3 or parts[0] != _host() or not parts[1].isdigit():
        return False
    pid, recorded = int(parts[1]), parts[2]
    if pid == os.getpid() and recorded == _started(pid):
        return _thread_gone(parts[3] if len(parts) > 3 else "")
    try:
        same = abs(started(pid) - float(recorded)) < 0.01
        return not same or psutil.Process(pid).status() == psutil.STATUS_ZOMBIE
    except psutil.NoSuchProcess:
        return True
    except (psutil.Error, ValueError):
        return False


def _thread_gone(ident: str) -> bool:
    # This process: a claim of a thread that ended, or of the very thread now asking (which is
    # starting the work again, so its earlier run is over), is left behind.
    if not ident.isdigit():
        return False
    alive = {thread.ident for thread in threading.enumerate()}
    return int(ident) == threading.get_ident() or int(ident) not in alive
