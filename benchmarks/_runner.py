"""Run every benchmark (``benchmarks/*.py`` but the ``_`` helpers), each in its own process.

``./kb bench`` runs them all in full; ``./kb bench --quick`` (what CI runs) passes ``--quick``
to each: smaller data and a shorter time through the same code path, so that a benchmark that
no longer runs is seen the day it breaks. Every script is found by its name, so a benchmark
added later is run too, and must accept ``--quick`` (``_setup.arguments()``); under ``--quick``
one that runs longer than ``--limit`` seconds is stopped and counts as failed.

Each script's output goes through with its name in front; at the end a table of every script's
status and time. The exit code is 1 when one failed. ``--jobs N`` runs N at a time (default 2
under ``--quick``, whose figures are not measurements; 1 otherwise, so that a full run's
figures are not disturbed by another benchmark): each quick run has data folders of its own
(``_setup.setup``).

The speed guard: each benchmark prints its headline figures in a line of its own
(``_setup.headline``: a latency, the CPU a request costs), and the runner adds each one's CPU
seconds. At the end they are compared with the last ones recorded for this kind of machine (the
processor's architecture and its number of cores) and mode in ``benchmarks/headlines.json``; a
figure ``WORSE`` times worse or more is a warning, printed clearly at the end (it fails nothing:
a busy machine can be that slow). ``--record`` writes this run's figures as the new reference
after a change that is meant to move them (and says so in RESULTS.md).

Run: ``.venv/bin/python benchmarks/_runner.py [--quick] [--jobs N] [--limit SECONDS] [--record]
[NAME ...]``.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import platform
import signal
import subprocess
import sys
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path

HERE = Path(__file__).resolve().parent
QUICK_LIMIT = 1200.0  # seconds a benchmark may take under --quick: a hang, not a slow machine
HEADLINES = HERE / "headlines.json"  # the reference figures, by machine kind and mode
WORSE = 1.5  # times worse than the reference: a warning (issue 54)
# Benchmarks the quick run (CI) does not start, and why: each still takes --quick when run alone.
SKIPPED_IN_QUICK = {
    "llm_path": (
        "a real model on one CPU thread: its two quick questions take 8-15 minutes beside the "
        "half-gigabyte install of its extra, more than CI's time allows; run it alone: "
        ".venv/bin/python benchmarks/llm_path.py --quick"
    ),
}
_print_lock = threading.Lock()  # the lines of benchmarks run side by side stay whole


@dataclass
class Outcome:
    name: str
    status: str  # "ok", "failed (exit N)", "stopped after N s"
    seconds: float
    cpu: float  # CPU seconds of the script and the processes it waited for (not the servers)
    tail: list[str]
    figures: dict[str, tuple[float, str, str]]  # headline name -> (value, unit, better)


def scripts(names: list[str]) -> list[Path]:
    """The benchmarks, in name order; ``names`` (with or without ``.py``) picks some."""
    found = sorted(p for p in HERE.glob("*.py") if not p.name.startswith("_"))
    if not names:
        return found
    wanted = {n.removesuffix(".py").removeprefix("benchmarks/") for n in names}
    unknown = wanted - {p.stem for p in found}
    if unknown:
        raise SystemExit(f"no such benchmark: {', '.join(sorted(unknown))}")
    return [p for p in found if p.stem in wanted]


def run(script: Path, quick: bool, limit: float | None) -> Outcome:
    """One benchmark in a process group of its own (its servers end with it when stopped)."""
    _say(f"\033[1m== benchmarks/{script.name}{' --quick' if quick else ''}\033[0m")
    command = [sys.executable, str(script), *(["--quick"] if quick else [])]
    env = {**os.environ, "PYTHONUNBUFFERED": "1"}
    started = time.monotonic()
    process = subprocess.Popen(
        command,
        cwd=HERE.parent,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
        errors="replace",
        start_new_session=True,
    )
    tail: list[str] = []
    figures: dict[str, tuple[float, str, str]] = {}
    relay = threading.Thread(target=_relay, args=(process, script.stem, tail, figures), daemon=True)
    relay.start()
    code, cpu = _wait(process, None if limit is None else started + limit)
    if code is None:
        os.killpg(process.pid, signal.SIGTERM)
        code, cpu = _wait(process, time.monotonic() + 30)
        if code is None:
            os.killpg(process.pid, signal.SIGKILL)
            code, cpu = _wait(process, None)
        status = f"stopped after {limit:.0f} s"
    else:
        status = "ok" if code == 0 else f"failed (exit {code})"
    relay.join(timeout=5)
    seconds = time.monotonic() - started
    _say(f"\033[1m== benchmarks/{script.name}: {status}, {seconds:.0f} s\033[0m")
    if status == "ok":
        figures[f"{script.stem}.cpu"] = (cpu, "s", "lower")
    return Outcome(script.stem, status, seconds, cpu, tail, figures)


def _wait(process: subprocess.Popen, deadline: float | None) -> tuple[int | None, float]:
    """(exit code, CPU seconds) once the process ends, (None, 0) at the deadline. The CPU time
    is the load-independent figure on a shared machine (wall time moves with the load)."""
    while deadline is None or time.monotonic() < deadline:
        pid, status, usage = os.wait4(process.pid, os.WNOHANG)
        if pid:
            process.returncode = os.waitstatus_to_exitcode(status)
            return process.returncode, usage.ru_utime + usage.ru_stime
        time.sleep(0.2)
    return None, 0.0


def _say(line: str) -> None:
    with _print_lock:
        print(line, flush=True)


def _relay(process: subprocess.Popen, name: str, tail: list[str], figures: dict) -> None:
    assert process.stdout is not None
    for line in process.stdout:
        _say(f"[{name}] {line.rstrip(chr(10))}")
        tail.append(line.rstrip("\n"))
        del tail[:-20]
        parts = line.split()
        if len(parts) == 5 and parts[0] == "HEADLINE":
            with contextlib.suppress(ValueError):
                figures[parts[1]] = (float(parts[2]), parts[3], parts[4])


def machine_kind(quick: bool) -> str:
    """The kind of machine the figures belong to, and the mode ("x86_64, 2 cores, quick")."""
    return f"{platform.machine()}, {os.cpu_count()} cores, {'quick' if quick else 'full'}"


def compare(measured: dict[str, tuple[float, str, str]], reference: dict) -> list[str]:
    """One line per figure with a reference: its value, the reference, how many times worse;
    a figure ``WORSE`` times worse or more is marked."""
    lines = []
    for name, (value, unit, better) in sorted(measured.items()):
        known = reference.get(name)
        if not known or not known["value"] or not value:
            continue
        ratio = value / known["value"] if better == "lower" else known["value"] / value
        mark = "  WORSE" if ratio >= WORSE else ""
        lines.append(
            f"  {name:<34}{value:>10.4g} {unit:<3} (reference {known['value']:.4g}, "
            f"{known['date']}): {ratio:.2f} x{mark}"
        )
    return lines


def guard(outcomes: list[Outcome], quick: bool, record: bool) -> None:
    """Compare the run's headline figures with the recorded ones; ``record``: store them."""
    measured = {k: v for o in outcomes for k, v in o.figures.items()}
    if not measured:
        return
    kind = machine_kind(quick)
    stored = json.loads(HEADLINES.read_text()) if HEADLINES.is_file() else {}
    reference = stored.get(kind, {})
    lines = compare(measured, reference)
    if lines:
        worse = [line for line in lines if line.endswith("WORSE")]
        print(f"\nheadline figures against the last recorded for {kind}:")
        print("\n".join(lines))
        if worse:
            print(
                f"\n\033[1mWARNING: {len(worse)} figure(s) {WORSE:g} times worse or more than "
                f"recorded for this machine kind:\033[0m"
            )
            print("\n".join(worse))
    else:
        print(f"\nno headline figures recorded for {kind} yet (--record stores this run's)")
    if record:
        today = time.strftime("%Y-%m-%d")
        reference.update(
            {
                n: {"value": v, "unit": u, "better": b, "date": today}
                for n, (v, u, b) in measured.items()
            }
        )
        stored[kind] = dict(sorted(reference.items()))
        HEADLINES.write_text(json.dumps(stored, indent=1, sort_keys=True) + "\n")
        print(f"recorded {len(measured)} headline figures for {kind} in {HEADLINES.name}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--quick", action="store_true", help="pass --quick to every benchmark")
    parser.add_argument(
        "--limit",
        type=float,
        default=None,
        help=f"seconds a benchmark may run (default: {QUICK_LIMIT:.0f} under --quick, none otherwise)",
    )
    parser.add_argument(
        "--jobs", type=int, default=0, help="benchmarks run at a time (default: 2 quick, else 1)"
    )
    parser.add_argument(
        "--record", action="store_true", help="store this run's headline figures as the reference"
    )
    parser.add_argument("names", nargs="*", help="only these benchmarks (default: all)")
    args = parser.parse_args()
    limit = args.limit if args.limit is not None else (QUICK_LIMIT if args.quick else None)
    jobs = args.jobs or (2 if args.quick else 1)
    began = time.monotonic()
    chosen = scripts(args.names)
    if args.quick and not args.names:  # named, it runs
        for script in [s for s in chosen if s.stem in SKIPPED_IN_QUICK]:
            _say(f"== benchmarks/{script.name} --quick: skipped, {SKIPPED_IN_QUICK[script.stem]}")
            chosen.remove(script)
    with ThreadPoolExecutor(jobs) as pool:
        outcomes = list(pool.map(lambda s: run(s, args.quick, limit), chosen))
    print(f"\n{'benchmark':<22}{'status':<26}{'seconds':>8}{'CPU s':>8}")
    for outcome in outcomes:
        print(f"{outcome.name:<22}{outcome.status:<26}{outcome.seconds:>8.0f}{outcome.cpu:>8.0f}")
    failed = [o for o in outcomes if o.status != "ok"]
    print(
        f"{len(outcomes)} benchmarks{' (quick)' if args.quick else ''}, {jobs} at a time, in "
        f"{time.monotonic() - began:.0f} s, {sum(o.cpu for o in outcomes):.0f} CPU s (load "
        f"average {os.getloadavg()[0]:.1f} at the end); {len(failed)} failed"
    )
    for outcome in failed:
        print(f"\n{outcome.name}: {outcome.status}; its last lines:")
        print("\n".join(f"  {line}" for line in outcome.tail))
    guard(outcomes, args.quick, args.record)
    sys.exit(1 if failed else 0)


if __name__ == "__main__":
    main()
