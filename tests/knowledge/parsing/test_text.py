"""TextParser: encodings found, paragraphs split on blank lines, binary files refused."""

from __future__ import annotations

import pytest

from knowledge.parsing.base import ParsedDocument, ParseError
from knowledge.parsing.text import TextParser, decode_text

RUSSIAN = "1. Введение\n\nПрограмма испытаний описывает порядок проверки.\nВторая строка абзаца.\n"


def parse(data: bytes, filename: str = "notes/readme.txt") -> ParsedDocument:
    return TextParser().parse(data, filename=filename)


def test_paragraphs_split_on_blank_lines_without_inferring_sections():
    doc = parse(b"2.1 Scope\n\nFirst   paragraph,\nsame paragraph.\n \n\n\nSecond one.\r\n")
    assert [(b.kind, b.text) for b in doc.blocks] == [
        ("text", "2.1 Scope"),
        ("text", "First paragraph,\nsame paragraph."),
        ("text", "Second one."),
    ]
    assert all(b.heading_path == [] and b.section == "" for b in doc.blocks)
    assert (doc.title, doc.language, doc.metadata["encoding"]) == ("readme", "english", "utf-8")


@pytest.mark.parametrize(
    ("data", "encoding"),
    [
        (RUSSIAN.encode("utf-8"), "utf-8"),
        (b"\xef\xbb\xbf" + RUSSIAN.encode("utf-8"), "utf-8-sig"),
        (RUSSIAN.encode("utf-16"), "utf-16"),  # with its byte order mark
        (RUSSIAN.encode("utf-16-be"), None),  # no mark: refused below, see the NUL test
        (RUSSIAN.encode("cp1251"), "cp1251"),
    ],
)
def test_russian_text_reads_the_same_in_each_encoding(data, encoding):
    if encoding is None:
        with pytest.raises(ParseError):
            parse(data)
        return
    doc = parse(data)
    assert [b.text for b in doc.blocks] == [
        "1. Введение",
        "Программа испытаний описывает порядок проверки.\nВторая строка абзаца.",
    ]
    assert doc.language == "russian"
    assert doc.metadata["encoding"] == encoding


def test_short_cp1251_text_is_not_taken_for_another_cyrillic_code_page():
    # Few bytes give a statistical detector little to go on: charset-normalizer alone says CP1125.
    assert decode_text("Привет, мир".encode("cp1251")) == ("Привет, мир", "cp1251")


def test_western_text_in_cp1252_is_not_read_as_cp1251():
    text, encoding = decode_text("Le café est très bon, déjà vu à côté.".encode("cp1252"))
    assert encoding != "cp1251"
    assert "café" in text


@pytest.mark.parametrize("encoding", ["koi8-r", "cp866"])
def test_short_text_in_the_other_russian_code_pages_is_read_right(encoding):
    # charset-normalizer alone takes this KOI8-R line for Shift JIS.
    line = "Проверка качества программного обеспечения"
    assert decode_text(line.encode(encoding)) == (line, encoding)


@pytest.mark.parametrize("data", [b"", b"   \n\n\t\r\n", b"\xef\xbb\xbf\n"])
def test_empty_text_is_refused_in_plain_words(data):
    with pytest.raises(ParseError, match="^The document contains no text$"):
        parse(data)


@pytest.mark.parametrize(
    "data",
    [
        b"PK\x03\x04\x14\x00\x00\x00\x08\x00" + bytes(range(256)) * 4,  # a zip's bytes
        b"text with a NUL\x00 byte inside",
        bytes([1, 2, 3, 4, 5, 6, 7, 8, 14, 15, 16]) * 20 + b"some words",
    ],
)
def test_binary_data_is_refused_as_not_a_text_document(data):
    with pytest.raises(ParseError, match="^The file is not a text document$"):
        parse(data)
