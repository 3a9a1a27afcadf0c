"""``/mcp``: the MCP server over streamable HTTP, for holders of a personal API token.

Every request carries ``Authorization: Bearer kb_...``, a token of the Profile page looked up
as the JSON API does (``portal.api_auth``); without a valid one it is answered 401 before the
MCP SDK sees it, and the tools run as the token's owner. The server is stateless (each request
stands alone), so any of the portal's web processes can answer any request.
"""

from __future__ import annotations

import asyncio

from django.conf import settings
from django.http import HttpRequest
from django.http.request import split_domain_port, validate_host
from mcp.server import ServerRequestContext
from mcp.server.streamable_http_manager import StreamableHTTPSessionManager
from mcp.server.transport_security import TransportSecuritySettings
from starlette.requests import Request
from starlette.responses import JSONResponse, PlainTextResponse, Response
from starlette.types import ASGIApp, Receive, Scope, Send

from chat.mcp.server import Caller, build_server, in_thread
from portal import audit
from portal.addresses import client_address
from portal.api_auth import TOKEN_PREFIX, authenticate_token

PATH = "/mcp"
CALLER = "knowledge_belt.mcp_caller"  # the ASGI scope key the endpoint leaves the caller under
NO_STORE = {"Cache-Control": "private, no-store"}


def with_mcp(app: ASGIApp) -> ASGIApp:
    """``app`` with the MCP endpoint in front of it at ``/mcp``."""
    endpoint = McpEndpoint()

    async def route(scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "http" and scope["path"].rstrip("/") == PATH:
            await endpoint(scope, receive, send)
        else:
            await app(scope, receive, send)

    return route


class McpEndpoint:
    def __init__(self) -> None:
        self.server = build_server(_caller)
        self._manager: StreamableHTTPSessionManager | None = None
        self._task: asyncio.Task | None = None
        self._starting = asyncio.Lock()

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["method"] == "GET":
            # A GET opens an event stream for what the server sends unasked. This server is
            # stateless and answers in JSON: it never sends anything there (the SDK's clients
            # open one only within a session, which it never starts), and each idle stream held
            # a request slot for as long as its client liked. The protocol's answer for "no
            # stream here" is 405.
            await _no_stream(scope, receive, send)
            return
        caller = await _authenticated(Request(scope))
        if isinstance(caller, Response):
            await caller(scope, receive, send)
            return
        manager = await self._running_manager()
        await manager.handle_request({**scope, CALLER: caller}, receive, _no_store(send))

    async def _running_manager(self) -> StreamableHTTPSessionManager:
        """The SDK's request handler, started on the first request.

        Its task group must live as long as the process, and the web server runs without the
        ASGI lifespan (Django's handler has none), so it starts here, once, and stays."""
        async with self._starting:
            if self._manager is None:
                manager = StreamableHTTPSessionManager(
                    self.server,
                    stateless=True,
                    json_response=True,
                    max_request_body_size=settings.MAX_BODY_KB * 1024,
                    # The Host header is checked above against KB_ALLOWED_HOSTS, and a page in a
                    # browser cannot send a token it does not have: no DNS-rebinding exposure.
                    security_settings=TransportSecuritySettings(
                        enable_dns_rebinding_protection=False
                    ),
                )
                started = asyncio.Event()
                self._task = asyncio.get_running_loop().create_task(_hold(manager, started))
                await started.wait()
                self._manager = manager
        return self._manager


async def _no_stream(scope: Scope, receive: Receive, send: Send) -> None:
    message = "This MCP endpoint opens no event stream: send requests with POST."
    headers = {"Allow": "POST", **NO_STORE}
    await JSONResponse({"error": message}, status_code=405, headers=headers)(scope, receive, send)


def _no_store(send: Send) -> Send:
    """Every answer of the endpoint says ``Cache-Control: no-store``: tool results are document
    text as one user may read it, never for a browser's or a proxy's cache."""

    async def sending(message) -> None:
        if message["type"] == "http.response.start":
            headers = [
                (name, value)
                for name, value in message.get("headers", [])
                if name.lower() != b"cache-control"
            ]
            message = {**message, "headers": [*headers, (b"cache-control", b"private, no-store")]}
        await send(message)

    return sending


async def _hold(manager: StreamableHTTPSessionManager, started: asyncio.Event) -> None:
    async with manager.run():
        started.set()
        await asyncio.Event().wait()  # until the process ends


async def _authenticated(request: Request) -> Caller | Response:
    """Who the request runs as, or the answer refusing it (400 bad host, 401 bad token)."""
    # Outside Django's request handling: its host rule (KB_ALLOWED_HOSTS) is applied here.
    if not _allowed_host(request.headers.get("host", "")):
        message = "Bad Request: the Host header is not one of KB_ALLOWED_HOSTS."
        return PlainTextResponse(message, status_code=400, headers=NO_STORE)
    scheme, _, token = request.headers.get("authorization", "").partition(" ")
    token = token.strip() if scheme.lower() == "bearer" else ""
    if not token:
        return _unauthorized("An API token is required: Authorization: Bearer <token>.")
    user, wait = await in_thread(_authenticate)(token, _client_address(request))
    if wait:
        message = f"Too many wrong API tokens from here: try again in {wait} s."
        headers = {"Retry-After": str(wait), **NO_STORE}
        return JSONResponse({"error": message}, status_code=429, headers=headers)
    if user is None:
        return _unauthorized("The API token is not valid or has been revoked.")
    return Caller(user, settings.PUBLIC_URL or str(request.base_url).rstrip("/"))


def _client_address(request: Request) -> str:
    """As ``portal.addresses.client_address`` reads a Django request."""
    meta = HttpRequest()
    meta.META["REMOTE_ADDR"] = request.client.host if request.client else ""
    forwarded = request.headers.get("x-forwarded-for")
    if forwarded:
        meta.META["HTTP_X_FORWARDED_FOR"] = forwarded
    return client_address(meta)


def _caller(ctx: ServerRequestContext) -> Caller:
    request = ctx.request
    caller = request.scope.get(CALLER) if isinstance(request, Request) else None
    if caller is None:  # every request passes McpEndpoint first; this is a defect, not a 401
        raise PermissionError("MCP request without an authenticated caller")
    return caller


def _authenticate(token: str, address: str):
    """(the token's active owner or None: unknown, revoked, an inactive user; seconds to wait
    when this address sent too many wrong tokens), throttled and audited as the JSON API's."""
    request = HttpRequest()
    request.META["REMOTE_ADDR"] = address
    user, wait = authenticate_token(token, address, request)
    if user is not None:
        request.user = user
        audit.record(request, "token-use", PATH, token=token[: len(TOKEN_PREFIX) + 6] + "…")
    return user, wait


def _allowed_host(host: str) -> bool:
    domain, _ = split_domain_port(host)
    allowed = settings.ALLOWED_HOSTS
    if settings.DEBUG and not allowed:  # Django's own default in that case
        allowed = [".localhost", "127.0.0.1", "[::1]"]
    return bool(domain) and validate_host(domain, allowed)


def _unauthorized(message: str) -> JSONResponse:
    headers = {"WWW-Authenticate": 'Bearer realm="knowledge-belt"', **NO_STORE}
    return JSONResponse({"error": message}, status_code=401, headers=headers)
