"""Plain text (.txt): the encoding found, paragraphs split on blank lines.

No hierarchy is inferred from lines such as "1. Введение": in plain text a typed number is as
likely to start a list item as a section, and a wrong section tree is worse than none.
"""

from __future__ import annotations

import re
from pathlib import PurePosixPath

import charset_normalizer

from knowledge.parsing.base import Block, ParsedDocument, ParseError, clean_text, detect_language

NOT_TEXT = "The file is not a text document"
NO_TEXT = "The document contains no text"

# Byte order marks, longest first: the UTF-32 LE mark starts with the UTF-16 LE one.
_BOMS = (
    (b"\xff\xfe\x00\x00", "utf-32"),
    (b"\x00\x00\xfe\xff", "utf-32"),
    (b"\xef\xbb\xbf", "utf-8-sig"),
    (b"\xff\xfe", "utf-16"),
    (b"\xfe\xff", "utf-16"),
)
_RUSSIAN_CODE_PAGES = ("cp1251", "koi8-r", "cp866")
_SAMPLE_BYTES = 64 * 1024
_CYRILLIC = re.compile(r"[А-Яа-яЁё]")
_CYRILLIC_LOWER = re.compile(r"[а-яё]")
# A word with Latin and Cyrillic letters together: what Western text read as CP1251 looks like
# ("cafй"), and what real Russian text almost never contains.
_MIXED_WORD = re.compile(r"\b(?=\w*[A-Za-z])(?=\w*[А-Яа-яЁё])\w+\b")
_CYRILLIC_WORD = re.compile(r"\b\w*[А-Яа-яЁё]\w*\b")
# Control characters other than tab, line feed, form feed and carriage return, and the
# private use area: many of them mean a binary file that happened to decode.
_CONTROL = re.compile(r"[\x00-\x08\x0b\x0e-\x1f\x7f-\x9f\ue000-\uf8ff\ufffd]")
# Share of control characters (other than tab, newlines, form feed) above which the bytes are
# taken for a binary file that happens to decode.
_MAX_CONTROL_SHARE = 0.01


def decode_text(data: bytes) -> tuple[str, str]:
    """The text of ``data`` and the encoding it was read with; ParseError for binary data.

    The order matters: a byte order mark is certain; then strict UTF-8, which almost never
    decodes non-UTF-8 bytes by accident; then the Russian code pages (CP1251 first, the usual
    one here) when one of them turns the bytes into ordinary Russian: on short texts
    statistical detectors take them for rarer code pages, even Japanese ones; only then
    charset-normalizer's guess.
    """
    for bom, encoding in _BOMS:
        if data.startswith(bom):
            try:
                return _checked(data.decode(encoding)), encoding
            except UnicodeDecodeError as exc:
                raise ParseError(NOT_TEXT) from exc
    if b"\x00" in data:
        raise ParseError(NOT_TEXT)
    try:
        return _checked(data.decode("utf-8")), "utf-8"
    except UnicodeDecodeError:
        pass
    for encoding in _RUSSIAN_CODE_PAGES:
        if _reads_as_russian(data, encoding):
            return _checked(data.decode(encoding)), encoding
    best = charset_normalizer.from_bytes(data).best()
    if best is None:
        raise ParseError(NOT_TEXT)
    return _checked(str(best)), best.encoding


def _reads_as_russian(data: bytes, encoding: str) -> bool:
    """True when the non-ASCII bytes decode in ``encoding`` to ordinary Russian words.

    That is: mostly Cyrillic, mostly lower case (KOI8-R read as CP1251 is Cyrillic too, but
    mostly capitals, and the other way round), and seldom mixed with Latin inside a word
    (CP1252 read as CP1251 is).
    """
    # The encoding is the same throughout; a sample keeps this quick on a long file.
    text = data[:_SAMPLE_BYTES].decode(encoding, errors="replace")
    non_ascii = sum(1 for ch in text if ord(ch) > 127)
    cyrillic = len(_CYRILLIC.findall(text))
    if non_ascii == 0 or cyrillic < 0.9 * non_ascii:
        return False
    if len(_CYRILLIC_LOWER.findall(text)) <= cyrillic / 2:
        return False
    return len(_MIXED_WORD.findall(text)) <= 0.1 * len(_CYRILLIC_WORD.findall(text))


def _checked(text: str) -> str:
    """``text`` unless it is full of control characters (a binary file that decoded)."""
    if "\x00" in text:
        raise ParseError(NOT_TEXT)
    if text and len(_CONTROL.findall(text)) / len(text) > _MAX_CONTROL_SHARE:
        raise ParseError(NOT_TEXT)
    return text


def title_from_filename(filename: str) -> str:
    """ "docs/Guide v2.txt" -> "Guide v2"; Windows separators too."""
    return PurePosixPath(filename.replace("\\", "/")).stem or filename


class TextParser:
    """Parser for plain text files: one "text" block per paragraph."""

    def parse(self, data: bytes, *, filename: str) -> ParsedDocument:
        """Decode ``data``, split it into paragraphs on blank lines."""
        text, encoding = decode_text(data)
        text = text.replace("\r\n", "\n").replace("\r", "\n")
        paragraphs = [clean_text(p) for p in re.split(r"\n[ \t\f\v]*\n", text)]
        blocks = [Block(kind="text", text=p) for p in paragraphs if p]
        if not blocks:
            raise ParseError(NO_TEXT)
        return ParsedDocument(
            title=title_from_filename(filename),
            blocks=blocks,
            language=detect_language("\n".join(b.text for b in blocks)),
            metadata={"filename": filename, "encoding": encoding},
        )
