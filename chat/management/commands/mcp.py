"""``manage.py mcp [--user NAME]``: the MCP server on stdio, for a coding agent on this machine.

It answers as one user, named by ``--user`` or ``KB_MCP_USER``, and refuses to start without
one: an agent never gets a staff view by default. The same tools are served over HTTP at
``/mcp`` to holders of a personal API token.
"""

from __future__ import annotations

from typing import Any

import anyio
from django.conf import settings
from django.contrib.auth import get_user_model
from django.core.management.base import BaseCommand, CommandError
from mcp.server import Server
from mcp.server.stdio import stdio_server

from chat.mcp.server import Caller, build_server


class Command(BaseCommand):
    help = "Serve the portal's MCP tools (search, ask, ask_<kind>) on stdio, as one user."

    def add_arguments(self, parser: Any) -> None:
        parser.add_argument(
            "--user", default="", help="answer as this user (default: the KB_MCP_USER setting)"
        )

    def handle(self, *args: Any, **options: Any) -> None:
        username = options["user"] or settings.MCP_USER
        if not username:
            raise CommandError(
                "name the user the MCP server answers as: --user NAME or KB_MCP_USER "
                "(it reads only what that user may read)"
            )
        user = get_user_model().objects.filter(username=username, is_active=True).first()
        if user is None:
            raise CommandError(f"no active user {username!r}")
        caller = Caller(user, public_url())
        # stdout is the protocol's wire: anything said to a person goes to stderr.
        self.stderr.write(
            f"MCP server on stdio, answering as {username}; links on {caller.base_url}"
        )
        anyio.run(serve_stdio, build_server(lambda ctx: caller))


def public_url() -> str:
    """The portal's address for links: KB_PUBLIC_URL, else where ``./kb run`` serves it."""
    if settings.PUBLIC_URL:
        return settings.PUBLIC_URL
    host = settings.RUN_HOST if settings.RUN_HOST not in ("", "0.0.0.0", "::") else "127.0.0.1"
    return f"http://{host}:{settings.RUN_PORT}"


async def serve_stdio(server: Server) -> None:
    async with stdio_server() as (read_stream, write_stream):
        await server.run(read_stream, write_stream, server.create_initialization_options())
