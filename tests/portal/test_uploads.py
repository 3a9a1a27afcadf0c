"""Upload size limits (portal/uploads.py): refused while the request streams in.

The real server is uvicorn (ASGI), where Django reads a whole body before any middleware runs;
these tests talk raw HTTP to it so they can send the headers of a huge upload and not its body.
"""

from __future__ import annotations

import socket
from collections.abc import Iterable, Iterator

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile
from django.test import override_settings

from knowledge.models import DocumentVersion, Source
from tests.conftest import PortalServer


@pytest.fixture
def small_limit_server(transactional_db) -> Iterator[PortalServer]:
    server = PortalServer(KB_MAX_REQUEST_MB="1", KB_MAX_UPLOAD_MB="1")
    yield server
    server.stop()


def exchange(port: int, head: str, body: Iterable[bytes] = (), timeout: float = 15) -> str:
    """Send a request head and body pieces (stopping if the server hangs up); the response."""
    with socket.create_connection(("127.0.0.1", port), timeout=timeout) as sock:
        sock.sendall(head.encode())
        for piece in body:
            try:
                sock.sendall(piece)
            except (BrokenPipeError, ConnectionResetError):
                break
        received = b""
        try:
            while chunk := sock.recv(65536):
                received += chunk
        except ConnectionResetError:
            pass
    return received.decode(errors="replace")


def head(path: str, **headers: str) -> str:
    lines = [f"POST {path} HTTP/1.1", "Host: 127.0.0.1"]
    lines += [f"{name.replace('_', '-')}: {value}" for name, value in headers.items()]
    return "\r\n".join(lines) + "\r\n\r\n"


def test_declared_oversized_upload_is_refused_before_its_body_is_sent(small_limit_server):
    # 50 MB announced, not one byte of it sent: a server that waited for the body would time out.
    response = exchange(
        small_limit_server.port,
        head(
            "/documents/upload/",
            Content_Type="multipart/form-data; boundary=x",
            Content_Length=str(50 * 1024 * 1024),
        ),
    )
    assert response.startswith("HTTP/1.1 413")
    assert "at most 1 MB per upload" in response


def test_chunked_upload_is_cut_off_once_it_passes_the_limit(small_limit_server):
    piece = b"x" * 65536

    def chunks() -> Iterator[bytes]:
        for _ in range(48):  # 3 MB, three times the limit
            yield b"%x\r\n%s\r\n" % (len(piece), piece)
        yield b"0\r\n\r\n"

    response = exchange(
        small_limit_server.port,
        head(
            "/documents/upload/",
            Content_Type="multipart/form-data; boundary=x",
            Transfer_Encoding="chunked",
        ),
        chunks(),
    )
    # Without the limit the body would be read whole and then refused by CSRF (403).
    assert response.startswith("HTTP/1.1 413")


def test_small_request_passes_the_size_limit(small_limit_server):
    # Connection: close, or the server keeps the connection for its keep-alive (75 s).
    response = exchange(
        small_limit_server.port, head("/login/", Content_Length="0", Connection="close")
    )
    assert not response.startswith("HTTP/1.1 413")


@override_settings(MAX_REQUEST_MB=1)
def test_oversized_request_is_refused_by_the_django_middleware_too(client, alice):
    client.force_login(alice)
    big = SimpleUploadedFile("big.md", b"# Big\n\n" + b"word " * 300_000)
    response = client.post("/documents/upload/", {"files": [big], "new_source": "Uploads"})
    assert response.status_code == 413
    assert not DocumentVersion.objects.exists()


@override_settings(MAX_UPLOAD_MB=1)
def test_file_over_the_limit_is_dropped_and_the_others_arrive(client, alice, settings):
    client.force_login(alice)
    blobs = settings.MEDIA_ROOT / "blobs"
    before = {p for p in blobs.rglob("*") if p.is_file()}  # other tests' files share the folder
    big = SimpleUploadedFile("big.md", b"# Big\n\n" + b"word " * 300_000)  # 1.4 MB
    small = SimpleUploadedFile("small.md", b"# Small\n\nA page that fits.\n")
    response = client.post(
        "/documents/upload/", {"files": [big, small], "new_source": "Uploads"}, follow=True
    )
    assert response.status_code == 200
    html = response.content.decode()
    assert "big.md: over the 1 MB limit, not read" in html
    source = Source.objects.get(name="Uploads")
    assert list(DocumentVersion.objects.values_list("filename", flat=True)) == ["small.md"]
    assert DocumentVersion.objects.get().document.source == source
    stored = {p for p in blobs.rglob("*") if p.is_file()} - before
    assert len(stored) <= 1  # the small file's blob at most; nothing of the big one was written
    assert all(p.stat().st_size < 1024 * 1024 for p in stored)


@pytest.fixture
def default_server(transactional_db) -> Iterator[PortalServer]:
    server = PortalServer()
    yield server
    server.stop()


@pytest.mark.parametrize("path", ["/login/", "/api/v1/ask", "/documents/upload/"])
def test_anonymous_bodies_over_the_small_limit_are_refused_before_they_are_read(
    default_server, path
):
    # 5 MB announced on any URL, not a byte sent: answered at once, nothing spooled to disk.
    response = exchange(
        default_server.port,
        head(path, Content_Type="application/octet-stream", Content_Length=str(5 * 1024 * 1024)),
    )
    assert response.startswith("HTTP/1.1 413")
    assert "at most 1024 KB are accepted here" in response


def test_only_a_staff_session_may_send_an_upload_body_over_the_small_limit(client, alice, bob):
    big = b"# Big\n\n" + b"word " * 300_000  # 1.4 MB, over KB_MAX_BODY_KB
    client.force_login(bob)
    response = client.post(
        "/documents/upload/",
        {"files": [SimpleUploadedFile("big.md", big)], "new_source": "Uploads"},
    )
    assert response.status_code == 413
    client.force_login(alice)
    response = client.post(
        "/documents/upload/",
        {"files": [SimpleUploadedFile("big.md", big)], "new_source": "Uploads"},
    )
    assert response.status_code in (200, 302)
    assert DocumentVersion.objects.filter(filename="big.md").exists()
