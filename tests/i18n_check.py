"""The style check of the interface's language: English text of our own message catalog on a
page rendered in Russian.

Every msgid of ``locale/ru/LC_MESSAGES/django.po`` is cut into its literal fragments (markup,
``<code>`` and placeholders taken out); a fragment the Russian translation does not keep as it
is (``LLM``, ``PDF``, ``CSV``) must not appear on a Russian page. It finds a msgid whose ``ru``
msgstr is missing or empty (the page falls back to the English msgid), a translation compiled
out of the catalog, and a lazy string forced into English too early. Lowercase one-word msgids
("answer", "none") are left out: the same words are also data (outcome codes, config keys).
"""

from __future__ import annotations

import html
import re
from functools import cache
from html.parser import HTMLParser
from pathlib import Path

import polib

ROOT = Path(__file__).resolve().parent.parent
RU_CATALOG = ROOT / "locale" / "ru" / "LC_MESSAGES" / "django.po"

_PLACEHOLDER = re.compile(r"%\(\w+\)[-#0 +]*\d*(?:\.\d+)?[sdfir]|%%|%[sd]")
_CODE = re.compile(r"<code>.*?</code>", re.S)
_TAG = re.compile(r"<[^>]+>")
_LETTERS = re.compile(r"[A-Za-z]{2,}")
_EDGES = " \t\n.,:;·—–-()[]“”«»\"'…→←↑↓#/?!%+−~×✓"
# Attributes a person reads or a screen reader speaks.
_SPOKEN = ("placeholder", "aria-label", "title", "alt")
# Not interface text: code, and what the page marks translate="no" (documents, answers, quotes).
_SKIPPED = {"script", "style", "code", "pre", "kbd", "textarea"}
_VOID = {"area", "base", "br", "col", "embed", "hr", "img", "input", "link", "meta", "source",
         "track", "wbr"}  # fmt: skip


def _fragments(text: str) -> list[str]:
    text = html.unescape(_TAG.sub(" ", _CODE.sub(" ", text)))
    found = []
    for piece in _PLACEHOLDER.split(text):
        piece = " ".join(piece.split()).strip(_EDGES)
        if not _LETTERS.search(piece):
            continue
        if " " not in piece and not piece[0].isupper():
            continue
        found.append(piece)
    return found


@cache
def english_fragments(catalog: Path = RU_CATALOG) -> dict[str, str]:
    """Fragment -> the msgid it comes from, for every fragment a Russian page must not show."""
    fragments: dict[str, str] = {}
    for entry in polib.pofile(str(catalog)):
        if entry.obsolete:
            continue
        if entry.msgid_plural:
            translations = [t for t in entry.msgstr_plural.values() if t]
        else:
            translations = [entry.msgstr] if entry.msgstr else []
        if "fuzzy" in entry.flags:
            translations = []  # compiled out: the page shows the English msgid
        for english in filter(None, (entry.msgid, entry.msgid_plural)):
            for piece in _fragments(english):
                if any(piece in translation for translation in translations):
                    continue  # the Russian text keeps it (a name, an abbreviation)
                fragments.setdefault(piece, entry.msgid)
    return fragments


class _ReadableText(HTMLParser):
    """The text a reader sees or hears: text nodes and spoken attributes, without code or data."""

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.parts: list[str] = []
        self._open: list[tuple[str, bool]] = []  # (tag, skipped) of each open element

    @property
    def _skipping(self) -> bool:
        return any(skipped for _tag, skipped in self._open)

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        values = dict(attrs)
        skipped = tag in _SKIPPED or values.get("translate") == "no"
        if tag not in _VOID:
            self._open.append((tag, skipped))
        if self._skipping or (tag in _VOID and skipped) or values.get("type") == "hidden":
            return
        for name in _SPOKEN:
            if values.get(name):
                self.parts.append(values[name] or "")
        if tag == "input" and values.get("type") in ("submit", "button") and values.get("value"):
            self.parts.append(values["value"] or "")

    def handle_endtag(self, tag: str) -> None:
        for depth in range(len(self._open) - 1, -1, -1):
            if self._open[depth][0] == tag:
                del self._open[depth:]
                break

    def handle_data(self, data: str) -> None:
        if not self._skipping:
            self.parts.append(data)


def readable_text(page_html: str) -> str:
    parser = _ReadableText()
    parser.feed(page_html)
    return "\n".join(" ".join(part.split()) for part in parser.parts if part.strip())


def untranslated(page_html: str, catalog: Path = RU_CATALOG) -> list[str]:
    """The English catalog fragments found on the page, each with its msgid."""
    text = readable_text(page_html)
    found = {
        piece: msgid
        for piece, msgid in english_fragments(catalog).items()
        if re.search(rf"(?<![A-Za-z]){re.escape(piece)}(?![A-Za-z])", text)
    }
    # "Ask" inside "Ask the knowledge base" is the same untranslated string: name the longer.
    longest = [p for p in found if not any(p != q and p in q for q in found)]
    return [f"{piece!r} (msgid {found[piece]!r})" for piece in sorted(longest)]
