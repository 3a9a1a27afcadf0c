"""Telling a claim's process (and thread) gone from one still at work (portal.processes)."""

from __future__ import annotations

import os
import subprocess
import sys
import threading

import psutil

from portal import embedded
from portal.processes import process_gone, started, this_process


def test_a_live_process_elsewhere_on_this_machine_is_not_gone():
    parent = psutil.Process(os.getppid())
    owner = f"{this_process().split(':')[0]}:{parent.pid}:{started(parent.pid):.3f}:1"
    assert not process_gone(owner)


def test_a_process_that_ended_is_gone_and_its_reused_pid_does_not_hide_it():
    child = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(30)"])
    owner = f"{this_process().split(':')[0]}:{child.pid}:{started(child.pid):.3f}:1"
    assert not process_gone(owner)
    child.kill()
    child.wait()
    assert process_gone(owner)
    parent = psutil.Process(os.getppid())  # alive, but not the process that made the claim
    assert process_gone(f"{owner.split(':')[0]}:{parent.pid}:{started(parent.pid) - 60:.3f}:1")


def test_in_this_process_a_live_thread_holds_its_claim_an_ended_one_or_the_caller_does_not():
    held, release = threading.Event(), threading.Event()
    claims: list[str] = []

    def work() -> None:
        claims.append(this_process())
        held.set()
        release.wait(30)

    thread = threading.Thread(target=work)
    thread.start()
    held.wait(30)
    assert not process_gone(claims[0])  # another thread, still at work
    release.set()
    thread.join()
    assert process_gone(claims[0])  # its thread ended without giving the claim back
    assert process_gone(this_process())  # the caller itself starts the work again


def test_a_claim_from_another_machine_or_an_odd_value_is_never_judged_gone():
    assert not process_gone("another-host.example:1:1.0:1")
    assert not process_gone("")
    assert not process_gone("garbage")


def test_a_clock_correction_does_not_make_a_live_process_look_gone(monkeypatch):
    """psutil's create_time() is the boot time read off the wall clock plus the start ticks:
    stepping the clock (NTP, a virtual machine resumed) moves it. A live worker's claim, and a
    live process's lease on the embedded servers, must hold through that."""
    parent = psutil.Process(os.getppid())
    owner = f"{this_process().split(':')[0]}:{parent.pid}:{started(parent.pid):.3f}:1"
    lease = embedded._process_key(parent.pid)
    stepped = parent.create_time() + 1.0
    monkeypatch.setattr(psutil.Process, "create_time", lambda self: stepped)
    monkeypatch.setattr(psutil, "boot_time", lambda: stepped - 1000)
    assert not process_gone(owner)
    assert embedded._alive(lease)
    # A process that ended is still told apart from a live one.
    child = subprocess.Popen([sys.executable, "-c", "pass"])
    child_lease = embedded._process_key(child.pid)
    child.wait()
    assert not embedded._alive(child_lease)
