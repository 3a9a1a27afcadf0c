"""The first-run check: what a new user does on a fresh clone, exactly as the README says.

Clones the commit into a temporary folder with ``../shared`` beside it and runs ``./kb run`` in
it: a fresh virtual environment with the base install only (no extras), a fresh data folder,
embedded PostgreSQL and Redis. Then, as that user would:

1. ``/healthz`` answers and the demo knowledge base loads with no failed version (the Documents
   page, and every version in the database);
2. the admin signs in with the password ``./kb run`` printed; one question through the JSON API
   is answered with a source;
3. a git source added and synced from a local repository (``./kb manage source add/sync``) is
   searchable;
4. Ctrl-C leaves no process behind; ``./kb run`` again with ``KB_LLM_BASE_URL`` pointing at the
   test suite's OpenAI-compatible server (``tests/llm_server.py``) streams a generated answer
   with citations on the chat page; Ctrl-C again.

No output of ``./kb run`` may hold a Python traceback, a deprecation banner or a server error
logged by Django (``/healthz`` answering 503 while the portal starts is not one). Each step's time
is printed. ``python deploy/checks/first_run.py [--commit REF] [--keep]``.
"""

from __future__ import annotations

import argparse
import contextlib
import os
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
from pathlib import Path

sys.path[:0] = [str(Path(__file__).resolve().parent), str(Path(__file__).resolve().parents[2])]

from _common import (  # noqa: E402
    REPO,
    CheckFailed,
    Fatal,
    Portal,
    Steps,
    answered_with_source,
    api_ask,
    api_search,
    clean_env,
    free_port,
    processes_mentioning,
    say,
    scan_output,
    stop_process_group,
    wait_for,
)

from tests.llm_server import LlmTestServer  # noqa: E402

QUESTION = "Что такое тест-кейс?"
GIT_PAGE = (
    "# Регламент дежурств\n\nДежурный инженер по качеству принимает смену в 9:00 и передаёт "
    "журнал дефектов следующему дежурному до 18:30.\n"
)
GIT_QUERY = "Когда дежурный инженер принимает смену?"
INSTALL_TIMEOUT = 600  # the fresh virtual environment: pip, from its cache on CI machines
DEMO_TIMEOUT = 900  # about 80 s on a quiet 2-core machine; room for a busy one


class RunningPortal:
    """One ``./kb run`` in the clone: its output collected as it comes, stopped with Ctrl-C."""

    def __init__(self, clone: Path, env: dict[str, str]) -> None:
        self.clone = clone
        self.output: list[str] = []
        self.process = subprocess.Popen(
            ["./kb", "run"],
            cwd=clone,
            env=env,
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            text=True,
            start_new_session=True,  # its own process group: Ctrl-C goes to all of it
        )
        self._reader = threading.Thread(target=self._read, daemon=True)
        self._reader.start()

    def _read(self) -> None:
        assert self.process.stdout is not None
        for line in self.process.stdout:
            self.output.append(line.rstrip("\n"))

    def text(self) -> str:
        return "\n".join(self.output)

    def wait_until_running(self, timeout: float) -> str:
        def running() -> str | None:
            if self.process.poll() is not None:
                raise Fatal(f"./kb run exited with {self.process.returncode}:\n{self.text()}")
            found = re.search(r"Knowledge Belt is running at (\S+)", self.text())
            return found[1] if found else None

        return wait_for("./kb run saying it is running", running, timeout, every=0.5)

    def admin_password(self) -> str:
        found = re.search(r"user 'admin', password '([^']+)'", self.text())
        if not found:
            raise CheckFailed("./kb run printed no admin password")
        return found[1]

    def kill(self) -> None:
        """After a failure: stop it as Ctrl-C would, and harder if that does not do it."""
        if self.process.poll() is None:
            with contextlib.suppress(CheckFailed):
                stop_process_group(self.process, wait=30)
        for line in processes_mentioning(str(self.clone)):
            with contextlib.suppress(ProcessLookupError, ValueError):
                os.kill(int(line.split(":", 1)[0]), signal.SIGKILL)

    def stop(self) -> None:
        """Ctrl-C, as a user in the terminal; then nothing of the clone may still run."""
        stop_process_group(self.process)
        self._reader.join(10)
        if "Stopped." not in self.text():
            raise CheckFailed("./kb run did not say it stopped")
        left = wait_for_no_processes(self.clone)
        if left:
            raise CheckFailed("processes left behind:\n" + "\n".join(left))


def wait_for_no_processes(clone: Path) -> list[str]:
    try:
        wait_for("no process left", lambda: not processes_mentioning(str(clone)), 20, 0.5)
    except CheckFailed:
        return processes_mentioning(str(clone))
    return []


def clone_commit(workdir: Path, ref: str) -> Path:
    """The committed tree, as a fresh clone, with the shared documents beside it."""
    commit = subprocess.run(
        ["git", "-C", str(REPO), "rev-parse", ref], capture_output=True, text=True, check=True
    ).stdout.strip()
    clone = workdir / "main"
    subprocess.run(["git", "clone", "--quiet", str(REPO), str(clone)], check=True)
    subprocess.run(["git", "-C", str(clone), "checkout", "--quiet", commit], check=True)
    (workdir / "shared").symlink_to(REPO.parent / "shared")
    say(f"clone of {commit[:12]} in {clone}")
    return clone


def demo_state(portal: Portal) -> dict[str, int]:
    """Counts of the Documents page's rows by status, as the page shows them."""
    page = portal.get("/documents/").text
    counts: dict[str, int] = {}
    for status in re.findall(r'<tr class="doc-row" data-status="([^"]+)"', page):
        counts[status] = counts.get(status, 0) + 1
    return counts


def version_counts(clone: Path, env: dict[str, str]) -> dict[str, int]:
    """Every version of every document by status, read from the clone's own database."""
    code = (
        "from collections import Counter; from knowledge.models import DocumentVersion as V; "
        "print(dict(Counter(V.objects.values_list('status', flat=True))))"
    )
    done = subprocess.run(
        ["./kb", "manage", "shell", "--no-imports", "-c", code],
        cwd=clone,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    if done.returncode != 0:
        raise CheckFailed(f"./kb manage shell failed: {done.stderr[-500:]}")
    return eval(done.stdout.strip().splitlines()[-1], {})  # a dict literal printed just above


def demo_loaded(portal: Portal) -> dict[str, int] | None:
    counts = demo_state(portal)
    if counts.get("failed"):
        raise Fatal(f"demo documents failed to ingest: {counts}")
    busy = sum(n for status, n in counts.items() if status != "ready")
    return counts if counts and not busy else None


def make_git_repository(path: Path) -> None:
    path.mkdir()
    (path / "duty.md").write_text(GIT_PAGE, encoding="utf-8")
    git = ["git", "-C", str(path), "-c", "user.name=Check", "-c", "user.email=check@example.com"]
    subprocess.run([*git, "init", "--quiet", "--initial-branch", "main"], check=True)
    subprocess.run([*git, "add", "duty.md"], check=True)
    subprocess.run([*git, "commit", "--quiet", "-m", "Duty rules"], check=True)


def manage(clone: Path, env: dict[str, str], *args: str) -> str:
    done = subprocess.run(
        ["./kb", "manage", *args], cwd=clone, env=env, capture_output=True, text=True, check=False
    )
    problems = scan_output(done.stdout + done.stderr)
    if done.returncode != 0 or problems:
        raise CheckFailed(f"./kb manage {' '.join(args)}: {done.returncode}\n{done.stderr[-800:]}")
    return done.stdout


def stream_on_chat_page(portal: Portal, question: str) -> tuple[int, str]:
    """Ask on the chat page as the browser does; returns (tokens streamed, final answer HTML)."""
    portal.get("/")
    created = portal.post_form("/chat/new/", {"question": question})
    if created.status_code != 302:
        raise CheckFailed(f"a new conversation answered {created.status_code}")
    page = portal.get(created.headers["location"]).text
    found = re.search(r'sse-connect="([^"]+)"', page)
    if not found:
        raise CheckFailed("the conversation page has no answer stream")
    tokens, done = 0, ""
    with portal.http.stream("GET", found[1], headers=portal._headers()) as response:
        event = ""
        data: list[str] = []
        for line in response.iter_lines():
            if line.startswith("event: "):
                event, data = line[7:], []
            elif line.startswith("data: "):
                data.append(line[6:])
            elif not line and event:
                if event == "token":
                    tokens += 1
                elif event == "done":
                    done = "\n".join(data)
                    break
                event = ""
    return tokens, done


def run_check(ref: str, keep: bool) -> None:
    steps = Steps("first run")
    workdir = Path(tempfile.mkdtemp(prefix="kb-first-run-"))
    port, redis_port = free_port(), free_port()
    env = clean_env(KB_PORT=str(port), KB_REDIS_PORT=str(redis_port))
    portal_run: RunningPortal | None = None
    try:
        with steps.step("clone the commit with ../shared beside it"):
            clone = clone_commit(workdir, ref)
        with steps.step("./kb run: fresh virtual environment (base install), services, migrate"):
            portal_run = RunningPortal(clone, env)
            url = portal_run.wait_until_running(INSTALL_TIMEOUT)
        portal = Portal(url)
        with steps.step("/healthz answers ok"):
            wait_for("/healthz ok", lambda: portal.healthz()["status"] == "ok", 120)
        with steps.step("the admin signs in with the printed password"):
            portal.sign_in("admin", portal_run.admin_password())
        with steps.step("the demo knowledge base loads with no failed document"):
            counts = wait_for("the demo ingested", lambda: demo_loaded(portal), DEMO_TIMEOUT, 3)
            say(f"  Documents page: {counts}")
            versions = version_counts(clone, env)
            say(f"  every version: {versions}")
            if set(versions) != {"ready"}:
                raise CheckFailed(f"not every demo version is ready: {versions}")
        with steps.step("one question through the JSON API is answered with a source"):
            token = portal.create_api_token()
            payload = api_ask(portal, token, QUESTION)
            if not answered_with_source(payload):
                raise CheckFailed(f"no answer with a source: {payload}")
            say(f"  {payload['outcome']}: {payload['sources'][0]['document']}")
        with steps.step("a git source added and synced from a local repository is searchable"):
            make_git_repository(workdir / "team-wiki")
            manage(
                clone,
                env,
                "source",
                "add",
                "Team wiki",
                "--kind",
                "git",
                "--url",
                str(workdir / "team-wiki"),
            )
            say("  " + manage(clone, env, "source", "sync", "Team wiki").strip().splitlines()[-1])
            hits = api_search(portal, token, GIT_QUERY)
            if not hits or hits[0]["source"] != "Team wiki":
                raise CheckFailed(f"the git page is not the first hit: {hits[:2]}")
        with steps.step("Ctrl-C stops everything, no process left"):
            portal_run.stop()
        problems = scan_output(portal_run.text())

        with LlmTestServer() as llm:
            llm_env = {**env, "KB_LLM_BASE_URL": llm.base_url, "KB_LLM_MODEL": "test-llm"}
            with steps.step("./kb run again with KB_LLM_BASE_URL (the test LLM server)"):
                portal_run = RunningPortal(clone, llm_env)
                portal_run.wait_until_running(180)  # same port; the admin's session is kept
            with steps.step("the chat page streams a generated answer with citations"):
                tokens, answer = stream_on_chat_page(portal, QUESTION)
                asked = [r for r in llm.requests if r.path.endswith("/chat/completions")]
                if tokens < 2 or not asked:
                    raise CheckFailed(f"no streamed LLM answer ({tokens} tokens)")
                if not re.search(r"\[\d+\]|class=\"cite", answer) or "/documents/" not in answer:
                    raise CheckFailed(f"the answer has no citation or source link:\n{answer[:800]}")
                say(f"  {tokens} tokens streamed, {len(asked)} LLM request(s)")
            with steps.step("Ctrl-C stops everything, no process left"):
                portal_run.stop()
        problems += scan_output(portal_run.text())
        if problems:
            raise CheckFailed("./kb run printed:\n" + "\n".join(problems))
    finally:
        if portal_run is not None:
            portal_run.kill()
        steps.summary()
        if keep:
            say(f"kept {workdir}")
        else:
            shutil.rmtree(workdir, ignore_errors=True)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--commit", default="HEAD", help="the commit to clone (default HEAD)")
    parser.add_argument("--keep", action="store_true", help="keep the temporary folder")
    args = parser.parse_args()
    try:
        run_check(args.commit, args.keep)
    except CheckFailed as exc:
        say(f"FIRST-RUN CHECK FAILED: {exc}")
        return 1
    say("first-run check passed")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
