"""Markdown (.md), including GitBook exports: headings, text, lists, code and pipe tables.

markdown-it-py (CommonMark plus pipe tables) does the parsing, so emphasis, escapes, entities
and setext headings follow the standard rather than our regular expressions. Raw HTML, which
GitBook writes into pages and even into table cells, goes through markdownify. Text blocks keep
absolute links as Markdown links (the URL is often the answer on a wiki's link pages); headings
and table cells keep only the link text, as a cell's text must stay short and plain.
"""

from __future__ import annotations

import re
from collections.abc import Iterator, Sequence

from bs4 import BeautifulSoup, Tag
from markdown_it import MarkdownIt
from markdown_it.token import Token
from markdownify import markdownify

from knowledge.parsing.base import (
    Block,
    BlockKind,
    HeadingTracker,
    ParsedDocument,
    ParseError,
    Table,
    check_time_budget,
    clean_text,
    detect_language,
    strip_typed_number,
)
from knowledge.parsing.text import NO_TEXT, decode_text, title_from_filename

_MD = MarkdownIt("commonmark").enable("table")
# Links stay as written: the default normalisation percent-encodes Cyrillic URLs (unreadable in
# an answer) and costs a sixth of the parse time on a wiki full of links.
_MD.normalizeLink = lambda url: url  # type: ignore[method-assign]
_FRONT_MATTER = re.compile(r"\A---[ \t]*\n(.*?)\n(?:---|\.\.\.)[ \t]*(?:\n|\Z)", re.S)
_FRONT_MATTER_LINE = re.compile(r"^([A-Za-z_][\w-]*)\s*:\s*(.*?)\s*$")
_FENCE = re.compile(r"^ {0,3}(`{3,}|~{3,})")
# GitBook's Liquid-like tags: {% hint style="info" %} ... {% endhint %}, {% tab title="..." %}...
# What is between "{%" and the next "%}" (found with str.find: a line of "{%" with no "%}" is
# read once, where one pattern over the line backtracked for minutes on 80 KB of them).
_GITBOOK_TAG = re.compile(r"-?\s*(\w[\w-]*)(.*?)-?", re.S)
_KEPT_ATTRIBUTE = {"tab": "title", "embed": "url"}  # the attribute of a tag that is content
# A name is tried only where one begins, and each part stops at a character the next cannot
# start with: linear, whatever the text.
_TAG_ATTR = re.compile(r"""(?<!\w)(\w++)\s*+=\s*+["']([^"']*+)["']""")
_RELATIVE_LINK = re.compile(r"\[([^\[\]]*+)\]\((?!https?:|ftp:|mailto:)[^()\[\]]*+\)", re.I)
_BR = re.compile(r"^<br\s*/?>$", re.I)
_ABSOLUTE_URL = re.compile(r"^(?:https?|ftp|mailto):", re.I)
_HTML_STRIP_ALWAYS = ["b", "strong", "i", "em", "code", "img", "u", "mark", "s", "del"]
# HTML nested deeper than this is refused: BeautifulSoup and markdownify walk the tree by
# recursion, and 100,000 nested <div> ended in a RecursionError after 20 s. The demo wiki's
# deepest is 5.
MAX_HTML_DEPTH = 100
_HTML_TAG = re.compile(r"<(/?)([A-Za-z][\w:-]*+)[^<>]*+>")
_VOID_TAGS = frozenset(
    ("area", "base", "br", "col", "embed", "hr", "img", "input", "link", "meta", "param")
    + ("source", "track", "wbr")
)


class MarkdownParser:
    """Parser for Markdown pages: one block per heading, paragraph, list, table or code block."""

    def parse(self, data: bytes, *, filename: str) -> ParsedDocument:
        """Parse a Markdown page; ``filename`` is its path relative to the source root."""
        source, _encoding = decode_text(data)
        source = source.replace("\r\n", "\n").replace("\r", "\n")
        front_matter, source = _split_front_matter(source)
        builder = _Builder()
        builder.add(_MD.parse(_strip_gitbook_tags(source)))
        if not any(b.text for b in builder.blocks):
            raise ParseError(NO_TEXT)
        metadata: dict[str, object] = {"filename": filename}
        if front_matter:
            metadata["front_matter"] = front_matter
        if front_matter.get("description"):
            metadata["description"] = front_matter["description"]
        title = builder.first_h1 or front_matter.get("title") or title_from_filename(filename)
        return ParsedDocument(
            title=title,
            blocks=builder.blocks,
            language=detect_language("\n".join(b.text for b in builder.blocks)),
            metadata=metadata,
        )


def _split_front_matter(source: str) -> tuple[dict[str, str], str]:
    """YAML front matter's simple ``key: value`` pairs, and the page without it.

    Only scalar pairs are read (title, description, ...): that is all a page's metadata needs,
    and it spares a YAML dependency. A leading ``---`` block with no such pair is a rule, kept.
    """
    match = _FRONT_MATTER.match(source)
    if not match:
        return {}, source
    pairs = {}
    for line in match.group(1).splitlines():
        if m := _FRONT_MATTER_LINE.match(line):
            pairs[m.group(1).lower()] = m.group(2).strip("\"'")
    if not pairs:
        return {}, source
    return pairs, source[match.end() :]


def _strip_gitbook_tags(source: str) -> str:
    """GitBook tags removed outside code fences, what they wrap kept.

    A tab's title and an embed's URL are content, so they stay as a line of their own; a tag
    alone on its line becomes a blank line, which keeps a hint's text a paragraph of its own.
    """
    lines = source.split("\n")
    fence = ""
    for i, line in enumerate(lines):
        if m := _FENCE.match(line):
            marker = m.group(1)
            if not fence:
                fence = marker
            elif (
                marker[0] == fence[0] and len(marker) >= len(fence) and not line[m.end() :].strip()
            ):
                fence = ""
            continue
        if not fence and "{%" in line:
            lines[i] = _without_tags(line)
    return "\n".join(lines)


def _without_tags(line: str) -> str:
    """The line with each ``{% name ... %}`` replaced (``_tag_replacement``)."""
    parts, position = [], 0
    while (start := line.find("{%", position)) != -1:
        end = line.find("%}", start + 2)
        if end == -1:
            break  # no tag closes on this line: the rest stays as it is
        tag = _GITBOOK_TAG.fullmatch(line, start + 2, end)
        if tag is None:  # "{% %}" names nothing: kept
            parts.append(line[position : start + 2])
            position = start + 2
            continue
        parts += [line[position:start], _tag_replacement(tag)]
        position = end + 2
    parts.append(line[position:])
    return "".join(parts)


def _tag_replacement(match: re.Match[str]) -> str:
    attrs = dict(_TAG_ATTR.findall(match.group(2)))
    kept = attrs.get(_KEPT_ATTRIBUTE.get(match.group(1), ""), "")
    return f"\n{kept}\n" if kept else "\n"


def _groups(tokens: Sequence[Token]) -> Iterator[tuple[Token, Sequence[Token]]]:
    """Each token of the outermost level with the tokens between it and its closing token."""
    i = 0
    while i < len(tokens):
        token = tokens[i]
        if token.nesting != 1:
            yield token, ()
            i += 1
            continue
        j = i + 1
        # The first closing token at the same level closes this one: nested ones sit deeper.
        while not (tokens[j].nesting == -1 and tokens[j].level == token.level):
            j += 1
        yield token, tokens[i + 1 : j]
        i = j + 1


class _Builder:
    """Turns the token stream into blocks, keeping the heading path as headings go by."""

    def __init__(self) -> None:
        self.blocks: list[Block] = []
        self.first_h1 = ""
        self._tracker = HeadingTracker()

    def add(self, tokens: Sequence[Token]) -> None:
        for number, (token, inner) in enumerate(_groups(tokens)):
            if number % 500 == 0:
                check_time_budget()  # a page of many blocks stops at the ingest's time limit
            if token.type == "heading_open":
                self._heading(int(token.tag[1]), inner[0])
            elif token.type == "table_open":
                self._table(_table(inner))
            elif token.type == "html_block":
                self._html_block(token.content)
            elif token.type in ("fence", "code_block"):
                self._emit("code", _code(token))
            elif token.type in ("bullet_list_open", "ordered_list_open"):
                self._emit("list", _render(token, inner))
            elif token.type in ("paragraph_open", "blockquote_open"):
                text = _render(token, inner)
                self._emit("text", text if token.type == "paragraph_open" else clean_text(text))

    def _heading(self, level: int, inline: Token) -> None:
        title = strip_typed_number(_inline(inline, links=False))
        if not title:
            return
        section, path = self._tracker.open(level, title)
        if level == 1 and not self.first_h1:
            self.first_h1 = title
        self.blocks.append(
            Block(kind="heading", text=title, heading_path=path, section=section, level=level)
        )

    def _emit(self, kind: BlockKind, text: str, table: Table | None = None) -> None:
        if text.strip():
            path, section = self._tracker.path, self._tracker.section
            self.blocks.append(
                Block(kind=kind, text=text, heading_path=path, section=section, table=table)
            )

    def _table(self, table: Table) -> None:
        if any(table.header) or any(any(row) for row in table.rows):
            self._emit("table", table.to_markdown(), table)

    def _html_block(self, html: str) -> None:
        """Raw HTML: a simple <table> becomes a Table, everything else Markdown text."""
        _check_depth(html)
        soup = BeautifulSoup(html, "html.parser")
        tables = soup.find_all("table")
        table = _simple_html_table(tables[0]) if len(tables) == 1 else None
        if table is not None:
            tables[0].extract()
            self._emit("text", _html_to_text(str(soup), links=True))
            self._table(table)
        else:
            self._emit("text", _html_to_text(html, links=True))


def _render(token: Token, inner: Sequence[Token]) -> str:
    """Markdown-ish text of one block-level group, used inside lists and quotes."""
    kind = token.type
    if kind in ("paragraph_open", "heading_open"):
        return _inline(inner[0], links=kind == "paragraph_open")
    if kind in ("bullet_list_open", "ordered_list_open"):
        return _render_list(token, inner)
    if kind == "table_open":
        return _table(inner).to_markdown()
    if kind in ("fence", "code_block"):
        return _code(token)
    if kind == "html_block":
        return _html_to_text(token.content, links=True)
    parts = [_render(t, i) for t, i in _groups(inner)]  # blockquote, list item
    separator = "\n" if kind == "list_item_open" else "\n\n"
    return separator.join(p for p in parts if p.strip())


def _render_list(token: Token, inner: Sequence[Token]) -> str:
    """A list as Markdown: "- " or "N. " items, nested lists indented under their item."""
    ordered = token.type == "ordered_list_open"
    number = int(token.attrGet("start") or 1)
    lines: list[str] = []
    for item, item_inner in _groups(inner):
        marker = f"{number}. " if ordered else "- "
        number += 1
        text = _render(item, item_inner)
        if not text.strip():
            continue
        first, *rest = text.split("\n")
        lines.append(marker + first)
        # Continuation lines and nested lists go under the item's text, as Markdown wants.
        lines += [(" " * len(marker) + line) if line else "" for line in rest]
    return "\n".join(lines)


def _code(token: Token) -> str:
    language = token.info.strip().split(" ")[0] if token.type == "fence" else ""
    body = token.content.rstrip("\n")
    return f"```{language}\n{body}\n```" if body.strip() else ""


def _table(inner: Sequence[Token]) -> Table:
    """A pipe table's header and rows from its tokens; cells reduced to plain text."""
    rows: list[list[str]] = []
    for token in inner:
        if token.type == "tr_open":
            rows.append([])
        elif token.type == "inline":
            rows[-1].append(_cell(token))
    return Table(header=rows[0] if rows else [], rows=rows[1:])


def _cell(inline: Token) -> str:
    # A cell is one line of the pipe table: blank lines between HTML paragraphs carry nothing.
    return re.sub(r"\n{2,}", "\n", _inline(inline, links=False))


def _inline(token: Token, *, links: bool) -> str:
    """The text of an inline token: emphasis dropped, entities and escapes already decoded."""
    children = token.children or []
    if any(c.type == "html_inline" and not _BR.match(c.content) for c in children):
        # Inline HTML (GitBook puts <p>, <ul>, <strong> into cells) is best read as HTML.
        return _html_to_text(_MD.renderer.renderInline(children, _MD.options, {}), links=links)
    parts: list[str] = []
    href, link_start = "", 0
    for child in children:
        if child.type in ("text", "code_inline", "text_special"):
            parts.append(child.content)
        elif child.type in ("softbreak", "hardbreak", "html_inline"):
            parts.append("\n")  # html_inline here is always <br>
        elif child.type == "link_open":
            href = child.attrGet("href") or ""
            link_start = len(parts)
        elif child.type == "link_close" and links and _ABSOLUTE_URL.match(href):
            label = "".join(parts[link_start:]).strip()
            if label and label != href:
                parts[link_start:] = [f"[{label}]({href})"]
    return clean_text("".join(parts))


def _check_depth(html: str) -> None:
    """ParseError when ``html`` nests elements deeper than ``MAX_HTML_DEPTH`` (an element
    left open counts as open: the count may only be too high, never too low)."""
    depth = 0
    for tag in _HTML_TAG.finditer(html):
        closing, name = tag.group(1), tag.group(2).lower()
        if name in _VOID_TAGS or tag.group(0).endswith("/>"):
            continue
        depth = max(0, depth - 1) if closing else depth + 1
        if depth > MAX_HTML_DEPTH:
            raise ParseError(
                f"The page nests HTML elements more than {MAX_HTML_DEPTH} deep; it was not read"
            )


def _html_to_text(html: str, *, links: bool) -> str:
    """Raw HTML as Markdown text, with emphasis, images and (optionally) links dropped."""
    _check_depth(html)
    strip = _HTML_STRIP_ALWAYS if links else [*_HTML_STRIP_ALWAYS, "a"]
    text = markdownify(
        html,
        strip=strip,
        bullets="-",
        heading_style="ATX",
        escape_underscores=False,
        escape_asterisks=False,
    )
    if links:
        text = _RELATIVE_LINK.sub(r"\1", text)  # a path inside the wiki means nothing to a reader
    return clean_text(text.replace("\\_", "_"))


def _simple_html_table(table: Tag) -> Table | None:
    """A Table from an HTML <table> without merged or nested cells, else None."""
    cells = table.find_all(["td", "th"])
    spans = (str(c.get(name) or "1") for c in cells for name in ("rowspan", "colspan"))
    if table.find("table") or any(span != "1" for span in spans):
        return None
    rows = [[_cell_html(cell) for cell in tr.find_all(["td", "th"])] for tr in table.find_all("tr")]
    rows = [row for row in rows if row]
    return Table(header=rows[0], rows=rows[1:]) if rows else None


def _cell_html(cell: Tag) -> str:
    inner = cell.decode_contents()
    return re.sub(r"\n{2,}", "\n", _html_to_text(inner, links=False))
