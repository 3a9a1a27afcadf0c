"""Slow staff uploads hold neither every slot nor a socket for hours (issue 50, row 3): a body
is bounded by a minimum transfer rate, not by the length it declares, and one user holds at most
KB_UPLOADS_PER_USER upload slots at once. Before, 70 slow bodies of one staff session, each
declaring 400 MB, took all 64 slots for up to 1.7 hours (/login/ answered 503).

Against the real server (uvicorn as ./kb run starts it)."""

from __future__ import annotations

import socket
import time

import httpx2
import pytest
from django.test import Client

from tests.conftest import PortalServer

DECLARED = 400 * 2**20


def _upload_head(port: int, cookie: str) -> bytes:
    return (
        f"POST /documents/upload/ HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\n"
        f"Cookie: {cookie}\r\nContent-Type: multipart/form-data; boundary=kb\r\n"
        f"Content-Length: {DECLARED}\r\n\r\n--kb\r\n"
    ).encode()


def _staff_cookie(alice) -> str:
    browser = Client()
    browser.force_login(alice)
    return f"sessionid={browser.cookies['sessionid'].value}"


def _open(server: PortalServer, head: bytes) -> socket.socket:
    sock = socket.create_connection(("127.0.0.1", server.port), timeout=30)
    sock.sendall(head)
    return sock


def _answer(sock: socket.socket) -> bytes:
    received = b""
    try:
        while chunk := sock.recv(65536):
            received += chunk
    except (ConnectionResetError, TimeoutError):
        pass
    finally:
        sock.close()
    return received


def _slots(server: PortalServer) -> dict:
    return httpx2.get(server.url + "/healthz", timeout=30).json()["slots"]


@pytest.fixture
def server(transactional_db, request):
    server = PortalServer(**request.param)
    yield server
    server.stop()


@pytest.mark.parametrize(
    "server", [{"KB_BODY_TIMEOUT_SECONDS": "2", "KB_BODY_MIN_KB_PER_SECOND": "64"}], indirect=True
)
def test_an_upload_slower_than_the_minimum_rate_is_cut_whatever_length_it_declares(server, alice):
    # 400 MB at 64 KB/s was 6,400 s of grace before; a byte a second is cut in seconds now.
    sock = _open(server, _upload_head(server.port, _staff_cookie(alice)))
    started = time.monotonic()
    sock.settimeout(1)
    answer = b""
    while time.monotonic() - started < 25 and not answer:
        try:
            answer = sock.recv(65536)
        except TimeoutError:
            sock.sendall(b"x")  # a byte a second: far under the rate
    sock.close()
    assert answer.startswith(b"HTTP/1.1 408 "), answer[:200]
    assert _slots(server)["timed_out"]["body"] == 1 and _slots(server)["pages"]["in_use"] == 0


@pytest.mark.parametrize(
    "server", [{"KB_WEB_CONCURRENCY": "4", "KB_UPLOADS_PER_USER": "3"}], indirect=True
)
def test_one_staff_user_holds_at_most_a_few_upload_slots(server, alice):
    head = _upload_head(server.port, _staff_cookie(alice))
    held = [_open(server, head) for _ in range(3)]
    try:
        time.sleep(1)
        refused = [_answer(_open(server, head)) for _ in range(3)]
        page = httpx2.get(server.url + "/login/", timeout=30)
        slots = _slots(server)
    finally:
        for sock in held:
            sock.close()
    assert all(answer.startswith(b"HTTP/1.1 429 ") for answer in refused), refused[0][:200]
    assert b"retry-after: 5" in refused[0].lower()
    assert page.status_code == 200
    assert slots["pages"]["in_use"] == 3  # the three bodies coming in, and not one more
