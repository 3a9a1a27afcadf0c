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


@cache
def _started(pid: int) -> str:
    return f"{psutil.Process(pid).create_time():.3f}"


def this_process() -> str:
    """The calling thread as a claim records it: ``host:pid:start time:thread`` (the start time
    tells a reused pid from the process that had it)."""
    pid = os.getpid()
    return f"{_host()}:{pid}:{_started(pid)}:{threading.get_ident()}"


def process_gone(owner: str) -> bool:
    """True when ``owner`` (``this_process()`` of some thread) ran on this machine and has
    ended; False when it runs, ran elsewhere, or cannot be told (an empty or odd value)."""
    parts = owner.split(":")
    if len(parts) < 3 or parts[0] != _host() or not parts[1].isdigit():
        return False
    pid, started = int(parts[1]), parts[2]
    if pid == os.getpid() and started == _started(pid):
        return _thread_gone(parts[3] if len(parts) > 3 else "")
    try:
        process = psutil.Process(pid)
        same = abs(process.create_time() - float(started)) < 0.01
        return not same or process.status() == psutil.STATUS_ZOMBIE
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
