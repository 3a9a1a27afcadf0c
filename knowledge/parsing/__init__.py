"""Parsing: bytes of one file -> a ParsedDocument of blocks (one module per format)."""

from __future__ import annotations

from knowledge.parsing.base import (
    BLOCK_KINDS,
    Block,
    HeadingTracker,
    ParsedDocument,
    ParseError,
    Parser,
    Table,
    detect_language,
)

__all__ = [
    "BLOCK_KINDS",
    "Block",
    "HeadingTracker",
    "ParseError",
    "ParsedDocument",
    "Parser",
    "Table",
    "detect_language",
]
