"""Nobody holds the web server's request slots by being slow (issue 40, row 1): a request takes a
slot only once its body is in (``portal.capacity``), and every connection has deadlines for its
head, its body and a response it does not read (``portal.deadlines``).

Against the real server (uvicorn, started as ./kb run starts it) on raw sockets, with small
limits and one-second deadlines so an attack fits in a test; nothing here measures time: each
test waits for what the server reports (``/healthz``'s slots) or for the socket's end.
"""

from __future__ import annotations

import socket
import time
from collections.abc import Callable

import httpx2
import pytest
from django.test import Client

from knowledge.ingest.registration import register_file
from knowledge.models import Source
from tests.conftest import PortalServer

SLOW_BODY = (
    b"POST /login/ HTTP/1.1\r\nHost: 127.0.0.1\r\n"
    b"Content-Type: application/x-www-form-urlencoded\r\nContent-Length: 100000\r\n\r\nu"
)


def _slots(server: PortalServer) -> dict:
    return httpx2.get(server.url + "/healthz", timeout=30).json().get("slots", {})


def _timed_out(server: PortalServer, phase: str) -> int:
    return _slots(server).get("timed_out", {}).get(phase, 0)


def _until(condition: Callable[[], bool], timeout: float = 30) -> bool:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if condition():
            return True
        time.sleep(0.2)
    return False


def _connect(server: PortalServer, first: bytes = b"", **options: int) -> socket.socket:
    sock = socket.socket()
    for option, value in options.items():
        sock.setsockopt(socket.SOL_SOCKET, getattr(socket, option), value)
    sock.settimeout(60)
    sock.connect(("127.0.0.1", server.port))
    if first:
        sock.sendall(first)
    return sock


def _until_closed(sock: socket.socket) -> bytes:
    """Everything the server sends until it closes the connection (or resets it)."""
    received = b""
    try:
        while chunk := sock.recv(65536):
            received += chunk
    except ConnectionResetError:
        pass
    finally:
        sock.close()
    return received


@pytest.fixture
def server(transactional_db, request):
    server = PortalServer(**getattr(request, "param", {}))
    yield server
    server.stop()


@pytest.mark.parametrize("server", [{"KB_WEB_CONCURRENCY": "4"}], indirect=True)
def test_slow_request_bodies_hold_no_page_slot(server):
    """Twelve bodies trickling in on a server of four slots: the pages still answer (before,
    four of them held the four slots and the page was answered 503)."""
    slow = [_connect(server, SLOW_BODY) for _ in range(12)]
    try:
        _until(lambda: _slots(server).get("arriving") == 12, timeout=10)
        page = httpx2.get(server.url + "/login/", timeout=30)
        slots = _slots(server)
    finally:
        for sock in slow:
            sock.close()
    assert page.status_code == 200, page.text
    assert slots["arriving"] == 12 and slots["pages"] == {"in_use": 0, "limit": 4}


@pytest.mark.parametrize(
    "server",
    [{"KB_BODY_TIMEOUT_SECONDS": "1", "KB_BODY_MIN_KB_PER_SECOND": "1000"}],
    indirect=True,
)
def test_a_body_that_does_not_arrive_in_time_is_answered_408_and_closed(server):
    answer = _until_closed(_connect(server, SLOW_BODY))
    assert answer.startswith(b"HTTP/1.1 408 "), answer[:200]
    assert b"connection: close" in answer.lower()
    slots = _slots(server)
    assert slots["timed_out"]["body"] == 1 and slots["arriving"] == 0
    # A body sent at once is not affected: the sign-in page answers the same server.
    assert httpx2.post(server.url + "/login/", data={"username": "x"}).status_code == 403  # CSRF


@pytest.mark.parametrize("server", [{"KB_HEADER_TIMEOUT_SECONDS": "1"}], indirect=True)
def test_a_head_that_does_not_arrive_in_time_is_answered_408_and_closed(server):
    half_head = _connect(server, b"GET /login/ HTTP/1.1\r\nHost: 127.0.0.1\r\n")
    silent = _connect(server)  # opened, and nothing ever sent
    assert _until_closed(half_head).startswith(b"HTTP/1.1 408 ")
    assert _until_closed(silent).startswith(b"HTTP/1.1 408 ")
    assert _slots(server)["timed_out"]["head"] == 2
    # A keep-alive connection idle between two requests is uvicorn's keep-alive's to end.
    with httpx2.Client(base_url=server.url, timeout=30) as client:
        assert client.get("/login/").status_code == 200
        time.sleep(1.5)  # past the head's deadline, well within the keep-alive
        assert client.get("/login/").status_code == 200


@pytest.mark.parametrize("server", [{"KB_SEND_TIMEOUT_SECONDS": "1"}], indirect=True)
def test_a_client_that_stops_reading_a_download_is_let_go(server, alice):
    size = 32 * 1024 * 1024  # far more than both sockets' buffers hold
    source = Source.objects.create(name="Files")
    version = register_file(source, "big.txt", b"x" * size, enqueue=False).version
    browser = Client()
    browser.force_login(alice)
    cookie = browser.cookies["sessionid"].value
    request = (
        f"GET /versions/{version.pk}/download/ HTTP/1.1\r\nHost: 127.0.0.1\r\n"
        f"Cookie: sessionid={cookie}\r\n\r\n"
    ).encode()
    reader = _connect(server, request, SO_RCVBUF=4096)  # and then reads nothing
    try:
        let_go = _until(lambda: _timed_out(server, "send") == 1)
        slots = _slots(server)
    finally:
        received = _until_closed(reader)
    assert let_go, "the server still writes to a client that reads nothing"
    assert slots["pages"]["in_use"] == 0
    assert received.startswith(b"HTTP/1.1 200 ") and len(received) < size
