"""Downloads hold nothing the portal's pages need (issue 50, row 1): a version's file goes out
with its database connection given back, a block at a time, at most KB_DOWNLOADS_PER_USER of a
user's at once; behind nginx the portal answers with X-Accel-Redirect and nginx sends the bytes.

Against the real server (uvicorn as ./kb run starts it) with a pool of two connections: the
attack was a plain user's 24 downloads of a 20 MB version, read by nobody, holding the pool of
20 until their last byte (every page and /healthz timed out, the API answered 503).
"""

from __future__ import annotations

import socket
import time

import httpx2
import pytest
from django.test import Client

from knowledge.ingest.registration import register_file
from knowledge.models import Source
from tests.conftest import PortalServer

LIMITS = {
    "KB_DB_WEB_CONNECTIONS": "2",
    "KB_DB_POOL_TIMEOUT": "3",
    "KB_DOWNLOADS_PER_USER": "3",
}
SIZE = 20 * 2**20


def _session(user) -> str:
    browser = Client()
    browser.force_login(user)
    return f"sessionid={browser.cookies['sessionid'].value}"


@pytest.fixture
def big_version(transactional_db):
    source = Source.objects.create(name="Exports", is_public=True)
    data = ("Строка выгрузки журнала событий.\n" * (SIZE // 60)).encode()
    return register_file(source, "export.txt", data, enqueue=False).version


@pytest.fixture
def server(transactional_db):
    server = PortalServer(**LIMITS)
    yield server
    server.stop()


def _reader_that_reads_nothing(server: PortalServer, path: str, cookie: str) -> socket.socket:
    sock = socket.socket()
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)  # before connecting: a small window
    sock.connect(("127.0.0.1", server.port))
    sock.sendall(f"GET {path} HTTP/1.1\r\nHost: 127.0.0.1\r\nCookie: {cookie}\r\n\r\n".encode())
    return sock


def test_slow_readers_of_a_large_download_hold_no_connection_and_are_capped(
    server, big_version, bob, eve
):
    path = f"/versions/{big_version.pk}/download/"
    bobs, eves = _session(bob), _session(eve)
    readers = [_reader_that_reads_nothing(server, path, bobs) for _ in range(3)]
    try:
        with httpx2.Client(base_url=server.url, timeout=30) as http:

            def downloads() -> int:
                return http.get("/healthz").json()["slots"].get("downloads", 0)

            deadline = time.monotonic() + 30
            while downloads() < 3 and time.monotonic() < deadline:
                time.sleep(0.2)  # each answer started, and stuck on a full socket
            time.sleep(0.5)
            # The pool is two connections; three stuck downloads held them all before.
            page = http.get("/documents/", headers={"Cookie": eves})
            assert page.status_code == 200, page.text[:200]
            assert downloads() == 3
            fourth = http.get(path, headers={"Cookie": bobs})
            assert fourth.status_code == 429 and fourth.headers["retry-after"]
            # Another reader's download is not bob's to spend, and it arrives whole.
            whole = http.get(path, headers={"Cookie": eves})
            assert whole.status_code == 200 and len(whole.content) == big_version.file.size
            assert whole.headers["content-type"] == "application/octet-stream"
            assert whole.headers["content-disposition"].startswith("attachment")
    finally:
        for reader in readers:
            reader.close()
    with httpx2.Client(base_url=server.url, timeout=30) as http:
        deadline = time.monotonic() + 20
        while http.get("/healthz").json()["slots"]["downloads"] and time.monotonic() < deadline:
            time.sleep(0.2)  # the closed readers' places are given back
        assert http.get(path, headers={"Cookie": bobs}).status_code == 200


def test_behind_nginx_a_download_is_an_x_accel_redirect_to_the_files_location(
    client, big_version, bob, settings
):
    settings.DOWNLOAD_ACCEL = "/_files/"
    client.force_login(bob)
    response = client.get(f"/versions/{big_version.pk}/download/")
    assert response.status_code == 200 and response.content == b""
    assert response["X-Accel-Redirect"] == "/_files/" + big_version.file.name
    assert response["Content-Type"] == "application/octet-stream"
    assert response["Content-Disposition"] == 'attachment; filename="export.txt"'
    other = Client()
    assert other.get(f"/versions/{big_version.pk}/download/").status_code == 302  # sign in first
