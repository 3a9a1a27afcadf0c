"""Which ``ask_<tool>`` tools a user is offered: sources marked for MCP, by tool name."""

from __future__ import annotations

import pytest

from chat.mcp.tools import kind_tools
from knowledge.models import Source

pytestmark = pytest.mark.django_db


def test_tools_follow_the_sources_marked_for_mcp_and_their_tool_names(bob):
    wiki = Source.objects.create(name="QA Bible", kind="wiki")
    Source.objects.create(name="Team wiki", kind="wiki", priority=2)
    tickets = Source.objects.create(name="Closed tickets", kind="tracker", mcp_tool="support")
    Source.objects.create(name="Specs", kind="specs", mcp_listed=False)
    Source.objects.create(name="Board", kind="checklists", is_public=False, restricted=True)
    tools = kind_tools(bob)
    assert sorted(tools) == ["ask_support", "ask_wiki"]
    assert tools["ask_wiki"].names == ["QA Bible", "Team wiki"]  # one tool, cascade order
    assert tools["ask_support"].source_ids == [tickets.pk]
    assert "QA Bible" in tools["ask_wiki"].spec().description
    wiki.mcp_listed = False
    wiki.save()
    assert kind_tools(bob)["ask_wiki"].names == ["Team wiki"]


@pytest.mark.parametrize(
    ("tool", "arguments"),
    [
        ("ask", {"question": ["a"]}),
        ("ask", {"question": float("nan")}),
        ("ask", {"question": "x", "profile": ["Draft test cases"]}),
        ("search", {"query": {"q": "a"}}),
        ("search", {"query": "release", "source": ["QA Bible"]}),
    ],
)
def test_tools_refuse_arguments_that_are_not_text(bob, tool, arguments):
    from chat.mcp.tools import ToolError, call_tool
    from chat.models import Message

    Source.objects.create(name="QA Bible", kind="wiki")
    with pytest.raises(ToolError, match="must be text|is required"):
        call_tool(bob, tool, arguments, base_url="http://testserver")
    assert not Message.objects.exists()
