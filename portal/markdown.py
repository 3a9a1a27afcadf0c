"""Markdown -> sanitised HTML, server-side (answers, document viewer). Pure helpers, no Django."""

from __future__ import annotations

from functools import cache

import nh3
from markdown_it import MarkdownIt

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


@cache
def _parser() -> MarkdownIt:
    # "html": False: raw HTML in documents or answers is shown as text, never run as markup.
    return MarkdownIt("commonmark", {"html": False, "linkify": False, "breaks": True}).enable(
        "table"
    )


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
