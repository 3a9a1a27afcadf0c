"""MCP for coding agents, driven by the official SDK's own client: over stdio (``manage.py mcp``
as a child process) and over streamable HTTP at /mcp of the real web server, with API tokens."""

from __future__ import annotations

import asyncio
import contextlib
import subprocess
import sys

import httpx2
import pytest
from mcp import Client, StdioServerParameters
from mcp.client.streamable_http import streamable_http_client

from chat.answer.wording import language_of, refusal
from chat.mcp.tools import call_tool
from knowledge.ingest.pipeline import ingest_version
from knowledge.ingest.registration import register_file
from knowledge.models import Document, Source
from portal.api_auth import create_token
from tests.chat.conftest import ingest_small_kb
from tests.conftest import ROOT, PortalServer, subprocess_env

pytestmark = pytest.mark.django_db
# The web server and the stdio server are other processes: they see committed rows only.
other_process = pytest.mark.django_db(transaction=True)

WIKI_QUESTION = "Что такое верификация и валидация?"
OUT_OF_DOMAIN = "How do I bake a chocolate cake without eggs?"
BILLING = "Как перезапустить сервис биллинга?"
PUBLIC_URL = "https://kb.example.test"


def run_in_thread(coroutine_function):
    """``asyncio.run`` in a thread of its own: the browser tests' Playwright keeps an event loop
    running in the main thread for the whole session, where ``asyncio.run`` refuses to start."""
    import threading

    outcome: dict = {}

    def target() -> None:
        try:
            outcome["value"] = asyncio.run(coroutine_function())
        except BaseException as exc:  # noqa: BLE001 - re-raised in the test's thread
            outcome["error"] = exc

    thread = threading.Thread(target=target)
    thread.start()
    thread.join()
    if "error" in outcome:
        raise outcome["error"]
    return outcome["value"]


@pytest.fixture
def incidents(bob) -> Source:
    """A restricted tracker source: bob is its only reader."""
    source = Source.objects.create(name="Incidents", kind=Source.Kind.TRACKER, restricted=True)
    source.readers.add(bob)
    text = (
        "INC-7. Сервис биллинга перезапускается командой systemctl restart billing на узле app-3."
    )
    ingest_version(register_file(source, "INC-7.txt", text.encode(), enqueue=False).version.pk)
    return source


def stdio_client(*args: str, **env: str) -> Client:
    command = StdioServerParameters(
        command=sys.executable,
        args=["manage.py", "mcp", *args],
        env=subprocess_env(**env),
        cwd=ROOT,
    )
    return Client(command)


def http_client(server: PortalServer, token: str | None, **options) -> Client:
    headers = {"Authorization": f"Bearer {token}"} if token else {}
    http = httpx2.AsyncClient(headers=headers, timeout=httpx2.Timeout(30.0, read=120.0))
    return Client(streamable_http_client(server.url + "/mcp", http_client=http), **options)


async def tool_names(client: Client) -> set[str]:
    return {tool.name for tool in (await client.list_tools()).tools}


def wiki_document_ids() -> set[int]:
    return set(Document.objects.filter(source__kind="wiki").values_list("pk", flat=True))


@other_process
def test_stdio_server_answers_as_the_named_user_with_citations_and_plain_refusals(
    tmp_path, bob, incidents
):
    ingest_small_kb(tmp_path)

    async def session() -> dict:
        async with stdio_client("--user", "bob", KB_PUBLIC_URL=PUBLIC_URL) as client:
            return {
                "tools": await tool_names(client),
                "wiki": await client.call_tool("ask_wiki", {"question": WIKI_QUESTION}),
                "refusal": await client.call_tool("ask", {"question": OUT_OF_DOMAIN}),
                "search": await client.call_tool("search", {"query": WIKI_QUESTION, "k": 3}),
                "bad": await client.call_tool("search", {"query": WIKI_QUESTION, "k": 0}),
            }

    results = run_in_thread(session)
    # One ask_<kind> per kind bob may read: the wiki, the specifications, his tracker source.
    assert results["tools"] == {"search", "ask", "ask_wiki", "ask_specs", "ask_tracker"}

    wiki = results["wiki"]
    assert not wiki.is_error
    answer = wiki.structured_content
    assert answer["refused"] is False and answer["answer"]
    assert any(source["cited"] for source in answer["sources"])
    assert {s["document_id"] for s in answer["sources"]} <= wiki_document_ids()
    for source in answer["sources"]:
        assert source["url"].startswith(PUBLIC_URL + "/documents/")
    assert "Верификация" in wiki.content[0].text  # the same result as text for the model

    refused = results["refusal"]
    assert not refused.is_error  # a refusal is an answer, not a failure
    assert refused.structured_content["refused"] is True
    assert refused.structured_content["answer"] == refusal(language_of(OUT_OF_DOMAIN))

    hits = results["search"].structured_content["results"]
    assert 1 <= len(hits) <= 3 and hits[0]["url"].startswith(PUBLIC_URL + "/documents/")
    assert results["bad"].is_error and "k must be" in results["bad"].content[0].text


def test_stdio_server_refuses_to_start_without_a_user():
    env = subprocess_env()
    env.pop("KB_MCP_USER", None)
    done = subprocess.run(
        [sys.executable, "manage.py", "mcp"],
        cwd=ROOT,
        env=env,
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode != 0
    assert "--user NAME or KB_MCP_USER" in done.stderr and done.stdout == ""


@other_process
def test_http_server_serves_each_token_only_what_its_owner_may_read(tmp_path, bob, eve, incidents):
    ingest_small_kb(tmp_path)
    _, bob_token = create_token(bob, "agent")
    _, eve_token = create_token(eve, "agent")
    server = PortalServer()
    try:

        async def as_bob() -> dict:
            async with http_client(server, bob_token) as client:
                return {
                    "protocol": client.protocol_version,
                    "tools": await tool_names(client),
                    "wiki": await client.call_tool("ask_wiki", {"question": WIKI_QUESTION}),
                    "tracker": await client.call_tool("ask_tracker", {"question": BILLING}),
                }

        async def as_eve() -> dict:
            # A client of the handshake era (2025-11-25), as most agents speak today.
            async with http_client(server, eve_token, mode="legacy") as client:
                return {
                    "protocol": client.protocol_version,
                    "tools": await tool_names(client),
                    "ask": await client.call_tool("ask", {"question": BILLING}),
                    "search": await client.call_tool("search", {"query": BILLING}),
                    "named": await client.call_tool(
                        "search", {"query": BILLING, "source": "Incidents"}
                    ),
                    "tracker": await client.call_tool("ask_tracker", {"question": BILLING}),
                }

        bob_results = run_in_thread(as_bob)
        eve_results = run_in_thread(as_eve)
    finally:
        server.stop()

    assert bob_results["protocol"] == "2026-07-28" and eve_results["protocol"] == "2025-11-25"
    assert bob_results["tools"] == {"search", "ask", "ask_wiki", "ask_specs", "ask_tracker"}
    wiki = bob_results["wiki"].structured_content
    assert wiki["refused"] is False and any(s["cited"] for s in wiki["sources"])
    # No KB_PUBLIC_URL: links are built on the address the request came to.
    assert wiki["sources"][0]["url"].startswith(server.url + "/documents/")
    tracker = bob_results["tracker"].structured_content
    assert tracker["refused"] is False and tracker["sources"][0]["document"] == "INC-7"

    assert eve_results["tools"] == {"search", "ask", "ask_wiki", "ask_specs"}
    assert eve_results["ask"].structured_content["refused"] is True
    found = eve_results["search"].structured_content["results"]
    assert all(hit["source"] != "Incidents" for hit in found)
    assert eve_results["named"].is_error and "No source 'Incidents'" in (
        eve_results["named"].content[0].text
    )
    assert eve_results["tracker"].is_error


@other_process
def test_http_endpoint_answers_401_without_a_valid_token(bob):
    _, token = create_token(bob, "agent")
    server = PortalServer()
    try:
        body = {"jsonrpc": "2.0", "id": 1, "method": "ping"}
        headers = {"Accept": "application/json, text/event-stream"}
        with httpx2.Client(base_url=server.url, headers=headers, timeout=30) as http:
            missing = http.post("/mcp", json=body)
            wrong = http.post("/mcp", json=body, headers={"Authorization": "Bearer kb_nope"})
            good = http.post("/mcp", json=body, headers={"Authorization": f"Bearer {token}"})
    finally:
        server.stop()
    assert missing.status_code == 401 and "API token is required" in missing.json()["error"]
    assert missing.headers["www-authenticate"].startswith("Bearer")
    assert wrong.status_code == 401 and "not valid" in wrong.json()["error"]
    assert good.status_code == 200


@other_process
def test_every_mcp_answer_says_no_store(bob):
    """Tool results are document text as one user may read it: no browser or proxy keeps them."""
    _, token = create_token(bob, "agent")
    server = PortalServer()
    try:
        headers = {
            "Accept": "application/json, text/event-stream",
            "Authorization": f"Bearer {token}",
        }
        listing = {"jsonrpc": "2.0", "id": 1, "method": "tools/list"}
        with httpx2.Client(base_url=server.url, headers=headers, timeout=30) as http:
            answers = [
                http.post("/mcp", json={"jsonrpc": "2.0", "id": 1, "method": "ping"}),
                http.post("/mcp", json=listing),
                http.post("/mcp", json=listing, headers={"Authorization": "Bearer kb_nope"}),
            ]
    finally:
        server.stop()
    assert [a.status_code for a in answers] == [200, 200, 401]
    assert all("no-store" in a.headers.get("cache-control", "") for a in answers)


def test_ask_wiki_answers_from_the_wiki_when_the_question_names_a_specification(tmp_path, bob):
    ingest_small_kb(tmp_path)
    question = "Что такое верификация согласно ПМИ?"  # ПМИ: the test programme, a specification
    everywhere = call_tool(bob, "ask", {"question": question}, base_url="")
    assert everywhere["sources"][0]["document"] == "Программа и методика испытаний"
    wiki = call_tool(bob, "ask_wiki", {"question": question}, base_url="")
    assert wiki["refused"] is False and wiki["sources"]
    assert {s["document_id"] for s in wiki["sources"]} <= wiki_document_ids()


@other_process
def test_an_event_stream_get_is_refused_at_once_and_holds_no_slot(bob):
    """Issue 40, row 2: idle ``GET /mcp`` streams of one token held every request slot. The
    server is stateless and answers in JSON: it has no stream to offer, and says so (405)."""
    _, token = create_token(bob, "agent")
    server = PortalServer(KB_WEB_CONCURRENCY="2")
    headers = {"Accept": "text/event-stream", "Authorization": f"Bearer {token}"}
    try:
        with (
            httpx2.Client(base_url=server.url, timeout=30) as http,
            contextlib.ExitStack() as open_,
        ):
            # Opened as streams and left open, as the attack held them (a plain get would wait
            # for the end of a stream that never ends).
            streams = [
                open_.enter_context(http.stream("GET", "/mcp", headers=headers)) for _ in range(3)
            ]
            page = http.get("/login/")
            slots = http.get("/healthz").json().get("slots", {})
            if streams[0].status_code == 405:
                streams[0].read()  # an answer, not a stream: its body is all there
    finally:
        server.stop()
    assert [s.status_code for s in streams] == [405, 405, 405]
    assert streams[0].headers["allow"] == "POST" and "POST" in streams[0].json()["error"]
    assert "no-store" in streams[0].headers["cache-control"]
    assert page.status_code == 200 and slots["pages"]["in_use"] == 0
