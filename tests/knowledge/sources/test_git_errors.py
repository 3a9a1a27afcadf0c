"""What staff read when git cannot fetch: refused credentials, a silent server, a token in the
URL never shown. The servers are small real HTTP servers on loopback."""

from __future__ import annotations

import socket
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest

from knowledge.models import Document, Source
from knowledge.sources.sync import sync_source


class _Refusing(BaseHTTPRequestHandler):
    """Every request needs credentials, and none is ever good enough."""

    def do_GET(self) -> None:  # noqa: N802 - the handler's name is the method's
        self.send_response(401)
        self.send_header("WWW-Authenticate", 'Basic realm="wiki"')
        self.send_header("Content-Length", "0")
        self.end_headers()

    def log_message(self, *args: object) -> None:
        pass


@pytest.fixture
def refusing_server() -> Iterator[str]:
    server = ThreadingHTTPServer(("127.0.0.1", 0), _Refusing)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield f"127.0.0.1:{server.server_port}"
    server.shutdown()
    server.server_close()


@pytest.fixture
def silent_server() -> Iterator[str]:
    """Accepts connections and never answers."""
    listener = socket.socket()
    listener.bind(("127.0.0.1", 0))
    listener.listen(8)
    yield f"127.0.0.1:{listener.getsockname()[1]}"
    listener.close()


def git_source(url: str) -> Source:
    return Source.objects.create(name="Wiki", kind="wiki", connector="git", sync_url=url)


@pytest.mark.parametrize("credentials", ["", "editor:s3cret-token@"])
def test_refused_credentials_are_said_plainly_and_never_shown(db, refusing_server, credentials):
    source = git_source(f"http://{credentials}{refusing_server}/wiki.git")
    outcome = sync_source(source.pk)
    shown = f"http://{'***@' if credentials else ''}{refusing_server}/wiki.git"
    assert outcome.status == "failed"
    assert outcome.error == (
        f"The repository at {shown} refused access: check the credentials "
        "(a token in the URL, a credential helper, or the worker's SSH key)."
    )
    source.refresh_from_db()
    assert source.last_sync_error == outcome.error and "s3cret" not in source.last_sync_error
    assert not Document.objects.exists()


def test_a_server_that_never_answers_is_given_up_after_the_timeout(db, silent_server, settings):
    settings.GIT_TIMEOUT_SECONDS = 2
    source = git_source(f"http://{silent_server}/wiki.git")
    outcome = sync_source(source.pk)
    assert outcome.status == "failed"
    assert outcome.error == (
        f"git did not finish within 2 s (fetch http://{silent_server}/wiki.git); "
        "the server may be unreachable or the repository too large"
    )


def test_an_unreachable_host_is_said_plainly(db):
    closed = socket.socket()
    closed.bind(("127.0.0.1", 0))
    port = closed.getsockname()[1]
    closed.close()  # nothing listens there now
    outcome = sync_source(git_source(f"http://127.0.0.1:{port}/wiki.git").pk)
    assert outcome.error.startswith(f"Could not reach http://127.0.0.1:{port}/wiki.git: ")
