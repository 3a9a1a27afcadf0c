"""The block structure every parser produces, and helpers they share.

A parsed document is a flat list of blocks in reading order. Heading blocks open sections; every
block carries the titles of its enclosing sections (``heading_path``) and the computed section
number (``section``, e.g. "2.1.3"), so that the chunker, the document viewer and the version diff
never need to know which format a document came from. Tables keep their header row and rows
apart so that the chunker can split a long table by rows and repeat the header.
"""

from __future__ import annotations

import os
import re
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import asdict, dataclass, field
from typing import Any, Literal, Protocol

from knowledge.text.language import search_config

BlockKind = Literal["heading", "text", "list", "table", "test_case", "code"]
BLOCK_KINDS: tuple[str, ...] = ("heading", "text", "list", "table", "test_case", "code")


class ParseError(Exception):
    """The file cannot be read as a document; the message is shown to users as is."""


class TimeBudgetExceeded(Exception):
    """Reading the file took longer than its ingest may (``time_budget``)."""


_budget = threading.local()


@contextmanager
def time_budget(seconds: float) -> Iterator[None]:
    """Parsers in this block check ``check_time_budget`` between pages (and the like): a file
    that takes too long stops at the next one. Celery's soft time limit is not enough alone:
    PyMuPDF's table finder catches every exception, the limit's included, and goes on."""
    previous = getattr(_budget, "deadline", None)
    _budget.deadline = time.monotonic() + seconds
    try:
        yield
    finally:
        _budget.deadline = previous


@contextmanager
def paused_time_budget() -> Iterator[None]:
    """The budget's clock stops in this block (a scan's recognition, which has a time limit of
    its own): the deadline moves on by the time spent here."""
    started = time.monotonic()
    try:
        yield
    finally:
        if getattr(_budget, "deadline", None) is not None:
            _budget.deadline += time.monotonic() - started


_memory = threading.Lock()
_memory_users = 0
_memory_saved: tuple[int, int] | None = None


@contextmanager
def memory_budget(megabytes: int) -> Iterator[None]:
    """The process may grow its address space by at most ``megabytes`` while this block runs (a
    parse): a file that would take more ends in ``MemoryError``, which its version reports in
    plain words, instead of the kernel's out-of-memory killer ending the worker (a 5-million-
    letter word took a worker to 20 GB). Parses running at once in threads of one process
    (``manage.py ingest --jobs``) share the budget; 0, or no ``RLIMIT_AS`` here: no limit."""
    global _memory_users, _memory_saved
    import resource  # Unix only; the ingest runs on Linux workers

    if megabytes <= 0:
        yield
        return
    with _memory:
        if _memory_users == 0:
            soft, hard = resource.getrlimit(resource.RLIMIT_AS)
            wanted = _address_space() + megabytes * 2**20
            if hard != resource.RLIM_INFINITY:
                wanted = min(wanted, hard)
            if soft == resource.RLIM_INFINITY or soft > wanted:
                resource.setrlimit(resource.RLIMIT_AS, (wanted, hard))
                _memory_saved = (soft, hard)
        _memory_users += 1
    try:
        yield
    finally:
        with _memory:
            _memory_users -= 1
            if _memory_users == 0 and _memory_saved is not None:
                resource.setrlimit(resource.RLIMIT_AS, _memory_saved)
                _memory_saved = None


def _address_space() -> int:
    """This process's address space in bytes now (Linux's /proc/self/statm)."""
    with open("/proc/self/statm") as statm:
        return int(statm.read().split()[0]) * os.sysconf("SC_PAGE_SIZE")


def check_time_budget() -> None:
    deadline = getattr(_budget, "deadline", None)
    if deadline is not None and time.monotonic() > deadline:
        raise TimeBudgetExceeded


@dataclass
class Table:
    """A table with one header row; cells are plain text (newlines inside a cell become <br>)."""

    header: list[str]
    rows: list[list[str]]

    def to_markdown(self, rows: list[list[str]] | None = None) -> str:
        """Markdown pipe table of the header and ``rows`` (all rows by default)."""
        body = self.rows if rows is None else rows
        width = max([1, len(self.header), *(len(r) for r in body)])
        header = _pad(self.header, width)
        lines = [_md_row(header), "| " + " | ".join("---" for _ in range(width)) + " |"]
        lines += [_md_row(_pad(row, width)) for row in body]
        return "\n".join(lines)


def _pad(cells: list[str], width: int) -> list[str]:
    return list(cells) + [""] * (width - len(cells))


def md_cell(text: str) -> str:
    """A cell's text made safe for a pipe table: pipes escaped, line breaks kept as <br>."""
    text = re.sub(r"[ \t]+", " ", text.replace("\r", "")).strip()
    return text.replace("|", "\\|").replace("\n", "<br>")


def _md_row(cells: list[str]) -> str:
    return "| " + " | ".join(md_cell(c) for c in cells) + " |"


@dataclass
class Block:
    kind: BlockKind
    text: str  # heading title; plain text; Markdown for tables, lists and code
    heading_path: list[str] = field(default_factory=list)  # enclosing section titles, root first
    section: str = ""  # number of the enclosing section ("2.1.3"); "" before the first heading
    level: int = 0  # heading level, 1 = top (heading blocks only)
    page: int | None = None  # 1-based page (PDF)
    sheet: str = ""  # sheet name (XLSX)
    row_start: int | None = None  # first and last spreadsheet row the block covers (XLSX)
    row_end: int | None = None
    table: Table | None = None  # for table and test_case blocks built from a table
    meta: dict[str, Any] = field(default_factory=dict)

    def to_dict(self) -> dict[str, Any]:
        data = asdict(self)
        if self.table is None:
            data.pop("table")
        return {
            k: v for k, v in data.items() if v not in (None, "", [], {}) or k in ("kind", "text")
        }

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> Block:
        data = dict(data)
        table = data.pop("table", None)
        return cls(**data, table=Table(**table) if table else None)


@dataclass
class ParsedDocument:
    title: str
    blocks: list[Block]
    language: str = "simple"  # a PostgreSQL text-search configuration: russian, english, simple
    metadata: dict[str, Any] = field(default_factory=dict)  # created/modified dates, author, ...
    warnings: list[str] = field(default_factory=list)

    def to_dict(self) -> dict[str, Any]:
        return {
            "title": self.title,
            "language": self.language,
            "metadata": self.metadata,
            "warnings": self.warnings,
            "blocks": [b.to_dict() for b in self.blocks],
        }

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> ParsedDocument:
        return cls(
            title=data.get("title", ""),
            language=data.get("language", "simple"),
            metadata=data.get("metadata", {}),
            warnings=data.get("warnings", []),
            blocks=[Block.from_dict(b) for b in data.get("blocks", [])],
        )

    @property
    def text_length(self) -> int:
        return sum(len(b.text) for b in self.blocks)


class Parser(Protocol):
    """One format. ``parse`` raises ParseError with a plain-words message for unreadable input."""

    def parse(self, data: bytes, *, filename: str) -> ParsedDocument: ...


class HeadingTracker:
    """Turns a sequence of heading levels into section numbers and heading paths.

    Numbers come from the tree of headings, never from numbers typed into the titles: a level-2
    heading after the second level-1 heading is "2.1". A heading that skips a level (1 -> 3)
    gets the missing level counted as 1, as Word does.
    """

    def __init__(self) -> None:
        self._counters: list[int] = []
        self._titles: list[str] = []

    def open(self, level: int, title: str) -> tuple[str, list[str]]:
        """Register a heading; returns its section number and its path (including itself)."""
        level = max(1, level)
        del self._counters[level:]
        del self._titles[level:]
        while len(self._counters) < level:
            self._counters.append(0)
            self._titles.append("")
        self._counters[level - 1] += 1
        for i in range(level - 1):
            if self._counters[i] == 0:
                self._counters[i] = 1
        self._titles[level - 1] = title
        return self.section, self.path

    @property
    def section(self) -> str:
        return ".".join(str(c) for c in self._counters)

    @property
    def path(self) -> list[str]:
        return [t for t in self._titles if t]

    @property
    def level(self) -> int:
        return len(self._counters)


_TYPED_NUMBER = re.compile(r"^\s*(?:\d+(?:\.\d+)*\.?|[IVXLC]+\.)\s+")


def strip_typed_number(title: str) -> str:
    """ "2.1 Scope" -> "Scope": a number typed into a heading is not part of its title."""
    stripped = _TYPED_NUMBER.sub("", title).strip()
    return stripped or title.strip()


def detect_language(text: str) -> str:
    """The text-search configuration for a text: russian, english, or simple (anything else);
    the one detector of the code base decides (``knowledge.text.language``)."""
    return search_config(text)


_TEST_CASE_WORDS = re.compile(
    r"(тест[- ]?кейс|test[- ]?case|сценари[йи] тест|тестовый сценарий|контрольный пример)", re.I
)
_STEP_WORDS = re.compile(r"(шаг|действи|step|action|порядок|procedure|входные|input)", re.I)
_EXPECTED_WORDS = re.compile(r"(ожидаем|expected|результат|result)", re.I)


def looks_like_test_case(header: list[str], caption: str = "") -> bool:
    """A table is a test case when it has steps and expected-result columns, or says so."""
    joined = " ".join(header)
    if _TEST_CASE_WORDS.search(caption) or _TEST_CASE_WORDS.search(joined):
        return True
    return bool(_STEP_WORDS.search(joined) and _EXPECTED_WORDS.search(joined))


def is_test_case_title(title: str) -> bool:
    return bool(_TEST_CASE_WORDS.search(title))


def clean_text(text: str) -> str:
    """Whitespace normalised inside lines, blank lines collapsed, soft hyphens removed."""
    text = text.replace("\u00ad", "").replace("\r\n", "\n").replace("\r", "\n").replace("\xa0", " ")
    text = re.sub(r"[ \t\f\v]+", " ", text)
    text = re.sub(r" *\n *", "\n", text)
    text = re.sub(r"\n{3,}", "\n\n", text)
    return text.strip()
