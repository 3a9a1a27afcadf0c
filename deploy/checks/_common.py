"""What both deployment checks share: timed steps, a signed-in HTTP client, processes, ports.

The checks drive the portal only through what a user or an operator touches: its command line,
its pages (sign-in form, upload form, chat), its JSON API and ``/healthz``. Standard library
and ``httpx2`` (a base dependency of the product) only.
"""

from __future__ import annotations

import contextlib
import html
import os
import re
import shutil
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import httpx2

REPO = Path(__file__).resolve().parents[2]


class CheckFailed(Exception):
    """A step did not give what a user would see; the message says what was seen instead."""


class Fatal(CheckFailed):
    """A failure no waiting can mend (a process exited, a document failed): ``wait_for``
    passes it on at once."""


@dataclass
class Steps:
    """Times each step and prints it as it ends, then a summary."""

    name: str
    started: float = field(default_factory=time.monotonic)
    times: list[tuple[str, float]] = field(default_factory=list)

    @contextlib.contextmanager
    def step(self, title: str) -> Iterator[None]:
        began = time.monotonic()
        say(f"[{self.name}] {title} ...")
        try:
            yield
        except BaseException:
            say(f"[{self.name}] {title}: FAILED after {time.monotonic() - began:.1f} s")
            raise
        took = time.monotonic() - began
        self.times.append((title, took))
        say(f"[{self.name}] {title}: ok, {took:.1f} s")

    def summary(self) -> None:
        total = time.monotonic() - self.started
        say(f"[{self.name}] step times:")
        for title, took in self.times:
            say(f"  {took:7.1f} s  {title}")
        say(f"  {total:7.1f} s  in all")


def say(text: str) -> None:
    sys.stdout.write(text + "\n")
    sys.stdout.flush()


def free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def wait_for(what: str, probe: Callable[[], Any], timeout: float, every: float = 1.0) -> Any:
    """Call ``probe`` until it returns something true; its last error explains a timeout."""
    deadline = time.monotonic() + timeout
    last = "no answer yet"
    while time.monotonic() < deadline:
        try:
            value = probe()
        except Fatal:
            raise
        except (httpx2.HTTPError, OSError, CheckFailed) as exc:
            last = f"{type(exc).__name__}: {exc}"
        else:
            if value:
                return value
            last = f"got {value!r}"
        time.sleep(every)
    raise CheckFailed(f"{what}: not within {timeout:.0f} s ({last})")


def clean_env(**extra: str) -> dict[str, str]:
    """The caller's environment without anything of the portal's or of a virtual environment,
    plus ``extra``: each check configures the portal from nothing."""
    dropped = ("KB_", "DJANGO_", "DATABASE_URL", "REDIS_URL", "VIRTUAL_ENV", "PYTHONPATH")
    env = {k: v for k, v in os.environ.items() if not k.startswith(dropped)}
    return {**env, **extra}


def processes_mentioning(marker: str) -> list[str]:
    """Command lines of running processes that mention ``marker`` (a temporary folder)."""
    found = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit() or int(entry.name) == os.getpid():
            continue
        with contextlib.suppress(OSError):
            raw = (entry / "cmdline").read_bytes()
            if marker.encode() in raw:
                command = raw.replace(b"\0", b" ").decode(errors="replace")
                found.append(f"{entry.name}: {command}")
    return found


def stop_process_group(
    process: subprocess.Popen, sig: int = signal.SIGINT, wait: float = 60
) -> int:
    """Send ``sig`` to the process's group (a terminal's Ctrl-C) and wait for it to end."""
    with contextlib.suppress(ProcessLookupError):
        os.killpg(process.pid, sig)
    try:
        return process.wait(wait)
    except subprocess.TimeoutExpired as exc:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(process.pid, signal.SIGKILL)
        raise CheckFailed(f"the process did not stop within {wait:.0f} s of signal {sig}") from exc


class Portal:
    """A browser-like client of one running portal: cookies by hand (the production check's
    cookies are Secure and the client talks plain HTTP to the web server behind the proxy),
    the CSRF token from the cookie, forms posted the way the pages post them."""

    def __init__(
        self, base_url: str, *, behind_tls_proxy: bool = False, verify: Any = True
    ) -> None:
        # Plain HTTP to a web server behind a TLS proxy says so as the proxy would; through the
        # proxy itself (https://) the proxy says it.
        https = base_url.startswith("https://")
        headers = {"X-Forwarded-Proto": "https"} if behind_tls_proxy and not https else {}
        self.base_url = base_url.rstrip("/")
        self.http = httpx2.Client(
            base_url=self.base_url, headers=headers, timeout=120, verify=verify
        )
        self.cookies: dict[str, str] = {}
        self.https = behind_tls_proxy or https

    def _remember(self, response: httpx2.Response) -> httpx2.Response:
        for header in response.headers.get_list("set-cookie"):
            name, _, rest = header.partition("=")
            self.cookies[name.strip()] = rest.split(";", 1)[0]
        return response

    def _headers(self, extra: dict[str, str] | None = None) -> dict[str, str]:
        headers = dict(extra or {})
        if self.cookies:
            headers["Cookie"] = "; ".join(f"{k}={v}" for k, v in self.cookies.items())
        return headers

    def get(self, path: str, **kwargs: Any) -> httpx2.Response:
        headers = self._headers(kwargs.pop("headers", None))
        return self._remember(self.http.get(path, headers=headers, **kwargs))

    def post_form(self, path: str, data: dict[str, str], files: Any = None) -> httpx2.Response:
        """POST as the page's form would: CSRF token in the body, the page as Referer."""
        token = self.cookies.get("csrftoken", "")
        origin = ("https://" if self.https else "http://") + self.http.base_url.netloc.decode()
        headers = self._headers({"Referer": origin + path, "Origin": origin})
        response = self.http.post(
            path, data={**data, "csrfmiddlewaretoken": token}, files=files, headers=headers
        )
        return self._remember(response)

    def sign_in(self, username: str, password: str) -> None:
        page = self.get("/login/")
        if page.status_code != 200:
            raise CheckFailed(f"the sign-in page answered {page.status_code}")
        response = self.post_form("/login/", {"username": username, "password": password})
        if response.status_code != 302 or "sessionid" not in self.cookies:
            raise CheckFailed(f"sign-in as {username!r} answered {response.status_code}")

    def create_api_token(self) -> str:
        self.get("/profile/")
        response = self.post_form("/profile/tokens/", {"name": "deployment check"})
        found = re.search(r'id="new-token">([^<]+)<', response.text)
        if not found:
            raise CheckFailed(f"no token on the profile page ({response.status_code})")
        return html.unescape(found[1]).strip()

    def healthz(self) -> dict[str, Any]:
        response = self.get("/healthz")
        if response.status_code not in (200, 503):
            raise CheckFailed(f"/healthz answered {response.status_code}")
        return response.json()

    def services(self) -> dict[str, Any]:
        """Each service's state, as staff see it (``/healthz/services``)."""
        response = self.get("/healthz/services")
        if response.status_code not in (200, 503):
            raise CheckFailed(f"/healthz/services answered {response.status_code}")
        return response.json().get("services", {})


def api_ask(portal: Portal, token: str, question: str) -> dict[str, Any]:
    """``POST /api/v1/ask`` with a personal token, as a tool or an agent calls it."""
    response = portal.http.post(
        "/api/v1/ask", json={"question": question}, headers={"Authorization": f"Bearer {token}"}
    )
    if response.status_code != 200:
        raise CheckFailed(f"/api/v1/ask answered {response.status_code}: {response.text[:300]}")
    return response.json()


def api_search(portal: Portal, token: str, query: str) -> list[dict[str, Any]]:
    response = portal.http.get(
        "/api/v1/search", params={"q": query}, headers={"Authorization": f"Bearer {token}"}
    )
    if response.status_code != 200:
        raise CheckFailed(f"/api/v1/search answered {response.status_code}: {response.text[:300]}")
    return response.json()["results"]


def answered_with_source(payload: dict[str, Any]) -> bool:
    return bool(payload.get("answer")) and not payload.get("refused") and bool(payload["sources"])


def copy_source_tree(source: Path, destination: Path) -> Path:
    """The files git would commit (tracked, and new ones not ignored), copied to a fresh folder:
    a wheel built there owes nothing to a ``build/`` folder left by an earlier build."""
    listed = subprocess.run(
        ["git", "-C", str(source), "ls-files", "-z", "--cached", "--others", "--exclude-standard"],
        capture_output=True,
        check=True,
    ).stdout.split(b"\0")
    for name in filter(None, listed):
        path = source / name.decode()
        if path.is_file():
            target = destination / name.decode()
            target.parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(path, target)
    return destination


def scan_output(text: str) -> list[str]:
    """Lines of a command's output a new user should never see: a traceback, a deprecation
    banner, a server error logged (a start's probes of ``/healthz`` are logged at INFO)."""
    bad = re.compile(
        r"Traceback \(most recent call last\)|Deprecat|BuildBackendWarning|ERROR django\.request",
        re.I,
    )
    return [line for line in text.splitlines() if bad.search(line)]
