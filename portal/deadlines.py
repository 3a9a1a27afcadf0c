"""The web server's HTTP/1.1 protocol: uvicorn's own (h11), with a deadline on every phase of a
connection in which the client, not the portal, decides how long it lasts.

uvicorn closes a connection left idle *between* requests (``--timeout-keep-alive``) and nothing
else: a connection that never sends a request, a request head sent a byte at a time, a body of
``Content-Length: 100000`` sent a byte every ten seconds, a client that stops reading a long
response, each stayed open for as long as the client liked; a slow body also held one of the
portal's request slots (issue 40: 66 such sockets, every page 503). Here, per connection:

- **the head**: the request line and headers must arrive within ``KB_HEADER_TIMEOUT_SECONDS``
  of the connection's first byte (of its opening, when it sends nothing at all);
- **the body**: at a minimum rate, whatever length it declares: from ``KB_BODY_TIMEOUT_SECONDS``
  after the head on, ``KB_BODY_MIN_KB_PER_SECOND`` for every second past that must have come,
  looked at every ``RATE_CHECK_SECONDS`` (an upload on a slow line still arrives; a body of
  400 MB declared and a byte sent now and then held its socket, and a staff upload its slot,
  for 1.7 hours when the deadline grew with the declared length: issue 50);
- **a response the client does not read**: once the socket's send buffer is full, the client
  has ``KB_SEND_TIMEOUT_SECONDS`` to take some of it, or the connection is dropped.

A head or body too late is answered ``408 Request Timeout`` (when nothing was answered yet) and
the connection closed; the request's application sees a disconnect. Idle between requests stays
uvicorn's keep-alive. Used by ``--http portal.deadlines:DeadlineProtocol`` in ``./kb run``, the
systemd unit and the compose file; a proxy in front (``deploy/nginx``) has deadlines of its own.
"""

from __future__ import annotations

import asyncio
from collections import Counter

import h11
from django.conf import settings
from django.utils.translation import gettext as _
from uvicorn.protocols.http.h11_impl import H11Protocol

RATE_CHECK_SECONDS = 5.0  # how often a body's pace is looked at, once its grace is over
# Connections cut by each deadline since this process started (reported by /healthz).
cut: Counter[str] = Counter()
_open_connections: set | None = None  # uvicorn's set of this process's open connections


def open_connections() -> int | None:
    """Open connections of this web process (None outside the web server)."""
    return None if _open_connections is None else len(_open_connections)


class DeadlineProtocol(H11Protocol):
    """uvicorn's h11 protocol with the deadlines above; one timer per connection, armed for the
    phase the connection is in (h11's view of the client: waiting for a head, sending a body)."""

    def connection_made(self, transport: asyncio.Transport) -> None:  # type: ignore[override]
        global _open_connections
        super().connection_made(transport)
        _open_connections = self.connections
        self._phase = ""
        self._timer: asyncio.TimerHandle | None = None
        self._send_timer: asyncio.TimerHandle | None = None
        self._body_since = 0.0
        self._body_bytes = 0
        self._arm("head", settings.HEADER_TIMEOUT_SECONDS)  # a connection that sends nothing

    def data_received(self, data: bytes) -> None:
        if self._phase == "body":
            self._body_bytes += len(data)
        super().data_received(data)
        self._follow()

    def on_response_complete(self) -> None:
        super().on_response_complete()
        self._follow()  # a pipelined request may be under way

    def connection_lost(self, exc: Exception | None) -> None:
        self._disarm()
        if self._send_timer is not None:
            self._send_timer.cancel()
            self._send_timer = None
        super().connection_lost(exc)

    def pause_writing(self) -> None:
        super().pause_writing()
        if self._send_timer is None:
            self._send_timer = self.loop.call_later(
                settings.SEND_TIMEOUT_SECONDS, self._not_reading
            )

    def resume_writing(self) -> None:
        super().resume_writing()
        if self._send_timer is not None:
            self._send_timer.cancel()
            self._send_timer = None

    # ------------------------------------------------------------------------------------------

    def _follow(self) -> None:
        """Arm the deadline of the phase the client is in now, or none when the next move is the
        portal's (the request is complete) or the keep-alive's (idle, nothing buffered)."""
        if self.transport.is_closing():
            return
        state = self.conn.their_state
        if state is h11.SEND_BODY:
            if self._phase != "body":
                self._body_since, self._body_bytes = self.loop.time(), 0
                self._arm("body", settings.BODY_TIMEOUT_SECONDS + RATE_CHECK_SECONDS)
        elif state is h11.IDLE:
            if self._phase == "head":
                return  # the head's deadline runs from its first byte, not from its last
            self._disarm()
            if self.conn.trailing_data[0]:  # part of the next request's head is in
                self._arm("head", settings.HEADER_TIMEOUT_SECONDS)
        elif self._phase:
            self._disarm()

    def _body_on_pace(self) -> bool:
        """Whether the body has come at the minimum rate for every second past its grace."""
        late = self.loop.time() - self._body_since - settings.BODY_TIMEOUT_SECONDS
        return self._body_bytes >= settings.BODY_MIN_KB_PER_SECOND * 1024 * max(0.0, late)

    def _arm(self, phase: str, seconds: float) -> None:
        self._disarm()
        self._phase = phase
        self._timer = self.loop.call_later(seconds, self._expired, phase)

    def _disarm(self) -> None:
        if self._timer is not None:
            self._timer.cancel()
        self._timer = None
        self._phase = ""

    def _expired(self, phase: str) -> None:
        self._timer = None
        if phase == "body" and self._body_on_pace():
            self._timer = self.loop.call_later(RATE_CHECK_SECONDS, self._expired, phase)
            return  # still the body's phase: looked at again
        self._phase = ""
        if self.transport.is_closing():
            return
        cut[phase] += 1
        answered = phase == "body" and self.cycle is not None and self.cycle.response_started
        if not answered:
            self.transport.write(_timeout_response(phase))
        # The request's application, if any, sees a disconnect (connection_lost).
        self.transport.close()

    def _not_reading(self) -> None:
        self._send_timer = None
        cut["send"] += 1
        # abort(), not close(): close() waits to flush a buffer the client is not reading.
        self.transport.abort()


def _timeout_response(phase: str) -> bytes:
    if phase == "head":
        text = _("The request's headers did not arrive in time.")
    else:
        text = _("The request's body did not arrive in time.")
    body = (text + "\n").encode()
    head = (
        "HTTP/1.1 408 Request Timeout\r\n"
        "content-type: text/plain; charset=utf-8\r\n"
        f"content-length: {len(body)}\r\n"
        "connection: close\r\n\r\n"
    )
    return head.encode("latin-1") + body
