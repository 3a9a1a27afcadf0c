"""Markdown -> sanitised HTML, server-side (answers, document viewer). Pure helpers, no Django."""

from __future__ import annotations

import re
from functools import cache

import nh3
from markdown_it import MarkdownIt
from markdown_it.rules_inline import StateInline

ALLOWED_TAGS = {
    "p",
    "br",
    "strong",
    "em",
    "code",
    "pre",
    "ul",
    "ol",
    "li",
    "blockquote",
    "table",
    "thead",
    "tbody",
    "tr",
    "th",
    "td",
    "h1",
    "h2",
    "h3",
    "h4",
    "h5",
    "h6",
    "a",
    "hr",
    "del",
    "sup",
    "sub",
    "span",
    "mark",
}
ALLOWED_ATTRIBUTES = {
    "a": {"href", "title"},
    "th": {"align"},
    "td": {"align"},
    "code": {"class"},
    "span": {"class"},
    "mark": {"class"},
}


_LINE_BREAK_TAG = re.compile(r"<br\s*/?>", re.IGNORECASE)


def _line_break_tag(state: StateInline, silent: bool) -> bool:
    """``<br>`` (``<br/>``, ``<br />``) read as a line break, the one tag let through: a pipe
    table's cell holds its line breaks so (``knowledge.parsing.base``), and so do LLM answers.
    Nothing else of the tag is kept (an attribute makes it text), and nh3 cleans the output."""
    match = _LINE_BREAK_TAG.match(state.src, state.pos)
    if match is None:
        return False
    if not silent:
        state.push("hardbreak", "br", 0)
    state.pos = match.end()
    return True


def break_tags_as_spaces(text: str) -> str:
    """A passage shown as plain text (a source's quote): its line break tags read as spaces, a
    table row's cells stay on the row's line."""
    return _LINE_BREAK_TAG.sub(" ", text)


@cache
def _parser() -> MarkdownIt:
    # "html": False: raw HTML in documents or answers is shown as text, never run as markup,
    # but for a bare line break tag.
    parser = MarkdownIt("commonmark", {"html": False, "linkify": False, "breaks": True})
    parser.enable("table")
    parser.inline.ruler.before("autolink", "line_break_tag", _line_break_tag)
    return parser


def render_markdown(text: str) -> str:
    """HTML for ``text``; links get rel="noopener noreferrer", scripts and styles never pass."""
    html = _parser().render(text or "")
    return nh3.clean(
        html,
        tags=ALLOWED_TAGS,
        attributes=ALLOWED_ATTRIBUTES,
        url_schemes={"http", "https", "mailto"},
        link_rel="noopener noreferrer",
    )
