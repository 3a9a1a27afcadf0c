"""Faults: each one injected into a running portal while users ask, and what it cost them.

The portal runs as ``./kb run`` runs it (``manage.py run``: embedded PostgreSQL and Redis, the
web server with ``KB_WEB_WORKERS=2``, the Celery worker and the beat) in a throw-away data folder
(``var/bench-faults``) with the demo knowledge base loaded (``--quick``: 25 wiki pages), the LLM
and the embeddings served by the suite's OpenAI-compatible servers (``tests/llm_server.py``,
``tests/embeddings_server.py``, in this process, so that they can be made slow, failing or
gone), ``KB_INGEST_STALE_SECONDS=30`` and a drop folder scanned every 5 s. ``load.py``'s users
(an API token each; ask or search, a think time) keep asking throughout and rate every third
answer on the page; the admin uploads files on the Documents page. The faults come one after
the other to the same portal; one that a fault left broken (stopped, or not whole when the
watch ended) is started again (same data) before the next:

- ``pool-kill``: while new versions of wiki pages are ingested, the worker's child processes
  are SIGKILLed (its pool; before the beat ran in its own process, the beat too);
- ``worker-kill``: the same, with the whole worker (its process group) SIGKILLed;
- ``postgres-stop`` / ``redis-stop``: the server stopped for 20 s mid-ingest (an upload and
  ratings meanwhile), then started again;
- ``disk-full``: the files folder (``KB_MEDIA_DIR``, a tmpfs of 160 MB mounted for the run; root
  only) filled up while the admin uploads three files, then the space freed and the same files
  uploaded again, as a person would after the error;
- ``web-kill-stream``: a user asks in the chat page (headless Chromium) with a slow LLM; while
  the answer streams, the web process holding the stream is SIGKILLed; the browser reconnects;
- ``llm-slow`` / ``llm-500`` / ``llm-down``: for 20 s the LLM server waits 5 s and sends a token
  every 0.4 s, answers 500, or is stopped (connection refused);
- ``embeddings-slow`` / ``-500`` / ``-down``: the same for the embeddings server (5 s a request)
  while new versions are ingested.

Printed per fault: what the users saw during the fault and after it (requests, answers,
answers with a notice, clear errors, unclear ones: a bare 500 or a traceback, no answer at all;
ask p95), what was lost (versions neither ready nor failed, failed ones and why, messages left
without an answer, ratings and uploads acknowledged but missing or corrupt), and how long after
the fault ended until everything was whole again: the versions settled, ``/healthz`` 200,
normal answers, a file dropped into the drop folder ingested (the beat's schedules alive).
Goals (issue 41): nothing lost; every version ready or failed with its reason within 2 x the
stale limit after the fault; clear messages during it; normal answers within 30 s after it.

Run: ``.venv/bin/python benchmarks/faults.py [--quick] [--faults NAME,...] [--users 6]``.
``--quick`` (CI): 25 wiki pages, three users, the faults pool-kill, redis-stop (5 s) and
llm-500 (5 s); about two minutes.
"""

from __future__ import annotations

import argparse
import contextlib
import hashlib
import json
import os
import shutil
import subprocess
import sys
import time
import traceback
from dataclasses import dataclass, field
from pathlib import Path

import httpx2
import psutil
from _fault_kit import ADMIN_PASSWORD, USER_PASSWORD, Portal, Staff, Users, db, kill
from _setup import CORPUS, EVAL, ROOT, _free_port, percentile, setup, teardown

sys.path.insert(0, str(ROOT))
from tests.embeddings_server import EmbeddingsTestServer  # noqa: E402
from tests.llm_server import KINDS, LlmTestServer  # noqa: E402

FAULTS = [
    "pool-kill",
    "worker-kill",
    "postgres-stop",
    "redis-stop",
    "disk-full",
    "web-kill-stream",
    "llm-slow",
    "llm-500",
    "llm-down",
    "embeddings-slow",
    "embeddings-500",
    "embeddings-down",
]
QUICK_FAULTS = ["pool-kill", "redis-stop", "llm-500"]
STALE = 30  # KB_INGEST_STALE_SECONDS, its minimum
PROBE_AFTER = 15  # seconds after a fault's end when a file is dropped into the drop folder
STREAM_QUESTION = "Что такое верификация и валидация?"
MEDIA_MB = 160
KEPT_FILES = ROOT / "var" / "bench-faults-files"
ACTIVE = ("pending", "parsing", "embedding")


@dataclass
class Outcome:
    name: str
    what: str = ""
    injected: float = 0.0
    ended: float = 0.0
    versions: list[int] = field(default_factory=list)  # versions in flight, tracked to the end
    notes: list[str] = field(default_factory=list)
    whole: dict[str, float | None] = field(default_factory=dict)  # seconds after the end
    watched: float = 0.0
    probe: str = ""  # sha256 of the file dropped after the fault


class Bench:
    def __init__(self, args: argparse.Namespace) -> None:
        self.args = args
        self.llm = LlmTestServer().start()
        self.embeddings = EmbeddingsTestServer().start()
        self.media = Path(f"/tmp/kb-faults-media-{os.getpid()}")
        self.mounted = False
        self.drop = None
        self.portal: Portal | None = None
        self.users: Users | None = None
        self.staff: Staff | None = None
        self.broken = False

    # --- set-up ------------------------------------------------------------------------------

    def start(self) -> None:
        data_dir = ROOT / "var" / "bench-faults"
        self.media.mkdir(parents=True, exist_ok=True)
        if "disk-full" in self.args.faults:
            self.mounted = _mount_tmpfs(self.media, MEDIA_MB)
        if self.args.reuse and KEPT_FILES.is_dir():
            shutil.copytree(KEPT_FILES, self.media, dirs_exist_ok=True)
        corpus = CORPUS if not self.args.quick else _small_corpus(data_dir.parent / "faults-corpus")
        self.drop = data_dir.parent / "faults-drop"
        shutil.rmtree(self.drop, ignore_errors=True)
        self.drop.mkdir(parents=True)
        os.environ.update(
            KB_MEDIA_DIR=str(self.media),
            KB_DROP_FOLDER=str(self.drop),
            KB_DROP_FOLDER_SCAN_SECONDS="5",
            KB_INGEST_STALE_SECONDS=str(STALE),
            KB_DEMO_CORPUS=str(corpus),
            KB_DEMO="1",
            KB_WEB_WORKERS="2",
            KB_ADMIN_PASSWORD=ADMIN_PASSWORD,
            KB_LLM_BASE_URL=self.llm.base_url,
            KB_LLM_CONNECT_TIMEOUT="2",
            KB_EMBEDDER="openai",
            KB_EMBEDDER_BASE_URL=self.embeddings.base_url,
            KB_EMBEDDER_MODEL="use",
            KB_RATE_ASK_PER_MINUTE="100000",
            KB_RATE_SEARCH_PER_MINUTE="100000",
            KB_LANGUAGE="en",
            PYTHONUNBUFFERED="1",
        )
        setup("faults", fresh=not self.args.reuse)
        if self.args.prepare:
            self._prepare()
            return
        port = _free_port()
        self.portal = Portal(dict(os.environ), port, data_dir / "run.log")
        took = self.portal.start()
        print(f"portal started in {took:.0f} s (manage.py run, {self.portal.url})", flush=True)
        started = time.monotonic()
        ready, total = _wait_demo(timeout=1800)
        print(
            f"demo knowledge base: {ready} of {total} versions ready in {time.monotonic() - started:.0f} s"
        )
        self._people()

    def _prepare(self) -> None:
        """The demo knowledge base ingested in this process (load.py's way: one model for many
        files), through the embeddings server, for later runs with --reuse."""
        from knowledge.demo import ingest_demo_now

        started = time.monotonic()
        files = ingest_demo_now()
        took = time.monotonic() - started
        print(f"demo knowledge base: {files} files ingested in this process in {took:.0f} s")

    def _people(self) -> None:
        from django.contrib.auth import get_user_model
        from load import _tokens

        tokens = _tokens(self.args.users)
        users = get_user_model().objects.filter(username__startswith="load-").order_by("pk")
        names = []
        for user in users[: self.args.users]:
            user.set_password(USER_PASSWORD)
            user.save()
            names.append(user.username)
        questions = [
            json.loads(line)["question"]
            for line in (EVAL / "kb_dev_ru" / "questions.jsonl").read_text().splitlines()
            if line.strip()
        ]
        self.users = Users(self.portal.url, tokens, names, questions)
        self.staff = Staff(self.portal.url)
        self.staff.sign_in()
        self.users.start()

    def stop(self) -> None:
        if self.users:
            self.users.stop()
        if self.staff:
            self.staff.close()
        if self.portal:
            self.portal.stop()
        self.llm.stop()
        self.embeddings.stop()
        teardown()
        shutil.rmtree(KEPT_FILES, ignore_errors=True)
        shutil.copytree(self.media, KEPT_FILES)  # for --reuse: the files folder is a tmpfs
        if self.mounted:
            subprocess.run(["umount", str(self.media)], check=False)
        shutil.rmtree(self.media, ignore_errors=True)

    # --- one fault ---------------------------------------------------------------------------

    def baseline(self) -> None:
        # Warm: every user has had an answer (the first loads each web process's models).
        _wait(lambda: len({r.user for r in self.users.log}) == self.args.users, 180)
        seconds = 10 if self.args.quick else 20
        start = time.monotonic()
        time.sleep(seconds)
        print(
            f"\nbaseline, no fault, {seconds} s: "
            + _users_line(self.users.between(start, time.monotonic()))
        )

    def run(self, name: str) -> None:
        self.llm.reset()
        self.llm.default_delay = 0.0
        self.embeddings.reset()
        self.users.pause()
        # The same portal goes on from fault to fault, as a real one would; one that the last
        # fault left broken (stopped, or not whole when the watch ended) is started afresh.
        if self.broken or not self.portal.alive():
            self.portal.stop()
            took = self.portal.start()
            print(f"\n(the portal started again for the next fault, in {took:.0f} s)")
            self.staff.sign_in()
        _wait(lambda: _healthz(self.portal.url) == 200, 120)
        resumed = time.monotonic()
        self.users.resume()
        # Warm: every user answered by the new web processes before the fault comes.
        _wait(lambda: len(self.users.answered_since(resumed)) == self.args.users, 120)
        outcome = Outcome(name)
        getattr(self, "fault_" + name.replace("-", "_"))(outcome)
        self.watch(outcome)
        self.broken = any(v is None for v in outcome.whole.values())
        self.users.pause()
        time.sleep(3)  # answers in flight end
        self.report(outcome)

    def hold(self) -> float:
        return 5.0 if self.args.quick else 20.0

    # --- the faults --------------------------------------------------------------------------

    def fault_pool_kill(self, outcome: Outcome) -> None:
        self._mid_ingest(outcome)
        pool = self.portal.worker_children()
        outcome.injected = time.monotonic()
        killed = kill(pool)
        outcome.what = f"SIGKILL to the worker's {len(killed)} child processes mid-ingest"
        back = _wait(lambda: [p for p in self.portal.worker_children() if p.pid not in killed], 30)
        outcome.ended = time.monotonic()
        if not back:
            outcome.notes.append("the worker started no new pool process in 30 s")

    def fault_worker_kill(self, outcome: Outcome) -> None:
        self._mid_ingest(outcome)
        worker = self.portal.worker()
        outcome.injected = time.monotonic()
        os.killpg(worker.pid, 9)
        outcome.what = "SIGKILL to the whole worker (its process group) mid-ingest"

        def replaced():
            if not self.portal.alive():
                return "stopped"
            now = self.portal.worker()
            return now is not None and now.pid != worker.pid

        back = _wait(replaced, 30)
        outcome.ended = time.monotonic()
        if back == "stopped" or not self.portal.alive():
            outcome.notes.append("manage.py run stopped the whole portal when its worker died")
        elif not back:
            outcome.notes.append("no new worker in 30 s")

    def fault_postgres_stop(self, outcome: Outcome) -> None:
        self._mid_ingest(outcome)
        outcome.what = f"PostgreSQL stopped for {self.hold():.0f} s mid-ingest, an upload meanwhile"
        source = self._upload_source()
        outcome.injected = time.monotonic()
        _embedded("stop_postgres")
        self._upload_during(outcome, source)
        _sleep_until(outcome.injected + self.hold())
        _embedded("start_postgres")
        outcome.ended = time.monotonic()

    def fault_redis_stop(self, outcome: Outcome) -> None:
        self._mid_ingest(outcome)
        outcome.what = f"Redis stopped for {self.hold():.0f} s mid-ingest, an upload meanwhile"
        source = self._upload_source()
        outcome.injected = time.monotonic()
        _embedded("stop_redis")
        self._upload_during(outcome, source)
        _sleep_until(outcome.injected + self.hold())
        _embedded("start_redis")
        outcome.ended = time.monotonic()

    def fault_disk_full(self, outcome: Outcome) -> None:
        if not self.mounted:
            outcome.what = (
                "skipped: the tmpfs for the files folder could not be mounted (root only)"
            )
            outcome.injected = outcome.ended = time.monotonic()
            return
        files = _upload_files()
        source = self._upload_source()
        filler = self.media / "filler"
        outcome.what = "the files folder's disk full while the admin uploads 3 files, then freed"
        outcome.injected = time.monotonic()
        _fill(filler, keep=64 * 1024)
        for name, data in files:
            self.staff.upload(source, name, data)
        _sleep_until(outcome.injected + min(self.hold(), 5))
        filler.unlink()
        outcome.ended = time.monotonic()
        for name, data in files:  # the admin tries again after the error
            self.staff.upload(source, name, data)

    def fault_web_kill_stream(self, outcome: Outcome) -> None:
        from playwright.sync_api import sync_playwright

        self.llm.default_delay = 0.25
        with sync_playwright() as playwright:
            browser = playwright.chromium.launch(
                executable_path="/usr/bin/chromium",
                args=["--headless", "--no-sandbox", "--disable-gpu"],
            )
            try:
                asked = self._stream_and_kill(browser, outcome)
            finally:
                browser.close()
        self.llm.default_delay = 0.0
        self._stream_count(outcome, asked)  # Django's ORM outside Playwright's event loop

    def _stream_and_kill(self, browser, outcome: Outcome) -> float:
        page = browser.new_context(locale="en-US").new_page()
        page.set_default_timeout(60_000)
        page.goto(self.portal.url + "/login/")
        page.fill("#id_username", self.users.names[0])
        page.fill("#id_password", USER_PASSWORD)
        page.click("button[type=submit]")
        page.wait_for_url(lambda url: "/login/" not in url)
        asked = time.time()
        page.fill("#question", STREAM_QUESTION)
        page.keyboard.press("Enter")
        live = page.locator(".turn").last.locator(".answer-text")
        _wait(lambda: live.count() and len(live.inner_text()) > 40, 60, every=0.1)
        outcome.injected = time.monotonic()
        killed = kill(_serving(self.portal, _browser_ports(self.portal.port)))
        outcome.what = (
            f"SIGKILL to the web process holding a streamed answer ({len(killed)} killed)"
        )
        _wait(lambda: _status(self.portal.url + "/login/") == 200, 60)
        outcome.ended = time.monotonic()
        final = page.locator(".turn").last.locator(".bubble.answer[data-outcome]")
        try:
            final.wait_for(timeout=(2 * STALE + 30) * 1000)
            shown = time.monotonic() - outcome.injected
            outcome.notes.append(
                f"the browser showed the finished answer {shown:.0f} s after the kill "
                f"({final.get_attribute('data-outcome')})"
            )
        except Exception:  # noqa: BLE001 - playwright's timeout: reported, not raised
            text = page.locator(".turn").last.inner_text()[-160:].replace("\n", " ")
            outcome.notes.append(
                f"no finished answer in the browser {2 * STALE + 30} s after the kill: …{text}"
            )
        page.context.close()
        return asked

    def _stream_count(self, outcome: Outcome, asked: float) -> None:
        asked_llm = [
            r for r in self.llm.requests
            if r.at >= asked and STREAM_QUESTION in json.dumps(r.body, ensure_ascii=False)
            and r.path.endswith("/chat/completions") and _kind(r.body) == "answer"
        ]  # fmt: skip
        stored = _messages_for(self.users.names[0], STREAM_QUESTION)
        outcome.notes.append(
            f"the question stored {len(stored)} time(s) ({', '.join(stored) or 'none'}); the LLM "
            f"asked for its answer {len(asked_llm)} time(s)"
        )

    def fault_llm_slow(self, outcome: Outcome) -> None:
        self._llm(outcome, "the LLM waits 5 s, then sends a token every 0.4 s", hang=5.0, delay=0.4)

    def fault_llm_500(self, outcome: Outcome) -> None:
        self._llm(outcome, "the LLM answers 500", status=500)

    def fault_llm_down(self, outcome: Outcome) -> None:
        outcome.what = f"the LLM server stopped for {self.hold():.0f} s (connection refused)"
        outcome.injected = time.monotonic()
        self.llm.stop()
        _sleep_until(outcome.injected + self.hold())
        self.llm.start()
        outcome.ended = time.monotonic()

    def _llm(self, outcome: Outcome, what: str, **reply) -> None:
        outcome.what = f"{what} for {self.hold():.0f} s"
        outcome.injected = time.monotonic()
        for kind in KINDS:
            self.llm.script(kind=kind, times=10**6, **reply)
        _sleep_until(outcome.injected + self.hold())
        self.llm.reset()
        outcome.ended = time.monotonic()

    def fault_embeddings_slow(self, outcome: Outcome) -> None:
        self._mid_ingest(outcome, wait_embedding=False)
        outcome.what = (
            f"the embeddings server takes 5 s a request for {self.hold():.0f} s, mid-ingest"
        )
        outcome.injected = time.monotonic()
        self.embeddings.delay = 5.0
        _sleep_until(outcome.injected + self.hold())
        self.embeddings.delay = 0.0
        outcome.ended = time.monotonic()

    def fault_embeddings_500(self, outcome: Outcome) -> None:
        self._mid_ingest(outcome, wait_embedding=False)
        outcome.what = f"the embeddings server answers 500 for {self.hold():.0f} s, mid-ingest"
        outcome.injected = time.monotonic()
        self.embeddings.fail(500, times=10**6)
        _sleep_until(outcome.injected + self.hold())
        self.embeddings.reset()
        outcome.ended = time.monotonic()

    def fault_embeddings_down(self, outcome: Outcome) -> None:
        self._mid_ingest(outcome, wait_embedding=False)
        outcome.what = f"the embeddings server stopped for {self.hold():.0f} s, mid-ingest"
        outcome.injected = time.monotonic()
        self.embeddings.stop()
        _sleep_until(outcome.injected + self.hold())
        self.embeddings.start()
        outcome.ended = time.monotonic()

    # --- what the faults share ---------------------------------------------------------------

    def _mid_ingest(self, outcome: Outcome, *, wait_embedding: bool = True) -> None:
        """New versions of wiki pages registered (the worker ingests them, as after a sync);
        returns once one of them is being embedded."""
        count = 10 if self.args.quick else 60
        outcome.versions = _new_versions(count, f"{outcome.name} {time.time()}")
        if wait_embedding and not _wait(lambda: _any_embedding(outcome.versions), 120, every=0.05):
            outcome.notes.append("no version was being embedded when the fault came")

    def _upload_source(self) -> int:
        from knowledge.ingest.registration import get_or_create_source

        return db(lambda: get_or_create_source("Fault uploads").pk)

    def _upload_during(self, outcome: Outcome, source: int) -> None:
        name = f"during-{outcome.name}-{int(time.time())}.md"
        data = f"# {outcome.name}\n\nUploaded while the fault lasted ({time.time()}).\n".encode()
        self.staff.upload(source, name, data)

    # --- whole again? ------------------------------------------------------------------------

    def watch(self, outcome: Outcome) -> None:
        """Poll until everything is whole again or 2 x the stale limit + 30 s have passed."""
        cap = 2 * STALE + 30
        end = outcome.ended
        # A file dropped 15 s after the fault (a scan queued before it would find one dropped
        # at once): ingested only if the beat still sends the scans.
        probe = f"# Probe {outcome.name}\n\nDropped after the fault at {time.time()}.\n".encode()
        outcome.probe = hashlib.sha256(probe).hexdigest()

        def probe_ready() -> bool:
            path = self.drop / f"probe-{outcome.name}.md"
            if not path.exists() and time.monotonic() - end >= PROBE_AFTER:
                path.write_bytes(probe)
            return db(lambda: _probe_ready(outcome.probe), attempts=2)

        # Through db(): after a PostgreSQL restart this process's connection is broken, and a
        # query on it would fail on every round ("never" for versions settled within seconds).
        checks = {
            "versions settled": lambda: not db(lambda: _unsettled(outcome.versions), attempts=2),
            "/healthz 200": lambda: _healthz(self.portal.url) == 200,
            "normal answers": lambda: self._answers_normal(end),
            "drop folder file (dropped 15 s after) ingested": probe_ready,
        }
        whole = dict.fromkeys(checks)
        while time.monotonic() - end < cap:
            for name, check in checks.items():
                if whole[name] is None:
                    with contextlib.suppress(Exception):
                        if check():
                            whole[name] = time.monotonic() - end
            if all(v is not None for v in whole.values()) or not self.portal.alive():
                break
            time.sleep(1)
        if whole["normal answers"] is not None:
            whole["normal answers"] = self._normal_since(end)
        outcome.whole = whole
        outcome.watched = time.monotonic() - end
        if not self.portal.alive():
            outcome.notes.append("the portal (manage.py run) was not running at the end")

    def _answers_normal(self, end: float) -> bool:
        asks = [r for r in self.users.between(end, time.monotonic()) if r.kind == "ask"]
        return bool(asks) and asks[-1].seen == "answer" and asks[-1].started >= self._last_bad(end)

    def _last_bad(self, end: float) -> float:
        asks = [r for r in self.users.between(end, time.monotonic()) if r.kind == "ask"]
        bad = [r.started for r in asks if r.seen != "answer"]
        return max(bad) if bad else end

    def _normal_since(self, end: float) -> float:
        return self._last_bad(end) - end

    # --- the report --------------------------------------------------------------------------

    def report(self, outcome: Outcome) -> None:
        during = self.users.overlapping(outcome.injected, outcome.ended)
        after = self.users.between(outcome.ended, outcome.ended + outcome.watched)
        print(f"\n{outcome.name}: {outcome.what} (load average {os.getloadavg()[0]:.1f})")
        print(
            f"  users during the fault ({outcome.ended - outcome.injected:.0f} s): {_users_line(during)}"
        )
        print(f"  users after it ({outcome.watched:.0f} s watched): {_users_line(after)}")
        lost = self._lost(outcome)
        print("  lost: " + "; ".join(lost["lines"]))
        whole = ", ".join(
            f"{name} {'never' if v is None else f'{v:.0f} s'}" for name, v in outcome.whole.items()
        )
        print(f"  whole again after the fault (within {2 * STALE + 30} s): {whole}")
        for note in outcome.notes:
            print(f"  note: {note}")
        seen = [r.seen for r in during + after]
        settled = outcome.whole.get("versions settled")
        answers = outcome.whole.get("normal answers")
        goals = {
            "nothing lost": not lost["count"],
            f"versions settled within {2 * STALE} s": settled is not None and settled <= 2 * STALE,
            "clear messages": "unclear" not in seen,
            "normal answers within 30 s": answers is not None and answers <= 30,
        }
        print("  goals: " + ", ".join(f"{k} {'met' if v else 'NOT met'}" for k, v in goals.items()))

    def _lost(self, outcome: Outcome) -> dict:
        from chat.models import Message
        from feedback.models import Rating
        from knowledge.models import DocumentVersion

        lines, count = [], 0
        unsettled = db(lambda: _unsettled(outcome.versions))
        failed = db(lambda: list(
            DocumentVersion.objects.filter(pk__in=outcome.versions, status="failed").values_list("error", flat=True)
        ))  # fmt: skip
        count += len(unsettled)
        lines.append(
            f"{len(unsettled)} of {len(outcome.versions)} versions neither ready nor failed"
            + (f" ({', '.join(sorted(set(unsettled)))})" if unsettled else "")
        )
        if failed:
            lines.append(f"{len(failed)} failed ({failed[0][:120]})")
        window = self.users.between(outcome.injected - 1, outcome.ended + outcome.watched)
        asked = {r.message_id for r in window if r.message_id}
        started = _wall(outcome.injected - 1)
        open_messages = db(
            lambda: Message.objects.filter(created_at__gte=started).exclude(status="done").count()
        )
        count += open_messages
        lines.append(f"{open_messages} messages without an answer (of {len(asked)}+ asked)")
        rated = [(u, m) for u, m in self.users.ratings if m in asked]
        missing = db(
            lambda: sum(
                not Rating.objects.filter(message_id=m, user__username=self.users.names[u]).exists()
                for u, m in rated
            )
        )
        count += missing
        lines.append(f"{missing} of {len(rated)} acknowledged ratings missing")
        uploads = [u for u in self.staff.uploads if u.at >= outcome.injected - 1]
        if uploads:
            bad = db(lambda: _uploads_lost(uploads))
            count += len(bad)
            shown = ", ".join(sorted({f"{u.seen} {u.status}" for u in uploads}))
            lines.append(
                f"{len(bad)} of {len(uploads)} uploads lost or corrupt ({shown})"
                + (f": {'; '.join(bad)}" if bad else "")
            )
        return {"lines": lines, "count": count}


# --- helpers ---------------------------------------------------------------------------------


def _wait(predicate, timeout: float, every: float = 0.5):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        with contextlib.suppress(Exception):
            value = predicate()
            if value:
                return value
        time.sleep(every)
    return None


def _embedded(action: str) -> None:
    """``portal.embedded``'s ``action`` (stop_postgres, start_redis...) on the portal's servers, in
    a process of its own: this one forks badly (the embeddings server's BLAS threads at work; a
    fork to change user, as pg_ctl's, hung here)."""
    from portal.services_layout import embedded_layout

    layout = embedded_layout()
    fields = {
        "redis_port": layout.redis_port,
        "postgres": layout.postgres,
        "redis": layout.redis,
        "fast_and_unsafe": layout.fast_and_unsafe,
        "shared_buffers_mb": layout.shared_buffers_mb,
    }
    code = (
        "import json, sys; from pathlib import Path; from portal import embedded; "
        "layout = embedded.EmbeddedLayout(Path(sys.argv[1]), **json.loads(sys.argv[2])); "
        "getattr(embedded, sys.argv[3])(layout)"
    )
    subprocess.run(
        [sys.executable, "-c", code, str(layout.data_dir), json.dumps(fields), action],
        cwd=ROOT,
        check=True,
        timeout=180,
    )


def _sleep_until(moment: float) -> None:
    time.sleep(max(0.0, moment - time.monotonic()))


def _wall(monotonic: float):
    from datetime import timedelta

    from django.utils import timezone

    return timezone.now() - timedelta(seconds=time.monotonic() - monotonic)


def _status(url: str) -> int | None:
    try:
        return httpx2.get(url, timeout=5).status_code
    except httpx2.HTTPError:
        return None


def _healthz(base: str) -> int | None:
    return _status(base + "/healthz")


def _users_line(requests: list) -> str:
    if not requests:
        return "no requests"
    seen = {}
    for r in requests:
        seen[r.seen] = seen.get(r.seen, 0) + 1
    asks = [r.seconds * 1000 for r in requests if r.kind == "ask"]
    statuses = sorted({str(r.status) for r in requests if r.status != 200})
    p95 = f"ask p95 {percentile(asks, 95) / 1000:.1f} s" if asks else "no ask"
    parts = [f"{n} {k}" for k, n in sorted(seen.items())]
    details = {}
    for r in requests:
        if r.seen != "answer":
            key = f"{r.seen}: {r.detail or r.status}"
            details[key] = details.get(key, 0) + 1
    said = "; ".join(f"{n} x {k}" for k, n in sorted(details.items(), key=lambda kv: -kv[1])[:4])
    return (
        f"{len(requests)} requests: {', '.join(parts)}; {p95}"
        + (f"; statuses {', '.join(statuses)}" if statuses else "")
        + (f"\n      what they read: {said}" if said else "")
    )


def _wait_demo(timeout: float) -> tuple[int, int]:
    from knowledge.models import DocumentVersion

    def done():
        active = db(lambda: DocumentVersion.objects.filter(status__in=ACTIVE).count())
        total = db(lambda: DocumentVersion.objects.count())
        return total and not active

    _wait(done, timeout, every=2)
    ready = db(lambda: DocumentVersion.objects.filter(status="ready").count())
    return ready, db(lambda: DocumentVersion.objects.count())


def _small_corpus(folder: Path) -> Path:
    """25 pages of the wiki, as the demo's corpus (``--quick``)."""
    shutil.rmtree(folder, ignore_errors=True)
    wiki = folder / "wiki_qa_bible_ru"
    wiki.mkdir(parents=True)
    for page in sorted((CORPUS / "wiki_qa_bible_ru").rglob("*.md"))[:25]:
        shutil.copy(page, wiki / page.name)
    return folder


def _new_versions(count: int, mark: str) -> list[int]:
    """A new version of ``count`` wiki documents (their text with a line added), enqueued."""
    from knowledge.ingest.registration import register_file
    from knowledge.models import Document

    def register():
        documents = Document.objects.filter(source__name="QA Bible").order_by("pk")[:count]
        ids = []
        for document in documents:
            newest = document.versions.order_by("-number").first()
            data = newest.file.read() + f"\n\nEdited ({mark}).\n".encode()
            newest.file.close()
            ids.append(register_file(document.source, document.path, data, via="sync").version.pk)
        return ids

    return db(register)


def _any_embedding(ids: list[int]) -> bool:
    from knowledge.models import DocumentVersion

    return DocumentVersion.objects.filter(pk__in=ids, status="embedding").exists()


def _unsettled(ids: list[int]) -> list[str]:
    from knowledge.models import DocumentVersion

    return list(
        DocumentVersion.objects.filter(pk__in=ids, status__in=ACTIVE).values_list(
            "status", flat=True
        )
    )


def _probe_ready(sha256: str) -> bool:
    from knowledge.models import DocumentVersion

    return DocumentVersion.objects.filter(sha256=sha256, status="ready").exists()


def _uploads_lost(uploads: list) -> list[str]:
    """Uploads the page acknowledged whose version is missing, not ready or whose stored file
    is not the bytes uploaded; and any upload whose bytes were stored wrong."""
    from django.core.files.storage import default_storage

    from knowledge.models import DocumentVersion

    bad = []
    for upload in uploads:
        version = DocumentVersion.objects.filter(sha256=upload.sha256).order_by("-pk").first()
        if version is None:
            if upload.seen in ("queued", "unchanged"):
                bad.append(f"{upload.name}: acknowledged, no version")
            continue
        try:
            with default_storage.open(version.file.name, "rb") as handle:
                stored = hashlib.sha256(handle.read()).hexdigest()
        except OSError:
            stored = "missing"
        if stored != upload.sha256:
            bad.append(
                f"{upload.name}: stored file {'missing' if stored == 'missing' else 'corrupt'} ({version.status})"
            )
        elif version.status != "ready" and upload.seen in ("queued", "unchanged"):
            bad.append(f"{upload.name}: {version.status} {version.error[:80]}")
    return bad


def _upload_files() -> list[tuple[str, bytes]]:
    pages = sorted((CORPUS / "wiki_qa_bible_ru").rglob("*.md"))
    big = "\n\n".join(p.read_text(encoding="utf-8") for p in pages[:60]).encode()
    stamp = str(time.time()).encode()
    return [
        ("handbook.md", big + b"\n" + stamp),
        ("notes-1.md", b"# Notes 1\n\nA short note. " + stamp),
        ("notes-2.md", b"# Notes 2\n\nAnother short note. " + stamp),
    ]


def _mount_tmpfs(folder: Path, megabytes: int) -> bool:
    if os.geteuid() != 0:
        return False
    done = subprocess.run(
        ["mount", "-t", "tmpfs", "-o", f"size={megabytes}m", "tmpfs", str(folder)],
        capture_output=True,
        check=False,
    )
    return done.returncode == 0


def _fill(path: Path, keep: int) -> None:
    """Fill the file system of ``path`` but ``keep`` bytes."""
    free = shutil.disk_usage(path.parent).free
    with open(path, "wb") as handle, contextlib.suppress(OSError):
        block = b"\0" * (1 << 20)
        left = free - keep
        while left > 0:
            handle.write(block[: min(len(block), left)])
            left -= len(block)


def _browser_ports(port: int) -> set[int]:
    """Local ports of Chromium's connections to the portal."""
    ports = set()
    for process in psutil.Process().children(recursive=True):
        with contextlib.suppress(psutil.Error):
            for conn in process.net_connections(kind="tcp"):
                if conn.raddr and conn.raddr.port == port and conn.status == "ESTABLISHED":
                    ports.add(conn.laddr.port)
    return ports


def _serving(portal: Portal, ports: set[int]) -> list[psutil.Process]:
    """The web processes holding a connection from one of ``ports``."""
    found = []
    for process in portal.web_processes():
        with contextlib.suppress(psutil.Error):
            if any(
                c.laddr.port == portal.port and c.raddr and c.raddr.port in ports
                for c in process.net_connections(kind="tcp")
            ):
                found.append(process)
    return found


def _kind(body) -> str:
    from tests.llm_server import request_kind

    return request_kind(body.get("messages", [])) if isinstance(body, dict) else ""


def _messages_for(username: str, question: str) -> list[str]:
    from chat.models import Message

    return db(
        lambda: [
            m.status
            for m in Message.objects.filter(
                conversation__user__username=username, question=question
            )
        ]
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--quick", action="store_true", help="25 pages, 3 users, 3 short faults")
    parser.add_argument("--faults", default="", help="comma-separated, of: " + ", ".join(FAULTS))
    parser.add_argument("--users", type=int, default=0, help="default 6 (3 with --quick)")
    parser.add_argument("--reuse", action="store_true", help="keep the last run's data folder")
    parser.add_argument(
        "--prepare", action="store_true", help="only ingest the demo (in this process), for --reuse"
    )
    args = parser.parse_args()
    sys.stdout.reconfigure(line_buffering=True)  # each fault's figures as soon as they are known
    chosen = [f.strip() for f in args.faults.split(",") if f.strip()]
    unknown = set(chosen) - set(FAULTS)
    if unknown:
        parser.error(f"unknown faults: {', '.join(sorted(unknown))}")
    args.faults = chosen or (QUICK_FAULTS if args.quick else FAULTS)
    args.users = args.users or (3 if args.quick else 6)
    bench = Bench(args)
    print(f"load average at the start: {os.getloadavg()[0]:.1f} ({os.cpu_count()} CPUs)")
    if args.prepare:
        try:
            bench.start()
        finally:
            bench.stop()
        return
    try:
        bench.start()
        bench.baseline()
        failed = []
        for name in args.faults:
            try:
                bench.run(name)
            except Exception as exc:  # noqa: BLE001 - one fault's harness error: the others still run
                failed.append(name)
                bench.broken = True
                print(f"\n{name}: the benchmark itself failed: {type(exc).__name__}: {exc}")
                traceback.print_exc()
    finally:
        bench.stop()
    if failed:
        raise SystemExit(f"the benchmark failed on: {', '.join(failed)}")
    log = bench.portal.output() if bench.portal else ""
    print(
        f"\ntracebacks in the portal's own output (its log, not what users saw): {log.count('Traceback')}"
    )


if __name__ == "__main__":
    main()
