"""MCP for coding agents: the portal's search and answers as MCP tools, on stdio and at /mcp."""
