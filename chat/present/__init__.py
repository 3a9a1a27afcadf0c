"""Showing a turn: how a message looks on the page and its JSON shape, for the pages, the JSON
API, MCP, the journal, the evaluation and the benchmarks (never for building the answer)."""
