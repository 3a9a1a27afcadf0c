"""Benchmarks run on their own embedded servers and database, never on the portal's data.

``setup()`` points the settings at ``var/bench-<name>`` (or ``KB_BENCH_DATA_DIR``), a free Redis
port, and migrates. Pass ``fresh=True`` to start from an empty knowledge base.

Every benchmark parses its command line with ``arguments()``, which adds ``--quick``: smaller
data and a shorter time through the same code path, what CI runs (``./kb bench --quick``,
``benchmarks/_runner.py``). Its figures only show that the benchmark still runs; they are not
comparable with a full run's. A quick run keeps its data apart (``var/bench-quick-<script>``,
``-<name>`` added when the script names another), so it never replaces a kept knowledge base of
a full run (``--reuse``), and quick runs of several scripts can run side by side.
"""

from __future__ import annotations

import argparse
import fcntl
import functools
import os
import re
import shutil
import signal
import socket
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
CORPUS = Path(os.environ.get("KB_DEMO_CORPUS", ROOT.parent / "shared" / "corpus"))
EVAL = ROOT.parent / "shared" / "eval"
QUICK = False  # set by arguments() from --quick

# The demo corpus of a quick run: every demo source, fewer files (see demo_corpus()).
QUICK_WIKI_PAGES = 16
QUICK_VERSIONS = 2  # the last versions of each document's history
_VERSION_TAIL = re.compile(r"_+\d{4}-\d\d-\d\d_[0-9a-f]+$")


def arguments(parser: argparse.ArgumentParser | None = None) -> argparse.Namespace:
    """The command line, with the shared ``--quick`` flag (remembered in ``QUICK``)."""
    global QUICK
    parser = parser or argparse.ArgumentParser()
    parser.add_argument(
        "--quick",
        action="store_true",
        help="smaller data and a shorter time, the same code path (CI runs every benchmark so)",
    )
    args = parser.parse_args()
    QUICK = args.quick
    return args


def demo_corpus() -> Path:
    """The corpus the demo knowledge base is built from: ``CORPUS``, or under ``--quick`` a part
    of it laid out the same (``_quick_corpus``)."""
    return _quick_corpus() if QUICK else CORPUS


@functools.cache
def _quick_corpus() -> Path:
    """Every demo source with fewer files, copied into ``var/bench-quick-corpus``: QUICK_WIKI_PAGES
    wiki pages spread over the wiki, the specifications, the last QUICK_VERSIONS versions of each
    history (its ORDER.txt cut to them). Built once (one process at a time); rebuilt when the
    choice changes."""
    target = ROOT / "var" / "bench-quick-corpus"
    target.parent.mkdir(parents=True, exist_ok=True)
    with (ROOT / "var" / "bench-quick-corpus.lock").open("w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        return _copy_quick_corpus(target)


def _copy_quick_corpus(target: Path) -> Path:
    wiki = sorted((CORPUS / "wiki_qa_bible_ru").rglob("*.md"))
    chosen = wiki[:: max(1, len(wiki) // QUICK_WIKI_PAGES)][:QUICK_WIKI_PAGES]
    chosen += sorted((CORPUS / "specs_hse_app_ru").glob("*.docx"))
    orders: dict[Path, list[str]] = {}
    for history in sorted(p for p in (CORPUS / "versions").iterdir() if p.is_dir()):
        names = [
            line.strip()
            for line in (history / "ORDER.txt").read_text(encoding="utf-8").splitlines()
            if line.strip() and not line.startswith("#")
        ]
        documents: dict[str, list[str]] = {}
        for name in names:
            documents.setdefault(_VERSION_TAIL.sub("", Path(name).stem), []).append(name)
        kept = {n for versions in documents.values() for n in versions[-QUICK_VERSIONS:]}
        orders[history] = [n for n in names if n in kept]
        chosen += [history / n for n in orders[history]]
    listing = "\n".join(str(p.relative_to(CORPUS)) for p in chosen)
    stamp = target / ".files"
    if stamp.is_file() and stamp.read_text(encoding="utf-8") == listing:
        return target
    shutil.rmtree(target, ignore_errors=True)
    for path in chosen:
        copy = target / path.relative_to(CORPUS)
        copy.parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(path, copy)
    for history, names in orders.items():
        order = target / history.relative_to(CORPUS) / "ORDER.txt"
        order.write_text("\n".join(names) + "\n", encoding="utf-8")
    stamp.write_text(listing, encoding="utf-8")
    return target


def quick_questions(items: list[dict], per_group: int = 6) -> list[dict]:
    """Under ``--quick``, the first ``per_group`` questions of each group whose gold documents
    are all in the quick corpus; all of them otherwise."""
    if not QUICK:
        return items
    corpus = _quick_corpus()
    kept: dict[str, list[dict]] = {}
    for item in items:
        group = kept.setdefault(item.get("group", ""), [])
        present = all((corpus / path).is_file() for path in item.get("gold_docs") or [])
        if present and len(group) < per_group:
            group.append(item)
    return [item for group in kept.values() for item in group]


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def setup(name: str, *, fresh: bool = True) -> Path:
    sys.path.insert(0, str(ROOT))
    if QUICK:
        script = Path(sys.argv[0]).stem
        name = f"quick-{script}" + (f"-{name}" if name != script else "")
    data_dir = Path(os.environ.get("KB_BENCH_DATA_DIR", ROOT / "var" / f"bench-{name}"))
    if fresh and data_dir.exists():
        shutil.rmtree(data_dir)
    data_dir.mkdir(parents=True, exist_ok=True)
    os.environ["KB_DATA_DIR"] = str(data_dir)
    os.environ["KB_REDIS_PORT"] = str(_free_port())
    os.environ["KB_EMBEDDED_FAST_UNSAFE"] = "1"
    # A benchmark is one user asking many times a minute: the per-user limits would stop it.
    os.environ.setdefault("KB_RATE_ASK_PER_MINUTE", "100000")
    os.environ.setdefault("KB_RATE_SEARCH_PER_MINUTE", "100000")
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "portal.settings")
    # Stopped with SIGTERM (the runner's time limit, a Ctrl-C of a group), the benchmark still
    # ends through its finally blocks and atexit: the lease of the embedded servers is given back
    # and they stop, instead of running on after it.
    signal.signal(signal.SIGTERM, _exit_on_signal)
    import django

    django.setup()
    from django.core.management import call_command

    call_command("migrate", verbosity=0)
    return data_dir


def fill_second_vectors() -> None:
    """The second vectors the workers make after an ingest (e5, each unit of each searchable
    chunk), made here on every core; the time is printed."""
    import time

    from knowledge.embedding import build_second_embedder
    from knowledge.ingest.second import fill_second_vectors as fill

    embedder = build_second_embedder(threads=os.cpu_count())
    if embedder is None:
        return
    started = time.perf_counter()
    done, _ = fill(embedder)
    if done:
        print(f"second vectors of {done} chunks made in {time.perf_counter() - started:.0f} s")


def _exit_on_signal(signum: int, _frame: object) -> None:
    raise SystemExit(128 + signum)


def settings_only() -> None:
    """Django set up without a database or servers: for the benchmarks of pure code (parsers,
    the question's reading) that read settings."""
    sys.path.insert(0, str(ROOT))
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "portal.settings")
    import django

    django.setup()


def teardown() -> None:
    from django.conf import settings
    from django.db import connections

    from portal.embedded import release
    from portal.services_layout import embedded_layout

    connections.close_all()
    if settings.EMBEDDED_POSTGRES or settings.EMBEDDED_REDIS:
        release(embedded_layout())


def percentile(values: list[float], p: float) -> float:
    ordered = sorted(values)
    if not ordered:
        return 0.0
    index = min(len(ordered) - 1, max(0, round(p / 100 * (len(ordered) - 1))))
    return ordered[index]


def spawn(args: list[str], env: dict[str, str] | None = None):
    """``python -m ARGS`` in its own process group (the caller ends it with os.killpg), quiet."""
    import subprocess

    return subprocess.Popen(
        [sys.executable, "-m", *args],
        cwd=ROOT,
        env=env if env is not None else dict(os.environ),
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        start_new_session=True,
    )


def spawn_beat(env: dict[str, str] | None = None):
    """The beat (``celery beat``), as a portal runs it: ``/healthz`` is 200 only with its tick.
    Its drop folder is one that does not exist, so a checkout's own files stay out."""
    data_dir = Path(os.environ["KB_DATA_DIR"])
    env = {**(env if env is not None else os.environ), "KB_DROP_FOLDER": str(data_dir / "no-drop")}
    schedule = str(data_dir / "celerybeat-schedule")
    return spawn(["celery", "-A", "portal.celery", "beat", "--schedule", schedule], env)


def wait_http(url: str, timeout: float = 60) -> None:
    """Poll ``url`` until it answers 200 (a server up, a worker's heartbeat seen)."""
    import time

    import httpx2

    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        try:
            if httpx2.get(url, timeout=2).status_code == 200:
                return
        except httpx2.HTTPError:
            pass
        time.sleep(0.5)
    raise SystemExit(f"{url} did not answer 200 in {timeout} s")


def headline(name: str, value: float, unit: str, *, better: str = "lower") -> None:
    """Print one of the benchmark's headline figures in the line the runner reads
    (``_runner.py`` compares it with the last one recorded for this machine kind and warns at
    ``_runner.WORSE`` times worse): ``HEADLINE <script>.<name> <value> <unit> <better>``."""
    script = Path(sys.argv[0]).stem
    print(f"HEADLINE {script}.{name} {value:.6g} {unit} {better}", flush=True)
