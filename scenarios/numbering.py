"""A document's own section numbering, recovered from its parsed blocks (no Django here).

The parser numbers headings by their levels. A GOST document often has every heading at one
level (the ТЗ: "4.1.1 Требования к составу выполняемых функций" parsed as section "14"), some
sub-headings typed as plain paragraphs ("4.1.2. Требования к организации входных данных") and
paragraphs styled as headings ("Для клиента:"). Its table of contents, however, carries the real
numbers. So:

- a document whose headings have levels, or that has no table of contents (a wiki page with
  one heading), keeps the parser's numbers;
- a flat one takes each heading's number from its table of contents, matched by title; a heading
  the contents do not list is a paragraph of the current section, unless it is a short title in
  capitals ("ПРИЛОЖЕНИЕ 1"), which opens an unnumbered section;
- a paragraph that starts with a dotted number and reads like a title opens a section too.

Each section knows the blocks it spans, so a chunk (which knows its blocks) finds its section.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

_TOC_LINE = re.compile(r"^(\d+(?:\.\d+)*)\.?\s+(\S.*?)\s*\.{0,}\s*(\d{1,3})$")
_INLINE_HEADING = re.compile(r"^(\d+(?:\.\d+)+)\.?\s+([^\W\d].{2,150})$")
_ITEM = re.compile(r"^\s*(?:[-–—•*]|\d{1,2}[).])\s+(.+)$")


@dataclass
class Section:
    """A numbered part of a document: its own text only (subsections are sections of their own)."""

    number: str  # the document's own number ("4.1.1"); "" for an unnumbered part
    title: str
    level: int  # 1 for "4", 2 for "4.1", ...
    path: list[str]  # the titles from the top-level section down to this one
    first_block: int  # index of the heading (or first) block
    last_block: int  # index of the last block before the next section
    lines: list[str] = field(default_factory=list)  # the body, one paragraph or list item a line

    @property
    def text(self) -> str:
        return "\n".join(self.lines)

    @property
    def label(self) -> str:
        return f"{self.number} {self.title}".strip()

    def contains(self, block_index: int) -> bool:
        return self.first_block <= block_index <= self.last_block


def normalize_title(text: str) -> str:
    """Lower case, letters and digits only: how a heading and its contents line are compared."""
    return " ".join(re.findall(r"[^\W_]+", text.lower().replace("ё", "е")))


def toc_numbers(blocks: Sequence[dict[str, Any]]) -> dict[str, str]:
    """The table of contents before the first heading: normalized title -> number."""
    numbers: dict[str, str] = {}
    for block in blocks:
        if block.get("kind") == "heading":
            break
        if block.get("kind") != "text":
            continue
        match = _TOC_LINE.match(" ".join(block.get("text", "").split()))
        if match:
            numbers.setdefault(normalize_title(match[2]), match[1])
    return numbers


def _is_caps_title(text: str) -> bool:
    letters = [c for c in text if c.isalpha()]
    return bool(letters) and len(text) <= 80 and all(c.isupper() for c in letters)


def _has_levels(blocks: Sequence[dict[str, Any]]) -> bool:
    return any(b.get("kind") == "heading" and int(b.get("level") or 1) > 1 for b in blocks)


def body_lines(block: dict[str, Any]) -> list[str]:
    """A block as lines of text: list items one each, a table's rows one each."""
    text = block.get("text", "")
    if block.get("kind") in ("list", "table", "test_case"):
        lines = [line for line in text.splitlines() if line.strip()]
        if block.get("kind") != "list":
            lines = [ln for ln in lines if not re.fullmatch(r"[|\s:-]+", ln)]
        return [" ".join(ln.split()) for ln in lines]
    return [" ".join(text.split())] if text.strip() else []


def sections(blocks: Sequence[dict[str, Any]]) -> list[Section]:
    """The document's sections in reading order, with their own numbers (see the module doc)."""
    toc = {} if _has_levels(blocks) else toc_numbers(blocks)
    # Headings with levels, or no contents to take numbers from: the parser's numbers.
    leveled = not toc
    found: list[Section] = []
    current: Section | None = None
    stack: list[Section] = []  # open sections, for titles' paths

    def open_section(number: str, title: str, level: int, index: int) -> Section:
        nonlocal current
        if current is not None:
            current.last_block = index - 1
        while stack and stack[-1].level >= level:
            stack.pop()
        path = [s.title for s in stack] + [title]
        current = Section(number, title, level, path, index, index)
        stack.append(current)
        found.append(current)
        return current

    started = False
    for index, block in enumerate(blocks):
        kind, text = block.get("kind"), " ".join(block.get("text", "").split())
        if kind == "heading":
            started = True
            if leveled:
                number = block.get("section", "")
                open_section(number, text, int(block.get("level") or 1), index)
                continue
            number = toc.get(normalize_title(text))
            if number is not None:
                open_section(number, text, number.count(".") + 1, index)
                continue
            if _is_caps_title(text):
                open_section("", text, 1, index)
                continue
        if not started:
            continue  # title page and table of contents
        match = _INLINE_HEADING.match(text) if kind == "text" else None
        if match and not leveled and current is not None and _follows(current, match[1]):
            open_section(match[1], match[2].strip(), match[1].count(".") + 1, index)
            continue
        if current is not None:
            current.lines += body_lines(block)
            current.last_block = index
    return found


def _follows(current: Section, number: str) -> bool:
    """An inline "4.1.2. Title" continues the numbering around it (not a stray figure)."""
    top = number.split(".")[0]
    return bool(current.number) and current.number.split(".")[0] == top


def items(lines: Sequence[str]) -> list[tuple[str, str]]:
    """A section body as statements: (lead-in, statement). A line ending with ":" is a lead-in
    for the lines after it; list markers are dropped."""
    lead = ""
    statements: list[tuple[str, str]] = []
    for line in lines:
        match = _ITEM.match(line)
        text = (match[1] if match else line).strip()
        if not text:
            continue
        if text.endswith(":"):
            lead = text.rstrip(":").strip()
            continue
        if not match:
            lead = ""  # a plain sentence ends the list the lead-in introduced
        statements.append((lead, text.rstrip(";.").strip()))
    return statements


def section_of(found: Sequence[Section], block_index: int) -> Section | None:
    """The innermost section holding the block (sections do not overlap: the last one opened)."""
    for section in found:
        if section.contains(block_index):
            return section
    return None
