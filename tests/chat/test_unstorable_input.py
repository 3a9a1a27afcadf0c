"""Text PostgreSQL cannot store (a NUL character, a lone UTF-16 surrogate) is refused where it
comes in, before anything is stored: 400 from the JSON API, a tool error from MCP (over HTTP and
on stdio), never a 500 with PostgreSQL's words and an empty conversation left behind."""

from __future__ import annotations

import json
import subprocess
import sys

import httpx2
import pytest

from chat.models import Conversation, Message
from portal.api_auth import create_token
from tests.conftest import ROOT, PortalServer, subprocess_env

LONE_SURROGATE = '{"question": "пароль \\ud800 от прода"}'  # valid JSON, unstorable text
NUL = '{"question": "что такое \\u0000 токен"}'


@pytest.mark.django_db
@pytest.mark.parametrize("body", [LONE_SURROGATE, NUL], ids=["surrogate", "nul"])
def test_the_json_api_answers_400_and_stores_nothing(client, bob, body):
    _, token = create_token(bob, "agent")
    response = client.post(
        "/api/v1/ask",
        data=body,
        content_type="application/json",
        HTTP_AUTHORIZATION=f"Bearer {token}",
    )
    assert response.status_code == 400
    assert "cannot be stored" in response.content.decode() or "NUL" in response.content.decode()
    assert "PostgreSQL" not in response.content.decode()
    assert not Conversation.objects.exists() and not Message.objects.exists()


@pytest.mark.django_db
def test_raw_bytes_of_a_surrogate_in_the_body_are_refused_too(client, bob):
    _, token = create_token(bob, "agent")
    body = '{"question": "пароль '.encode() + b"\xed\xa0\x80" + b'"}'
    response = client.post(
        "/api/v1/ask",
        data=body,
        content_type="application/json",
        HTTP_AUTHORIZATION=f"Bearer {token}",
    )
    assert response.status_code == 400
    assert not Conversation.objects.exists()


def _mcp_call(url: str, token: str, arguments: dict) -> dict:
    headers = {
        "Authorization": f"Bearer {token}",
        "Accept": "application/json, text/event-stream",
        "Content-Type": "application/json",
        "MCP-Protocol-Version": "2025-06-18",
    }
    payload = {
        "jsonrpc": "2.0",
        "id": 1,
        "method": "tools/call",
        "params": {"name": "ask", "arguments": arguments},
    }
    # json.dumps writes a lone surrogate as the escape \ud800: what an agent would send.
    response = httpx2.post(url + "/mcp", content=json.dumps(payload), headers=headers, timeout=60)
    return {"status": response.status_code, "headers": response.headers, "body": response.json()}


def test_mcp_over_http_answers_a_tool_error_and_stores_nothing(transactional_db, bob):
    _, token = create_token(bob, "agent")
    server = PortalServer()
    try:
        nul = _mcp_call(server.url, token, {"question": "что такое \x00 токен"})
        surrogate = _mcp_call(server.url, token, {"question": "пароль \ud800 от прода"})
    finally:
        server.stop()
    assert nul["status"] == 200, nul
    result = nul["body"]["result"]
    assert result["isError"] is True and "cannot be stored" in result["content"][0]["text"]
    # The SDK's own JSON reader refuses a lone surrogate first: a JSON-RPC parse error.
    assert (
        surrogate["status"] in (200, 400)
        and "error" in surrogate["body"]
        or (surrogate["body"]["result"]["isError"])
    )
    for answer in (nul, surrogate):
        assert "PostgreSQL" not in json.dumps(answer["body"])
        assert "no-store" in answer["headers"]["cache-control"]
    assert not Conversation.objects.exists() and not Message.objects.exists()


def test_mcp_on_stdio_answers_a_tool_error_and_stores_nothing(transactional_db, bob):
    requests = [
        {
            "jsonrpc": "2.0",
            "id": 0,
            "method": "initialize",
            "params": {
                "protocolVersion": "2025-06-18",
                "capabilities": {},
                "clientInfo": {"name": "test", "version": "1"},
            },
        },
        {"jsonrpc": "2.0", "method": "notifications/initialized"},
        {
            "jsonrpc": "2.0",
            "id": 1,
            "method": "tools/call",
            "params": {"name": "ask", "arguments": {"question": "что такое \x00 токен"}},
        },
    ]
    process = subprocess.Popen(
        [sys.executable, "manage.py", "mcp", "--user", "bob"],
        cwd=ROOT,
        env=subprocess_env(KB_DEMO="0"),
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        text=True,
    )
    replies = []
    try:
        # One request at a time, stdin kept open: the server ends at the end of its input.
        for request in requests:
            process.stdin.write(json.dumps(request) + "\n")
            process.stdin.flush()
            if "id" in request:
                replies.append(json.loads(process.stdout.readline()))
    finally:
        process.stdin.close()
        process.wait(30)
    result = replies[-1]["result"]
    assert replies[-1]["id"] == 1 and result["isError"] is True
    assert "cannot be stored" in result["content"][0]["text"]
    assert "PostgreSQL" not in json.dumps(replies)
    assert not Conversation.objects.exists() and not Message.objects.exists()
